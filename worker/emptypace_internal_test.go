package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A claim that found jobs held by time (RetryIn > 0: a budget spent, a lane
// paced) keeps the share of the claim pace it took at its issue, so the
// next claim starts a claim's share of ClaimRate later, when a refilling
// budget has room for about the lanes it asks for; an idle answer (RetryIn
// < 0) or one that left lanes unvisited (RetryIn 0) gives its share back,
// as an answer of nothing did before.
func TestAClaimThatFoundTheBudgetSpentKeepsItsShareOfThePace(t *testing.T) {
	const rate, n = 1130, 10
	per := time.Second / rate
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		retryIn time.Duration
		keeps   bool // the next claim of n lanes waits n lanes' share more
	}{
		{"budget spent, room in 1 ms: the share kept", time.Millisecond, true},
		{"a lane paced for 1 s: the same", time.Second, true},
		{"idle store: the share given back", -1, false},
		{"lanes left unvisited: the share given back", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newMetrics(nil)
			require.NoError(t, err)
			w := &Worker{m: m, freed: make(chan struct{}, 1)}
			l := &claimLoop{w: w, pace: newClaimPacer(rate)}
			// A claim of n lanes issued at t0 (issue's bookkeeping) after
			// a claim of n that took its lanes.
			l.pace.claimed(t0, n)
			l.pace.claimed(t0, n)
			w.batches.Add(n)
			l.claiming = 1
			_, handOut := l.take(claimAnswer{c: lanes.Claimed{RetryIn: tc.retryIn}, lanes: n, t0: t0})
			require.False(t, handOut, "an answer of nothing is not handed out")
			require.Zero(t, w.batches.Load(), "its senders' slots are freed")
			require.NotNil(t, l.empty, "the loop acts on it once its claims are back")
			// The pace of the claim before alone (it took its n lanes).
			ref := newClaimPacer(rate)
			ref.claimed(t0, n)
			want := ref.waitFor(t0, n)
			if tc.keeps {
				want += n * per
			}
			require.Equal(t, want, l.pace.waitFor(t0, n))
		})
	}
}
