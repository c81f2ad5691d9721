package notifier_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

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
