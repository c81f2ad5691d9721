package chaos

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSettleBoundIsWhatTheWorkLeftNeedsAtTheLearnedRate: the settling may
// last twice what the sends owed need at the learned rate, never less than
// the floor nor more than the cap.
func TestSettleBoundIsWhatTheWorkLeftNeedsAtTheLearnedRate(t *testing.T) {
	const floor = 108 * time.Second
	tests := []struct {
		name string
		left int
		rate float64
		want time.Duration
	}{
		{"seed 7's backlog at the halved budget", 1500, 10, 300 * time.Second},
		{"a slower budget waits longer", 1500, 7.5, 400 * time.Second},
		{"little left: the floor", 100, 10, floor},
		{"nothing left: the floor", 0, 10, floor},
		{"more than the cap allows: the cap", 5000, 4, settleCap},
		{"no rate: the cap", 10, 0, settleCap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, settleBound(floor, tt.left, tt.rate))
		})
	}
}

// TestSettlingWaitsWhileTheSystemMovesAndEndsDrainedStalledOrCapped: a
// system still delivering is waited for past the old fixed bound; one where
// nothing moved for settleStall is stalled; one still moving at its bound
// is capped; a look that finds it drained ends it at once.
func TestSettlingWaitsWhileTheSystemMovesAndEndsDrainedStalledOrCapped(t *testing.T) {
	const step = 10 * time.Second
	// looks makes n looks step apart, the i-th from f(i).
	looks := func(n int, f func(i int) settleLook) []settleLook {
		out := make([]settleLook, n)
		for i := range out {
			out[i] = f(i)
			out[i].at = time.Duration(i) * step
		}
		return out
	}
	tests := []struct {
		name   string
		bound  time.Duration
		looks  []settleLook
		want   settleEnd
		wantAt time.Duration // the look that ends it
	}{
		{"late but delivering at the learned rate is waited for until drained", 300 * time.Second,
			looks(20, func(i int) settleLook {
				return settleLook{drained: i == 15, delivered: 100 * i, left: 1500 - 100*i}
			}), settleDrained, 150 * time.Second},
		{"drained at the first look", 300 * time.Second,
			looks(3, func(int) settleLook { return settleLook{drained: true} }), settleDrained, 0},
		{"nothing delivered and nothing less owed is a stall", 300 * time.Second,
			looks(20, func(int) settleLook { return settleLook{delivered: 1029, left: 518} }), settleStalled, settleStall},
		{"a move starts the stall window again", 300 * time.Second,
			looks(20, func(i int) settleLook {
				if i >= 5 {
					return settleLook{delivered: 11, left: 9}
				}
				return settleLook{delivered: 10, left: 10}
			}), settleStalled, 50*time.Second + settleStall},
		{"fewer sends owed without a delivery is a move (an update handled, a copy dead-lettered)", 300 * time.Second,
			looks(40, func(i int) settleLook { return settleLook{delivered: 7, left: 100 - i} }), settleCapped, 300 * time.Second},
		{"owed going up and back down is no move", 300 * time.Second,
			looks(20, func(i int) settleLook { return settleLook{delivered: 7, left: 10 + 10*(i%2)} }), settleStalled, settleStall},
		{"still delivering at the bound is capped", 100 * time.Second,
			looks(20, func(i int) settleLook { return settleLook{delivered: i, left: 500} }), settleCapped, 100 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settler{bound: tt.bound, stall: settleStall}
			var end settleEnd
			var at time.Duration
			for _, l := range tt.looks {
				if e, ok := s.look(l); ok {
					end, at = e, l.at
					break
				}
			}
			require.Equal(t, tt.want, end)
			require.Equal(t, tt.wantAt, at)
		})
	}
}
