package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJitterLeavesLessOfTheWindowTheLongerTheLatency: without jitter an
// ideal regular sender gets the whole window at any latency; with the
// emulator's ±50% the way there spreads arrivals, so the pace that keeps
// 429s within 1 per 1,000 falls as the latency grows (and the bound is
// reproducible: seeded).
func TestJitterLeavesLessOfTheWindowTheLongerTheLatency(t *testing.T) {
	for _, lat := range []time.Duration{0, 100 * time.Millisecond, time.Second} {
		require.Equal(t, 1.0, jitterBound(lat, 0, 30, time.Second, 1), "steady at %v", lat)
	}
	b100 := jitterBound(100*time.Millisecond, 0.5, 30, time.Second, 1)
	b300 := jitterBound(300*time.Millisecond, 0.5, 30, time.Second, 1)
	b1000 := jitterBound(time.Second, 0.5, 30, time.Second, 1)
	t.Logf("bounds at ±50%%: 100 ms %.2f, 300 ms %.2f, 1 s %.2f", b100, b300, b1000)
	require.Greater(t, b100, b300)
	require.Greater(t, b300, b1000)
	require.Less(t, b1000, 0.95, "at 1 s ±50%% no regular sender keeps 0.95 of the window within 1 × 429 per 1,000")
	require.Greater(t, b1000, 0.5)
	require.Equal(t, b300, jitterBound(300*time.Millisecond, 0.5, 30, time.Second, 1), "seeded")
	require.LessOrEqual(t, jitterBound(300*time.Millisecond, 0.5, 30, time.Second, 0), b300, "no 429 at all costs at least as much")
}
