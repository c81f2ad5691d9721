package notifier_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

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
