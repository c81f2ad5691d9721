package lanes_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Enqueue of an id that exists is a no-op (Added false), whether the job is
// pending, in flight or dead: no duplicate is ever claimed.
func TestEnqueueExistingIDIsNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	id := lanes.NewMinter().New()
	ok, err := s.Enqueue(ctx, "q", "g", id, []byte("first"))
	require.NoError(t, err)
	require.True(t, ok)
	before := dumpKeys(t, s)
	ok, err = s.Enqueue(ctx, "q", "other", id, []byte("second"))
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, before, dumpKeys(t, s), "pending: nothing changed")

	j := claimOne(t, s, time.Minute, "q")
	require.Equal(t, "first", string(j.Payload))
	ok, err = s.Enqueue(ctx, "q", "g", id, []byte("third"))
	require.NoError(t, err)
	require.False(t, ok, "in flight")
	c := claim(t, s, 10, time.Minute, "q")
	require.Empty(t, c.Jobs, "no duplicate to claim")

	require.NoError(t, s.Dead(ctx, j.Lease, "x"))
	ok, err = s.Enqueue(ctx, "q", "g", id, nil)
	require.NoError(t, err)
	require.False(t, ok, "dead")
	require.Empty(t, claim(t, s, 10, time.Minute, "q").Jobs)
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, lanes.Stats{Dead: 1}, st)
}

// EnqueueBatch counts Added and Duplicates, across chunks and within one
// batch, and an empty batch writes nothing.
func TestEnqueueBatchCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	r, err := s.EnqueueBatch(ctx, "q", nil)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{}, r)
	require.Empty(t, tagKeys(t, s))

	existing := m.New()
	_, err = s.Enqueue(ctx, "q", "g", existing, nil)
	require.NoError(t, err)
	items := []lanes.Item{{Group: "g", ID: existing}}
	for i := 0; i < 1100; i++ {
		items = append(items, lanes.Item{Group: "g" + strconv.Itoa(i%7), ID: m.New()})
	}
	items = append(items, items[5], items[700]) // repeats within the batch, in the last chunk
	r, err = s.EnqueueBatch(ctx, "q", items)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1100, Duplicates: 3}, r)
	st, err := s.Inspector().Stats(ctx, "q", 10)
	require.NoError(t, err)
	require.Equal(t, 1101, st.Pending)
	require.Len(t, st.Top, 8)
	require.Len(t, ring(t, s, "q"), 8, "each lane joins the ring once")
}

// Stats is a consistent snapshot: ring, pending, in flight, delayed, dead,
// parked, and the deepest lanes with weight, in-flight, limit and park.
func TestStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: 10}))
	m := lanes.NewMinter()
	enqueueN(t, s, m, "q", "A", 6)
	enqueueN(t, s, m, "q", "B", 4)
	enqueueN(t, s, m, "q", "C", 1)
	enqueueN(t, s, m, "q", "D", 2)
	require.NoError(t, s.Inspector().SetWeight(ctx, "q", "A", 2))
	require.NoError(t, s.Inspector().SetLaneLimit(ctx, "q", "B", 4))
	_, err := s.Inspector().Park(ctx, "q", "C", -1)
	require.NoError(t, err)
	until, err := s.Inspector().Park(ctx, "q", "D", time.Hour)
	require.NoError(t, err)

	a := claim(t, s, 5, time.Minute, "q") // A: 2 (its weight)
	require.Len(t, a.Jobs, 2)
	b := claimOne(t, s, time.Minute, "q") // B
	require.Equal(t, "B", b.Group)
	out, err := s.Nack(ctx, a.Jobs[0].Lease, time.Hour, "later")
	require.NoError(t, err)
	require.Equal(t, lanes.Delayed, out)
	require.NoError(t, s.Dead(ctx, a.Jobs[1].Lease, "no"))

	st, err := s.Inspector().Stats(ctx, "q", 3)
	require.NoError(t, err)
	require.Equal(t, 4, st.Ring, "A, B and the lazily-dropped parked C and D")
	require.Equal(t, 4+3+1+2, st.Pending)
	require.Equal(t, 1, st.InFlight)
	require.Equal(t, 1, st.Delayed)
	require.Equal(t, 1, st.Dead)
	require.Equal(t, 2, st.Parked)
	require.Equal(t, []lanes.LaneStats{
		{Group: "A", Depth: 4, Weight: 2, InFlight: 0, Limit: 10},
		{Group: "B", Depth: 3, Weight: 1, InFlight: 1, Limit: 4},
		{Group: "D", Depth: 2, Weight: 1, Limit: 10, ParkedUntil: until},
	}, st.Top)
	all, err := s.Inspector().Stats(ctx, "q", 1000)
	require.NoError(t, err)
	require.Len(t, all.Top, 4)
	require.Equal(t, lanes.LaneStats{Group: "C", Depth: 1, Weight: 1, Limit: 10, Indefinite: true}, all.Top[3])
	none, err := s.Inspector().Stats(ctx, "empty", 5)
	require.NoError(t, err)
	require.Equal(t, lanes.Stats{}, none)
}

// MoveLane moves every pending job to the target in id order (merging with
// the target's own jobs), then the weight, glimit and pace override; jobs
// in flight stay. DeadLane dead-letters every pending job with the reason.
// Both work in chunks of 1,000.
func TestMoveLaneAndDeadLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("move", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		m := lanes.NewMinter()
		old := enqueueN(t, s, m, "q", "old", 1200)
		target := enqueueN(t, s, m, "q", "new", 3)
		old = append(old, enqueueN(t, s, m, "q", "old", 1300)...)
		require.NoError(t, s.Inspector().SetWeight(ctx, "q", "old", 4))
		require.NoError(t, s.Inspector().SetLaneLimit(ctx, "q", "old", 9))
		require.NoError(t, s.Inspector().SetLanePace(ctx, "old", lanes.Pace{Limit: 1000, Period: time.Second}))
		held := claim(t, s, 4, time.Minute, "q")
		require.Equal(t, "old", held.Jobs[0].Group)
		require.Len(t, held.Jobs, 4)

		n, err := s.Inspector().MoveLane(ctx, "q", "old", "new")
		require.NoError(t, err)
		require.Equal(t, 2496, n)
		want := append(strIDs(old[4:1200]), strIDs(target)...)
		want = append(want, strIDs(old[1200:])...)
		require.Equal(t, want, laneIDs(t, s, "q", "new"), "id order kept")
		require.Empty(t, laneIDs(t, s, "q", "old"))
		w, err := s.Inspector().Weights(ctx, "q")
		require.NoError(t, err)
		require.Equal(t, map[string]int{"new": 4}, w)
		glimit, err := rdo(t, s, "HGETALL", s.Keys().Queue("q", "glimit")).AsStrMap()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"new": "9"}, glimit)
		pace, err := rdo(t, s, "HGETALL", s.Keys().Shared("pacecfg")).AsStrMap()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"new": "1000:1000"}, pace)
		require.Equal(t, 4, inflight(t, s, "q", "old"), "in flight untouched")

		c := claim(t, s, 10, time.Minute, "q")
		require.Equal(t, "new", c.Jobs[0].Group)
		require.Equal(t, want[:4], strIDs(jobIDs(c.Jobs)), "weight 4 served in order")
		require.NoError(t, s.Release(ctx, held.Jobs[0].Lease))
		require.Equal(t, []string{string(held.Jobs[0].ID)}, laneIDs(t, s, "q", "old"), "a released job goes to its own lane")
	})

	t.Run("dead", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		m := lanes.NewMinter()
		ids := enqueueN(t, s, m, "q", "chat", 1500)
		other := enqueueN(t, s, m, "q", "x", 1)
		j := claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[0], j.ID)
		dead, err := s.Inspector().DeadLane(ctx, "q", "chat", "bot blocked")
		require.NoError(t, err)
		require.Len(t, dead, 1499)
		st, err := s.Inspector().Stats(ctx, "q", 10)
		require.NoError(t, err)
		require.Equal(t, 1, st.Pending)
		require.Equal(t, 1499, st.Dead)
		require.Equal(t, 1, st.InFlight)
		dl, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 2000})
		require.NoError(t, err)
		require.Len(t, dl, 1499)
		for _, d := range dl {
			require.Equal(t, "bot blocked", d.Reason)
			require.Equal(t, "chat", d.Group)
		}
		c := claimOne(t, s, time.Minute, "q")
		require.Equal(t, other[0], c.ID, "the dead lane is gone from the rotation")
		require.Empty(t, claim(t, s, 10, time.Minute, "q").Jobs)
		require.NoError(t, s.Ack(ctx, j.Lease))
		dead, err = s.Inspector().DeadLane(ctx, "q", "nobody", "r")
		require.NoError(t, err)
		require.Empty(t, dead)
	})
}

// A Waiter wakes when another connection enqueues, and when an ack frees a
// saturated lane; it does not wake for nothing.
func TestWaiterWakesOnEnqueue(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: 1}))
	other := sibling(t, s, lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: 1}))
	w, err := s.NewWaiter(ctx)
	require.NoError(t, err)
	require.False(t, w.Wait(ctx, 20*time.Millisecond), "no wake-up without work")

	m := lanes.NewMinter()
	ok, err := other.Enqueue(ctx, "q", "g", m.New(), nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, w.Wait(ctx, 2*time.Second), "enqueue from another connection wakes")

	_, err = other.Enqueue(ctx, "q", "g", m.New(), nil)
	require.NoError(t, err)
	w.Wait(ctx, 0) // drain: the lane was in the ring already, no new wake-up is due
	j := claimOne(t, s, time.Minute, "q")
	require.Empty(t, claim(t, s, 1, time.Minute, "q").Jobs, "lane at its limit")
	require.NoError(t, other.Ack(ctx, j.Lease))
	require.True(t, w.Wait(ctx, 2*time.Second), "an ack that frees the lane wakes")

	cancel()
	select {
	case <-w.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("waiter did not stop with its context")
	}
}
