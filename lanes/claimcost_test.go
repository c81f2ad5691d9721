package lanes_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// commandsPerLane is what serving one more one-copy lane adds to a claim of
// several lanes (ClaimRequest.Lanes), in Valkey commands run by the script:
// the claim of 9 such lanes less the claim of 1, over 8. The store is the
// paid broadcast's (an ordered queue with a budget of its own, outside the
// global one, every lane paced), on a dedicated server read with INFO
// commandstats, so each figure is exact. setup runs after the lanes are
// filled and before the claims.
func commandsPerLane(t *testing.T, setup func(ctx context.Context, s *lanes.Store)) float64 {
	t.Helper()
	ctx := context.Background()
	c := valkeytest.Start(t, valkeytest.Options{}).Client(t)
	commands := func() float64 {
		var n float64
		for name, st := range valkeytest.CommandStats(ctx, t, c) {
			switch {
			case name == "evalsha", name == "eval", name == "info":
			case name == "hello", name == "ping", strings.HasPrefix(name, "client"):
				// A new connection of the client's (its handshake).
			default:
				n += st.Calls
			}
		}
		return n
	}
	claimed := func(lanesServed int) float64 {
		s, err := lanes.New(c, lanes.WithTag("cost"+strconv.Itoa(lanesServed)),
			lanes.WithQueue("paid", lanes.QueueConfig{Ordered: true, Rate: 1000, Window: time.Second, OutsideGlobal: true}),
			lanes.WithGlobalRate(130, time.Second),
			lanes.WithLanePace(lanes.Pace{Limit: 1, Period: time.Second}))
		require.NoError(t, err)
		fillLanes(t, s, lanes.NewMinter(), "paid", "1000", lanesServed, 1)
		if setup != nil {
			setup(ctx, s)
		}
		// The scripts loaded (a claim that finds nothing), then measured.
		_, err = s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"none"}, Lease: time.Minute, Max: 1})
		require.NoError(t, err)
		before := commands()
		got, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"paid"}, Lease: time.Minute, Max: 16, Lanes: lanesServed})
		require.NoError(t, err)
		require.Len(t, got.Jobs, lanesServed, "every lane served, one copy each")
		require.Len(t, got.Batches(), lanesServed)
		return commands() - before
	}
	return (claimed(9) - claimed(1)) / 8
}

// A claim serving several one-copy lanes (a broadcast's, ClaimRequest.Lanes)
// reads per lane only what can differ between lanes: with no lane weighted,
// no pace override and nothing parked in the queue, a lane costs 13
// commands (the rotation, its depth, in-flight count, pace log trimmed and
// counted, the pop, the job read and written, its pace log written and
// given its expiry, its in-flight count, leaving the ring: two commands);
// whether any
// lane is weighted, has an override or is parked is read once per call.
// Each of those that exists brings back its lookup per lane (one command
// each), and the lanes are served as before. A lane's pace log made by the
// claim gets its expiry without a PTTL first.
func TestAClaimOfOneCopyLanesReadsWeightsOverridesAndParksOncePerCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(ctx context.Context, s *lanes.Store)
		want  float64
	}{
		{"nothing weighted, overridden or parked", nil, 13},
		{"another lane weighted", func(ctx context.Context, s *lanes.Store) {
			require.NoError(t, s.Inspector().SetWeight(ctx, "other", 3))
		}, 14},
		{"another lane's pace overridden", func(ctx context.Context, s *lanes.Store) {
			require.NoError(t, s.Inspector().SetLanePace(ctx, "other", lanes.Pace{Limit: 5, Period: time.Second}))
		}, 14},
		{"another lane parked", func(ctx context.Context, s *lanes.Store) {
			_, err := s.Inspector().Park(ctx, "paid", "other", time.Hour)
			require.NoError(t, err)
		}, 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, commandsPerLane(t, tc.setup))
		})
	}
}
