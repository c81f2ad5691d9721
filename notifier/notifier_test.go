package notifier_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

func newNotifier(t *testing.T) *notifier.Notifier {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	s, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, s, notifier.Config{})
	require.NoError(t, err)
	return n
}

func checkParts(t *testing.T, text string, parts []string, max int) {
	t.Helper()
	require.Equal(t, text, strings.Join(parts, ""))
	for _, p := range parts {
		require.True(t, utf8.ValidString(p))
		require.LessOrEqual(t, tgtext.UTF16Len(p), max)
		require.NotEmpty(t, p)
	}
}

func TestSplitLimits(t *testing.T) {
	t.Parallel()
	a4096 := strings.Repeat("a", 4096)
	require.Equal(t, []string{a4096}, notifier.Split(a4096, 0))
	over := strings.Repeat("a", 4095) + "😀"
	require.Equal(t, []string{strings.Repeat("a", 4095), "😀"}, notifier.Split(over, 0))
	require.Empty(t, notifier.Split("", 0))
	require.Empty(t, notifier.Split(" \n ", 0))
}

func TestSplitPrefersLineBreaksThenSpaces(t *testing.T) {
	t.Parallel()
	text := "first line\nsecond words here and more"
	parts := notifier.Split(text, 20)
	checkParts(t, text, parts, 20)
	require.Equal(t, "first line\n", parts[0])
	for _, p := range parts[1 : len(parts)-1] {
		require.True(t, strings.HasSuffix(p, " "), "cut after a space: %q", p)
	}
}

func TestSplitKeepsGraphemeClusters(t *testing.T) {
	t.Parallel()
	family := "👩‍👩‍👧‍👦" // 11 UTF-16 units, one cluster
	text := strings.Repeat(family, 10)
	parts := notifier.Split(text, 25)
	checkParts(t, text, parts, 25)
	for _, p := range parts {
		require.Equal(t, 0, len(strings.ReplaceAll(p, family, "")), "whole clusters only: %q", p)
	}
	flags := strings.Repeat("🇺🇦🇯🇵", 50)
	checkParts(t, flags, notifier.Split(flags, 7), 7)
	for _, p := range notifier.Split(flags, 7) {
		require.Equal(t, 0, utf8.RuneCountInString(p)%2, "flags are pairs of regional indicators")
	}
}

func TestSplitMixed10000(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	pieces := []string{"漢字かな交じり文", "👩‍👩‍👧‍👦", "🇺🇦", "e\u0301", "한국어", "👍🏽", "\r\n", "plain words ", "🏳️‍🌈"}
	for i := 0; utf8.RuneCountInString(b.String()) < 10000; i++ {
		b.WriteString(pieces[i%len(pieces)])
	}
	text := b.String()
	parts := notifier.Split(text, 0)
	require.Greater(t, len(parts), 2)
	checkParts(t, text, parts, tgtext.MaxTextUnits)
}

// A single grapheme cluster over the limit (a letter with 5,000 combining
// marks) is cut at rune boundaries, without panicking.
func TestSplitPathologicalCluster(t *testing.T) {
	t.Parallel()
	zalgo := "x" + strings.Repeat("\u0301", 5000)
	text := "before " + zalgo + " after"
	parts := notifier.Split(text, 0)
	checkParts(t, text, parts, tgtext.MaxTextUnits)
	require.Len(t, parts, 4)
	require.Equal(t, "before ", parts[0])
}

func TestNotifyValidatesAndEnqueues(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	_, err := n.Notify(ctx, 1, notifier.Message{Text: "  "})
	require.ErrorIs(t, err, notifier.ErrEmptyText)
	require.ErrorIs(t, err, notifier.ErrInvalid)
	_, err = n.Notify(ctx, 0, notifier.Message{Text: "x"})
	require.ErrorIs(t, err, notifier.ErrInvalid)
	_, err = n.Notify(ctx, 1, notifier.Message{Text: "\xff"})
	require.ErrorIs(t, err, notifier.ErrInvalid)
	_, err = n.Notify(ctx, 1, notifier.Message{Text: "x", ParseMode: "BBCode"})
	require.ErrorIs(t, err, notifier.ErrInvalid)

	ids, err := n.Notify(ctx, 7, notifier.Message{Text: strings.Repeat("b", 5000), Class: notifier.Notification, ReplyTo: 3})
	require.NoError(t, err)
	require.Len(t, ids, 2)
	st, err := n.Store().Stats(ctx, tgjob.QueueNotify, 10)
	require.NoError(t, err)
	require.Equal(t, 2, st.Pending)
	require.Equal(t, "7", st.Top[0].Group)
	c, err := n.Store().Claim(ctx, lanes.ClaimRequest{Queues: tgjob.Queues(), Lease: time.Second, Max: 10})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1, "ordered lane, weight 1")
	j, err := tgjob.Decode(c.Jobs[0].Payload)
	require.NoError(t, err)
	require.Equal(t, tgjob.Job{V: 1, Chat: 7, Text: strings.Repeat("b", 4096), ReplyTo: 3, Part: 1, Parts: 2}, j)
}

func TestNotifyAndBroadcastFollowChatState(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	require.NoError(t, n.Chats().MarkInactive(ctx, 5))
	_, err := n.Notify(ctx, 5, notifier.Message{Text: "x", Class: notifier.Notification})
	require.ErrorIs(t, err, notifier.ErrInactive)
	_, err = n.Notify(ctx, 5, notifier.Message{Text: "x", Class: notifier.Reply})
	require.NoError(t, err, "a reply still goes: the chat just talked to the bot")
	require.NoError(t, n.Chats().MarkActive(ctx, 5))
	_, err = n.Notify(ctx, 5, notifier.Message{Text: "x", Class: notifier.Notification})
	require.NoError(t, err)

	require.NoError(t, n.Chats().SetAlias(ctx, -10, -1000000000010))
	to, err := n.Chats().Resolve(ctx, -10)
	require.NoError(t, err)
	require.Equal(t, int64(-1000000000010), to)
	_, err = n.Notify(ctx, -10, notifier.Message{Text: "to the supergroup"})
	require.NoError(t, err)
	st, err := n.Store().Stats(ctx, tgjob.QueueReply, 10)
	require.NoError(t, err)
	groups := map[string]int{}
	for _, l := range st.Top {
		groups[l.Group] = l.Depth
	}
	require.Equal(t, map[string]int{"5": 1, "-1000000000010": 1}, groups)

	// Broadcast resolves aliases, dedupes and skips inactive chats.
	require.NoError(t, n.Chats().MarkInactive(ctx, 6))
	id, err := n.Broadcast(ctx, []int64{-10, -1000000000010, 6, 8, 8}, notifier.Message{Text: "hi"})
	require.NoError(t, err)
	p, err := n.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, notifier.Progress{ID: id, Total: 3, Queued: 2, Failed: map[string]int{"inactive": 1}, Remaining: 2}, p)
	_, err = n.Progress(ctx, "bc_01ARZ3NDEKTSV4RRFFQ69G5FAV")
	require.ErrorIs(t, err, notifier.ErrUnknownBroadcast)
	_, err = n.Progress(ctx, "nope")
	require.ErrorIs(t, err, notifier.ErrInvalid)
}

func TestStoreOptionsFromLimits(t *testing.T) {
	t.Parallel()
	// The options build a valid store; zero limits mean no rate options.
	c := valkeytest.Shared(t).Client(t)
	_, err := lanes.New(c, notifier.DefaultLimits().StoreOptions(3)...)
	require.NoError(t, err)
	_, err = lanes.New(c, notifier.Limits{}.StoreOptions(0)...)
	require.NoError(t, err)
}
