package admin

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestRequeueDeadReachesAPlainLetterBehindMoreCopiesThanABatch: /dlq
// requeue keeps a broadcast's dead copies dead, and since they stay the
// newest, it looks past them (up to requeueScan) for the letters it
// requeues: a plain message's dead letter older than a batch (dlqBatch) of
// dead copies is requeued, and the answer counts the copies kept. Read
// with the ids given, the same copies are kept too.
func TestRequeueDeadReachesAPlainLetterBehindMoreCopiesThanABatch(t *testing.T) {
	t.Parallel()
	ad := newAdmin(t)
	ctx := context.Background()
	in := ad.cfg.Outbound.Inspector()
	m := lanes.NewMinter()
	deadLane := func(group string, payloads ...string) []lanes.JobID {
		t.Helper()
		items := make([]lanes.Item, len(payloads))
		for i, p := range payloads {
			items[i] = lanes.Item{Group: group, ID: m.New(), Payload: []byte(p)}
		}
		_, err := ad.cfg.Outbound.Enqueue(ctx, tgjob.QueueNotify, items)
		require.NoError(t, err)
		ids, err := in.DeadLane(ctx, tgjob.QueueNotify, group, "forbidden")
		require.NoError(t, err)
		require.Len(t, ids, len(payloads))
		return ids
	}
	plain := deadLane("7", `{"v":1,"chat":7,"text":"plain"}`)
	time.Sleep(5 * time.Millisecond) // the copies are dead-lettered later: newer
	copies := make([]string, dlqBatch+5)
	for i := range copies {
		copies[i] = fmt.Sprintf(`{"v":1,"chat":%d,"text":"copy","bc":"bc_01JTESTBROADCAST0000000000"}`, 100+i)
	}
	copyIDs := deadLane("42", copies...)

	got, err := ad.RequeueDead(ctx, WhoConsole, DeadFilter{}, nil)
	require.NoError(t, err)
	require.Equal(t, "✅ Requeued 1 dead letter (reply 0, notify 1). 1005 broadcast copies kept dead: "+dlqCopiesNote+" "+dlqUpdatesNote, got)
	st, err := in.Stats(ctx, tgjob.QueueNotify, 0)
	require.NoError(t, err)
	require.Equal(t, dlqBatch+5, st.Dead, "the copies stay dead")
	require.Equal(t, 1, st.Pending, "the plain letter is back on its lane")
	pending, err := ad.PendingJobs(ctx, tgjob.QueueNotify, "7", "")
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, plain[0], pending[0].ID)

	ids := []string{string(copyIDs[0]), string(copyIDs[1])}
	got, err = ad.RequeueDead(ctx, WhoConsole, DeadFilter{Queue: tgjob.QueueNotify}, ids)
	require.NoError(t, err)
	require.Equal(t, "No dead letters to requeue. 2 broadcast copies kept dead: "+dlqCopiesNote+" "+dlqUpdatesNote, got)
}
