package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A claim that found jobs held by time (RetryIn > 0: a budget spent, a lane
// paced) keeps the share of the claim pace it took at its issue, up to
// claimGap of it, so the next claim starts that much later, when a
// refilling budget has room for about the lanes it asks for, and never
// more than claimGap later; an idle answer (RetryIn < 0) or one that left
// lanes unvisited (RetryIn 0) gives its share back, as an answer of
// nothing did before.
func TestAClaimThatFoundTheBudgetSpentKeepsItsShareOfThePaceUpToClaimGap(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		rate, n int // ClaimRate, the claim's lanes (lanesFor)
		retryIn time.Duration
		kept    int // messages of the pace the answer keeps
	}{
		{"1,130/s, budget spent, room in 1 ms: all 16 kept (claimGap is 18 shares)", 1130, 16, time.Millisecond, 16},
		{"1,130/s, a lane paced for 1 s: the same", 1130, 16, time.Second, 16},
		{"1,130/s, a claim of 3 (3 senders free): all 3 kept", 1130, 3, time.Millisecond, 3},
		{"130/s, budget spent: 2 of 3 kept (claimGap)", 130, 3, time.Millisecond, 2},
		{"63/s, budget spent: 1 of 2 kept", 63, 2, time.Millisecond, 1},
		{"62/s, budget spent: none kept (one share is more than claimGap)", 62, 1, time.Millisecond, 0},
		{"30/s, budget spent: none kept", 30, 1, time.Millisecond, 0},
		{"1,130/s, idle store: none kept", 1130, 16, -1, 0},
		{"1,130/s, lanes left unvisited: none kept", 1130, 16, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.n, min(tc.n, lanesFor(tc.rate)), "a claim the loop can issue")
			per := time.Second / time.Duration(tc.rate)
			m, err := newMetrics(nil)
			require.NoError(t, err)
			w := &Worker{m: m, freed: make(chan struct{}, 1)}
			l := &claimLoop{w: w, pace: newClaimPacer(tc.rate)}
			// A claim of n lanes issued at t0 (issue's bookkeeping) after
			// a claim of n that took its lanes.
			l.pace.claimed(t0, tc.n)
			l.pace.claimed(t0, tc.n)
			w.batches.Add(int64(tc.n))
			l.claiming = 1
			_, handOut := l.take(claimAnswer{c: lanes.Claimed{RetryIn: tc.retryIn}, lanes: tc.n, t0: t0})
			require.False(t, handOut, "an answer of nothing is not handed out")
			require.Zero(t, w.batches.Load(), "its senders' slots are freed")
			require.NotNil(t, l.empty, "the loop acts on it once its claims are back")
			// The pace of the claim before alone (it took its n lanes).
			ref := newClaimPacer(tc.rate)
			ref.claimed(t0, tc.n)
			later := l.pace.waitFor(t0, tc.n) - ref.waitFor(t0, tc.n)
			require.Equal(t, time.Duration(tc.kept)*per, later)
			require.LessOrEqual(t, later, claimGap, "the next claim starts at most claimGap later")
		})
	}
}
