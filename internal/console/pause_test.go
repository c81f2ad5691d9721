package console_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestPauseAQueueOrAChatHoldsItsSendsUntilResumed: the Queues page pauses
// the notify queue (every process's claims skip it: a notification waits
// while replies still flow) and resumes it (the notification goes); the
// Chat page pauses one chat (its notification waits, another chat's goes)
// and resumes it. Each change is audited as the console and shown on its
// page; pausing twice says so.
func TestPauseAQueueOrAChatHoldsItsSendsUntilResumed(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	in := e.app.Store().Inspector()
	notify := func(chat int64, text string) {
		_, err := e.app.Notifier().Notify(ctx, chat, notifier.Message{Text: text, Class: notifier.Notification})
		require.NoError(t, err)
	}
	e.knownChats(7001, 3)
	got := func(chat int64) int { // the notifications received (not /start's answer)
		n := 0
		for _, m := range e.emu.Messages(chat) {
			if m.Text == "held by the queue's pause" || m.Text == "held by the chat's pause" || m.Text == "not held" {
				n++
			}
		}
		return n
	}
	pending := func() int {
		st, err := in.Stats(ctx, tgjob.QueueNotify, 0)
		require.NoError(t, err)
		return st.Pending
	}

	page := b.post("/queues/pause", url.Values{"queue": {"notify"}, "op": {"pause"}})
	text, ok := flash(t, page)
	require.True(t, ok, text)
	require.Equal(t, "⏸ Queue notify paused: nothing of it is sent until it is resumed.", text)
	require.Contains(t, page, `<h2>notify · <span class="bad">paused</span></h2>`)
	require.Contains(t, page, `id="resume-notify"`)
	text, _ = flash(t, b.post("/queues/pause", url.Values{"queue": {"notify"}, "op": {"pause"}}))
	require.Equal(t, "Queue notify is already paused.", text)
	paused, err := in.PausedQueues(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"notify": "paused by console"}, paused)

	notify(7001, "held by the queue's pause")
	require.Equal(t, "Chat 42: weight 1 (default 1), for replies and notifications alike.", e.ask("/weight 42"), "replies flow")
	time.Sleep(500 * time.Millisecond) // a running queue sends it in milliseconds
	require.Zero(t, got(7001), "the paused queue sent nothing")
	require.Equal(t, 1, pending())
	text, _ = flash(t, b.post("/queues/pause", url.Values{"queue": {"notify"}, "op": {"resume"}}))
	require.Equal(t, "▶️ Queue notify resumed.", text)
	require.Eventually(t, func() bool { return got(7001) == 1 }, wait, 10*time.Millisecond, "resumed: sent")

	page = b.post("/chat/pause", url.Values{"chat": {"7002"}, "op": {"pause"}})
	text, ok = flash(t, page)
	require.True(t, ok, text)
	require.Equal(t, "⏸ Chat 7002 paused: nothing is sent to it until it is resumed.", text)
	require.Contains(t, page, `id="resume-chat"`)
	notify(7002, "held by the chat's pause")
	notify(7003, "not held")
	require.Eventually(t, func() bool { return got(7003) == 1 }, wait, 10*time.Millisecond, "another chat's notification goes")
	time.Sleep(300 * time.Millisecond)
	require.Zero(t, got(7002), "the paused chat got nothing")
	text, _ = flash(t, b.post("/chat/pause", url.Values{"chat": {"7002"}, "op": {"resume"}}))
	require.Equal(t, "▶️ Chat 7002 resumed.", text)
	require.Eventually(t, func() bool { return got(7002) == 1 }, wait, 10*time.Millisecond, "resumed: sent")
	text, ok = flash(t, b.post("/chat/pause", url.Values{"chat": {"x7"}, "op": {"pause"}}))
	require.False(t, ok, "a bad chat id is refused")
	require.Equal(t, e.ask("/weight x7 5"), text, "with /weight's words")

	_, audit := b.get("/audit")
	for _, row := range []string{"<td>queue paused</td><td>notify</td>", "<td>queue resumed</td><td>notify</td>",
		"<td>chat paused</td><td>chat 7002</td>", "<td>chat resumed</td><td>chat 7002</td>"} {
		require.Contains(t, audit, "<td>console</td>"+row)
	}
}
