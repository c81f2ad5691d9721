package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The claims kept in flight are ClaimRate × the claim's round trip × 2,
// rounded up, at least 1 and at most maxClaimsInFlight: one at the bulk
// rate (so an idle bot's Valkey traffic is that of one claim loop), a few
// at 1,000/s, 1 when the rate or the round trip is not known yet.
func TestClaimsInFlightFollowRateTimesRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rate int
		rtt  time.Duration
		want int
	}{
		{"no rate: one", 0, time.Millisecond, 1},
		{"round trip not measured yet: one", 1000, 0, 1},
		{"30/s at 1 ms: one", 30, time.Millisecond, 1},
		{"30/s at 10 ms: one", 30, 10 * time.Millisecond, 1},
		{"1,000/s at 0.5 ms: one", 1000, 500 * time.Microsecond, 1},
		{"1,000/s at 0.7 ms: two", 1000, 700 * time.Microsecond, 2},
		{"1,000/s at 2 ms: four", 1000, 2 * time.Millisecond, 4},
		{"1,130/s at 3 ms: seven", 1130, 3 * time.Millisecond, 7},
		{"1,000/s at 50 ms: capped", 1000, 50 * time.Millisecond, maxClaimsInFlight},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, claimsFor(tc.rate, tc.rtt))
		})
	}
}

// A claim asks for ClaimRate × claimGap lanes (16 ms, issue 27: a latency
// trade for fewer, larger claims), rounded up, at least 1 and at most
// maxLanesPerClaim, and an ack call takes ClaimRate × ackGap acks (16 ms),
// at least 1 and at most maxAcksPerCall: one of each up to 62/s (62 ×
// 16 ms = 0.992), two from 63/s, 3 at the default 130/s (bulk 30 +
// replies 100), and at 1,130/s (a paid broadcast at 1,000/s beside them)
// 19 acks and 19 lanes capped to 16.
func TestLanesAndAcksPerCallAreClaimRateTimesTheirGap(t *testing.T) {
	tests := []struct {
		name        string
		rate        int
		lanes, acks int
	}{
		{"no rate: one", 0, 1, 1},
		{"30/s, the bulk rate: one", 30, 1, 1},
		{"62/s: one (0.992)", 62, 1, 1},
		{"63/s: two (1.008)", 63, 2, 2},
		{"130/s, the default bulk + replies: three", 130, 3, 3},
		{"1,000/s: sixteen", 1000, 16, 16},
		{"1,130/s, a paid broadcast beside them: lanes capped", 1130, maxLanesPerClaim, 19},
		{"10,000/s: both capped", 10_000, maxLanesPerClaim, maxAcksPerCall},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.lanes, lanesFor(tc.rate), "lanes a claim")
			require.Equal(t, tc.acks, acksFor(tc.rate), "acks a call")
		})
	}
}

// Reserving one message of the pace at a claim's issue and the rest at its
// answer (answered) leaves the pacer where recording the whole claim at
// its start does; an answer of nothing gives the reserved message back; and
// claims issued while others are in flight are spaced by the rate.
func TestClaimPacerReservationAtIssueMatchesRecordingAtTheStart(t *testing.T) {
	const rate = 1000
	per := time.Second / rate
	t0 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	for _, k := range []int{0, 1, 3, 16} {
		whole, split := newClaimPacer(rate), newClaimPacer(rate)
		now := t0
		for range 50 {
			whole.claimed(now, k)
			split.claimed(now, 1)
			split.answered(1, k)
			require.Equal(t, max(whole.wait(now), 0), max(split.wait(now), 0), "k=%d", k)
			now = now.Add(max(whole.wait(now), 0))
		}
	}
	p := newClaimPacer(rate)
	p.claimed(t0, 1)
	p.answered(1, 0)
	require.LessOrEqual(t, p.wait(t0), time.Duration(0), "an empty answer keeps no pace")

	// Claims in flight (none answered yet) after an idle spell: the first
	// credit + 1 start at once (the catch-up), then one per share.
	p = newClaimPacer(rate)
	now := t0
	for i := range 3 * p.credit {
		d := max(p.wait(now), 0)
		if i <= p.credit {
			require.Zero(t, d, "claim %d within the credit", i)
		} else {
			require.Equal(t, per, d, "claim %d", i)
		}
		now = now.Add(d)
		p.claimed(now, 1)
	}
}
