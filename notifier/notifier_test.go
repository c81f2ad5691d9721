package notifier_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

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
	st, err := n.Store().Inspector().Stats(ctx, tgjob.QueueNotify, 10)
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
	st, err := n.Store().Inspector().Stats(ctx, tgjob.QueueReply, 10)
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

// A Notify repeated with the same key (a handler re-run after a crash)
// enqueues nothing and returns the first call's ids, even after the first
// copies were sent and acked.
func TestNotifyKeyIdempotent(t *testing.T) {
	t.Parallel()
	// Unpaced (the parts are claimed one after another), split in parts.
	c := valkeytest.Shared(t).Client(t)
	s, err := notifier.NewStore(c, notifier.Limits{}, 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, s, notifier.Config{MaxUnits: 10})
	require.NoError(t, err)
	ctx := t.Context()
	msg := notifier.Message{Text: strings.Repeat("abcde ", 5), Key: "upd:41:0"}
	ids, err := n.Notify(ctx, 8, msg)
	require.NoError(t, err)
	parts := len(ids)
	require.Greater(t, parts, 1)
	again, err := n.Notify(ctx, 8, msg)
	require.NoError(t, err)
	require.Equal(t, ids, again)
	require.Equal(t, parts, pending(t, n, tgjob.QueueReply))

	// Deliver every part (acked: their jobs are gone), then repeat.
	for range parts {
		cl, err := s.Claim(ctx, lanes.ClaimRequest{Queues: tgjob.Queues(), Lease: time.Second, Max: 10})
		require.NoError(t, err)
		require.Len(t, cl.Jobs, 1)
		require.NoError(t, s.Ack(ctx, cl.Jobs[0].Lease))
	}
	again, err = n.Notify(ctx, 8, notifier.Message{Text: "different text, same key", Key: "upd:41:0"})
	require.NoError(t, err)
	require.Equal(t, ids, again)
	require.Zero(t, pending(t, n, tgjob.QueueReply), "not enqueued again")

	// Another key, or none, enqueues.
	other, err := n.Notify(ctx, 8, notifier.Message{Text: "x", Key: "upd:41:1"})
	require.NoError(t, err)
	require.NotEqual(t, ids[0], other[0])
	_, err = n.Notify(ctx, 8, notifier.Message{Text: "x"})
	require.NoError(t, err)
	require.Equal(t, 2, pending(t, n, tgjob.QueueReply))

	// Edit takes a key too.
	e1, err := n.Edit(ctx, 8, 5, notifier.Message{Text: "e", Key: "edit:1"})
	require.NoError(t, err)
	e2, err := n.Edit(ctx, 8, 5, notifier.Message{Text: "e", Key: "edit:1"})
	require.NoError(t, err)
	require.Equal(t, e1, e2)
	require.Equal(t, 3, pending(t, n, tgjob.QueueReply))

	_, err = n.Notify(ctx, 8, notifier.Message{Text: "x", Key: strings.Repeat("k", notifier.MaxKeyBytes+1)})
	require.ErrorIs(t, err, notifier.ErrInvalid)
}

// Edit enqueues one job of kind "edit" on the chat's lane (after aliases)
// of the reply queue, behind the chat's earlier replies.
func TestEditEnqueuesEditJob(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	require.NoError(t, n.Chats().SetAlias(ctx, -5, -1000000000005))
	first, err := n.Notify(ctx, -5, notifier.Message{Text: "before"})
	require.NoError(t, err)
	ids, err := n.Edit(ctx, -5, 12, notifier.Message{Text: "new <i>text</i>", ParseMode: "HTML", ReplyTo: 3, Silent: true})
	require.NoError(t, err)
	require.Len(t, ids, 1)
	require.Greater(t, ids[0], first[0], "minted after: behind the earlier reply on the lane")

	var got []tgjob.Job
	for range 2 {
		c, err := n.Store().Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueReply}, Lease: time.Second, Max: 10})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		require.Equal(t, "-1000000000005", c.Jobs[0].Group)
		j, err := tgjob.Decode(c.Jobs[0].Payload)
		require.NoError(t, err)
		got = append(got, j)
		require.NoError(t, n.Store().Ack(ctx, c.Jobs[0].Lease))
	}
	require.False(t, got[0].IsEdit())
	require.Equal(t, tgjob.Job{V: 1, Kind: tgjob.KindEdit, MessageID: 12, Chat: -5, Text: "new <i>text</i>", ParseMode: "HTML"}, got[1],
		"ReplyTo and Silent do not apply to an edit")
}

// EditLatest refuses what an edit refuses, plus a bad job ref and markup
// that is not JSON, writing nothing; a valid one is an edit job naming its
// message by ref, with Fresh set and the markup.
func TestEditLatestValidatesAndEnqueuesARefEdit(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	ref := lanes.NewMinter().New()
	for name, tc := range map[string]struct {
		ref lanes.JobID
		msg notifier.Message
	}{
		"bad ref":       {"nope", notifier.Message{Text: "x"}},
		"empty text":    {ref, notifier.Message{Text: " "}},
		"markup":        {ref, notifier.Message{Text: "x", Markup: "{not json"}},
		"too long text": {ref, notifier.Message{Text: strings.Repeat("y", tgtext.MaxTextUnits+1)}},
	} {
		_, _, err := n.EditLatest(ctx, 7, tc.ref, tc.msg)
		require.ErrorIs(t, err, notifier.ErrInvalid, name)
	}
	require.Zero(t, pending(t, n, tgjob.QueueReply))
	kb := `{"inline_keyboard":[[{"text":"🍎","callback_data":"a"}]]}`
	id, replaced, err := n.EditLatest(ctx, 7, ref, notifier.Message{Text: "v1", Markup: kb})
	require.NoError(t, err)
	require.False(t, replaced)
	again, replaced, err := n.EditLatest(ctx, 7, ref, notifier.Message{Text: "v2"})
	require.NoError(t, err)
	require.True(t, replaced)
	require.Equal(t, id, again)
	require.Equal(t, 1, pending(t, n, tgjob.QueueReply))
	c, err := n.Store().Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueReply}, Lease: time.Second, Max: 10})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)
	j, err := tgjob.Decode(c.Jobs[0].Payload)
	require.NoError(t, err)
	require.Equal(t, tgjob.Job{V: 1, Kind: tgjob.KindEdit, Ref: string(ref), Fresh: true, Chat: 7, Text: "v2"}, j, "the latest content, no markup")
}
