package lanes_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// DeadLaneIDs returns exactly the jobs it dead-lettered, in lane order,
// across chunks of 1,000; jobs in flight and other lanes are untouched;
// DeadLettersByID reads those back and leaves out ids that are not dead.
func TestDeadLaneReturnsExactlyTheJobsItDeadLettered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	// One job of lane A goes in flight first; it must not be dead-lettered.
	inflight := m.New()
	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: inflight, Payload: []byte("first")}})
	require.NoError(t, err)
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)

	const n = 2345
	items := make([]lanes.Item, 0, n+1)
	want := make([]lanes.JobID, 0, n)
	for i := range n {
		id := m.New()
		want = append(want, id)
		items = append(items, lanes.Item{Group: "A", ID: id, Payload: []byte("a" + strconv.Itoa(i))})
	}
	other := m.New()
	items = append(items, lanes.Item{Group: "B", ID: other, Payload: []byte("b")})
	_, err = s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	// An older dead letter of the same lane and reason: not one of the ids.
	require.NoError(t, s.Dead(ctx, c.Jobs[0].Lease, "blocked"))

	ids, err := s.Inspector().DeadLane(ctx, "q", "A", "blocked")
	require.NoError(t, err)
	require.Equal(t, want, ids, "every pending job of A, in lane order")
	again, err := s.Inspector().DeadLane(ctx, "q", "A", "blocked")
	require.NoError(t, err)
	require.Empty(t, again)

	dls, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{IDs: []lanes.JobID{ids[0], other, ids[n-1], m.New()}})
	require.NoError(t, err)
	require.Len(t, dls, 2, "the pending job of B and an unknown id are not dead letters")
	require.Equal(t, ids[0], dls[0].ID)
	require.Equal(t, "a0", string(dls[0].Payload))
	require.Equal(t, "A", dls[0].Group)
	require.Equal(t, "blocked", dls[0].Reason)
	require.Equal(t, ids[n-1], dls[1].ID)
	all, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{IDs: ids})
	require.NoError(t, err)
	require.Len(t, all, n)

	// A requeued id is no longer a dead letter.
	_, err = s.Inspector().RequeueDead(ctx, "q", ids[1])
	require.NoError(t, err)
	dls, err = s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{IDs: []lanes.JobID{ids[1]}})
	require.NoError(t, err)
	require.Empty(t, dls)

	_, err = s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{IDs: []lanes.JobID{"job_bad"}})
	require.ErrorIs(t, err, lanes.ErrInvalid)
	_, err = s.Inspector().DeadLetters(ctx, "", lanes.DeadQuery{IDs: []lanes.JobID{ids[0]}})
	require.ErrorIs(t, err, lanes.ErrInvalid)
	k, err := s.Inspector().DeadLane(ctx, "q", "B", "blocked")
	require.NoError(t, err)
	require.Len(t, k, 1, "the one pending job of B")
}
