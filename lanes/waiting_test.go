package lanes_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Waiting names the lane of exactly the jobs still waiting on one, over
// more than one chunk of ids: a job in flight, a dead letter, an acked job,
// a cancelled job and an id never enqueued are reported "".
func TestWaitingReportsOnlyJobsOnTheirLanes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	const n = 1500
	ids := make([]lanes.JobID, n)
	items := make([]lanes.Item, n)
	for i := range n {
		ids[i] = m.New()
		items[i] = lanes.Item{Group: "c" + strconv.Itoa(i), ID: ids[i], Payload: []byte("x")}
	}
	_, err := s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	held := claim(t, s, 1, time.Minute, "q").Jobs[0]
	dead := claim(t, s, 1, time.Minute, "q").Jobs[0]
	require.NoError(t, s.Dead(ctx, dead.Lease, "blocked"))
	acked := claim(t, s, 1, time.Minute, "q").Jobs[0]
	require.NoError(t, s.Ack(ctx, acked.Lease))
	_, err = s.Cancel(ctx, "q", ids[n-1:], lanes.Tally{})
	require.NoError(t, err)

	got, err := s.Inspector().Waiting(ctx, "q", append(append([]lanes.JobID{}, ids...), m.New()))
	require.NoError(t, err)
	require.Len(t, got, n+1)
	notWaiting := map[lanes.JobID]bool{held.ID: true, dead.ID: true, acked.ID: true, ids[n-1]: true}
	for i, id := range ids {
		if notWaiting[id] {
			require.Empty(t, got[i], "job %d is not waiting", i)
		} else {
			require.Equal(t, "c"+strconv.Itoa(i), got[i], "job %d waits on its lane", i)
		}
	}
	require.Empty(t, got[n], "an id never enqueued")

	_, err = s.Inspector().Waiting(ctx, "q", []lanes.JobID{"nope"})
	require.ErrorIs(t, err, lanes.ErrInvalid)
}
