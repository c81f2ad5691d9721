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

// StatsScan reads at most scan lanes and says whether it read them all; its
// top list is the deepest of the lanes it read. Lanes describes exactly the
// lanes named, in the order given, whatever their number in the queue.
func TestStatsScanReadsAtMostScanLanesAndLanesOnlyThoseNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	// Ring order A, B, C, D; depths 1, 4, 2, 3.
	for _, l := range []struct {
		g string
		n int
	}{{"A", 1}, {"B", 4}, {"C", 2}, {"D", 3}} {
		enqueueN(t, s, m, "q", l.g, l.n)
	}
	in := s.Inspector()
	for _, tc := range []struct {
		scan     int
		top      []string
		complete bool
	}{
		{0, []string{"B", "D", "C", "A"}, true},
		{2, []string{"B", "A"}, false},
		{3, []string{"B", "C", "A"}, false},
		{4, []string{"B", "D", "C", "A"}, true},
		{10, []string{"B", "D", "C", "A"}, true},
	} {
		st, complete, err := in.StatsScan(ctx, "q", 10, tc.scan)
		require.NoError(t, err)
		var got []string
		for _, l := range st.Top {
			got = append(got, l.Group)
		}
		require.Equal(t, tc.top, got, "scan %d", tc.scan)
		require.Equal(t, tc.complete, complete, "scan %d", tc.scan)
		require.Equal(t, 10, st.Pending, "the totals are the whole queue's whatever the scan")
	}
	_, _, err := in.StatsScan(ctx, "q", 1, -1)
	require.ErrorIs(t, err, lanes.ErrInvalid)

	rows, err := in.Lanes(ctx, "q", "D", "nobody", "A")
	require.NoError(t, err)
	lim := rows[0].Limit // the queue's default lane limit
	require.Equal(t, []lanes.LaneStats{{Group: "D", Depth: 3, Weight: 1, Limit: lim}, {Group: "nobody", Weight: 1, Limit: lim}, {Group: "A", Depth: 1, Weight: 1, Limit: lim}}, rows)
}
