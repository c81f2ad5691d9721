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

// DeadLetters pages newest first with Skip; DeleteDead deletes exactly the
// dead letters named (a job that is not dead is left alone).
func TestDeadLettersPageWithSkipAndDeleteDeadDeletesOnlyThoseNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	ids := enqueueN(t, s, m, "q", "A", 5)
	for range 5 {
		j := claimOne(t, s, time.Minute, "q")
		require.NoError(t, s.Dead(ctx, j.Lease, "gone"))
		time.Sleep(2 * time.Millisecond) // distinct dead-letter times
	}
	in := s.Inspector()
	page := func(skip, n int) []lanes.JobID {
		ds, err := in.DeadLetters(ctx, "q", lanes.DeadQuery{Newest: n, Skip: skip})
		require.NoError(t, err)
		out := make([]lanes.JobID, len(ds))
		for i, d := range ds {
			out[i] = d.ID
		}
		return out
	}
	require.Equal(t, []lanes.JobID{ids[4], ids[3]}, page(0, 2))
	require.Equal(t, []lanes.JobID{ids[2], ids[1]}, page(2, 2))
	require.Equal(t, []lanes.JobID{ids[0]}, page(4, 2))
	require.Empty(t, page(5, 2))
	_, err := in.DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 1, Skip: -1})
	require.ErrorIs(t, err, lanes.ErrInvalid)

	pending := enqueueN(t, s, m, "q", "B", 1)
	n, err := in.DeleteDead(ctx, "q", ids[1], ids[3], pending[0])
	require.NoError(t, err)
	require.Equal(t, 2, n, "the two dead letters; the pending job is not dead")
	require.Equal(t, []lanes.JobID{ids[4], ids[2], ids[0]}, page(0, 10))
	st, err := in.Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, 1, st.Pending, "the pending job is still there")
	_, err = in.DeleteDead(ctx, "q", "bad id")
	require.ErrorIs(t, err, lanes.ErrInvalid)
}
