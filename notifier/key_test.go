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
)

func pending(t *testing.T, n *notifier.Notifier, queue string) int {
	t.Helper()
	st, err := n.Store().Stats(t.Context(), queue, 10)
	require.NoError(t, err)
	return st.Pending
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

// A Broadcast repeated with the same key returns the first one's id and
// fans out nothing; Notify keys and Broadcast keys do not collide.
func TestBroadcastKeyIdempotent(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	chats := []int64{1, 2, 3, 4}
	id, err := n.Broadcast(ctx, chats, notifier.Message{Text: "hello", Key: "upd:99"})
	require.NoError(t, err)
	again, err := n.Broadcast(ctx, append(chats, 5, 6), notifier.Message{Text: "hello", Key: "upd:99"})
	require.NoError(t, err)
	require.Equal(t, id, again)
	require.Equal(t, 4, pending(t, n, tgjob.QueueNotify), "fanned out once")
	p, err := n.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, notifier.Progress{ID: id, Total: 4, Queued: 4, Failed: map[string]int{}, Remaining: 4}, p)

	// The same key string for a Notify is a different key.
	ids, err := n.Notify(ctx, 1, notifier.Message{Text: "reply", Key: "upd:99"})
	require.NoError(t, err)
	require.Len(t, ids, 1)
	// A broadcast without a key, or with another one, fans out again.
	other, err := n.Broadcast(ctx, chats, notifier.Message{Text: "hello"})
	require.NoError(t, err)
	require.NotEqual(t, id, other)
	third, err := n.Broadcast(ctx, chats, notifier.Message{Text: "hello", Key: "upd:100"})
	require.NoError(t, err)
	require.NotEqual(t, id, third)
	require.Equal(t, 12, pending(t, n, tgjob.QueueNotify))
}
