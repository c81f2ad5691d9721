package worker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Every chat receives its messages in enqueue order with 8 concurrent
// senders spread over 4 workers, with weights > 1 (claimed batches) and
// injected 502s and dropped connections on the way.
func TestOrderPerChatWithEightSenders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const chats, per = 20, 15
	for c := 1; c <= chats; c++ {
		if c%3 == 0 {
			require.NoError(t, e.store.SetWeight(e.ctx, tgjob.QueueReply, itoa(c), 4))
			require.NoError(t, e.store.SetWeight(e.ctx, tgjob.QueueNotify, itoa(c), 4))
		}
	}
	e.emu.InjectFault(tgemu.BadGateway().For("sendMessage").Times(15))
	e.emu.InjectFault(tgemu.DropConnection().For("sendMessage").Times(5))
	for i := range per {
		for c := 1; c <= chats; c++ {
			class := notifier.Reply
			if c%2 == 0 {
				class = notifier.Notification
			}
			e.notify(int64(c), fmt.Sprintf("c%d-%02d", c, i), class)
		}
	}
	for range 4 {
		cfg := e.config()
		cfg.Senders = 2
		cfg.Registerer = e.reg // shared: collectors are reused
		e.start(cfg)
	}
	for c := 1; c <= chats; c++ {
		msgs := e.waitMsgs(int64(c), per)
		want := make([]string, per)
		for i := range want {
			want[i] = fmt.Sprintf("c%d-%02d", c, i)
		}
		require.Equal(t, want, texts(msgs), "chat %d", c)
	}
	require.Empty(t, e.dead(tgjob.QueueReply))
	require.Empty(t, e.dead(tgjob.QueueNotify))
}

// Splitting end to end: parts of at most 4,096 UTF-16 units, in order, valid
// UTF-8, whose concatenation is the input.
func TestSplitDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.start(e.config())

	exact := strings.Repeat("a", 4096)
	e.notify(1, exact, notifier.Reply)
	require.Equal(t, []string{exact}, texts(e.waitMsgs(1, 1)))

	over := strings.Repeat("a", 4095) + "😀"
	e.notify(2, over, notifier.Reply)
	got := texts(e.waitMsgs(2, 2))
	require.Equal(t, []string{strings.Repeat("a", 4095), "😀"}, got)

	var b strings.Builder
	pieces := []string{"漢字かな交じり文", "👩‍👩‍👧‍👦", "🇺🇦", "e\u0301", "한국어 ", "👍🏽", "\n", "plain words ", "🏳️‍🌈", "中文字符"}
	for i := 0; utf8.RuneCountInString(b.String()) < 10000; i++ {
		b.WriteString(pieces[i%len(pieces)])
	}
	mixed := b.String()
	ids, err := e.n.Notify(e.ctx, 3, notifier.Message{Text: mixed})
	require.NoError(t, err)
	require.Greater(t, len(ids), 2)
	msgs := e.waitMsgs(3, len(ids))
	var joined strings.Builder
	for _, m := range msgs {
		require.LessOrEqual(t, tgtext.UTF16Len(m.Text), 4096)
		require.True(t, utf8.ValidString(m.Text))
		joined.WriteString(m.Text)
	}
	require.Equal(t, mixed, joined.String())
	t.Logf("10,000 mixed characters (%d UTF-16 units) arrived as %d parts", tgtext.UTF16Len(mixed), len(msgs))
}

// Broadcast progress: skipped inactive chats, a blocked chat (403) and the
// rest delivered; readable while running; remaining reaches 0.
func TestBroadcastProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	chats := make([]int64, 0, 40)
	for c := int64(100); c < 140; c++ {
		chats = append(chats, c)
	}
	require.NoError(t, e.n.Chats().MarkInactive(e.ctx, 100))
	require.NoError(t, e.n.Chats().MarkInactive(e.ctx, 101))
	e.emu.SetChatStatus(102, tgemu.ChatBlocked)
	e.notify(102, "queued before the broadcast", notifier.Notification)
	id, err := e.n.Broadcast(e.ctx, append(chats, 103, 104), notifier.Message{Text: "news"}) // duplicates dropped
	require.NoError(t, err)
	p, err := e.n.Progress(e.ctx, id)
	require.NoError(t, err)
	require.Equal(t, notifier.Progress{ID: id, Total: 40, Queued: 38, Failed: map[string]int{"inactive": 2}, Remaining: 38}, p)

	e.start(e.config())
	// Progress lives in Valkey, not in the emulator: poll it.
	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, id)
		return err == nil && p.Done()
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 37, p.Sent)
	require.Equal(t, map[string]int{"inactive": 2, "forbidden": 1}, p.Failed)
	require.Zero(t, p.Remaining)
	require.Equal(t, 37, e.emu.Stats().Sent)
}
