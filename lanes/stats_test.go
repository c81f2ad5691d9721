package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Stats is a consistent snapshot: ring, pending, in flight, delayed, dead,
// parked, and the deepest lanes with weight, in-flight, limit and park.
func TestStatsIsOneConsistentSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: 10}))
	m := lanes.NewMinter()
	enqueueN(t, s, m, "q", "A", 6)
	enqueueN(t, s, m, "q", "B", 4)
	enqueueN(t, s, m, "q", "C", 1)
	enqueueN(t, s, m, "q", "D", 2)
	require.NoError(t, s.Inspector().SetWeight(ctx, "A", 2))
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
