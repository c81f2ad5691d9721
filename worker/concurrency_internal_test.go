package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The senders follow Little's law: rate × hold × 1.25 + 2, within the
// bounds; an unknown rate uses the cap.
func TestSendersFollowRateTimesHold(t *testing.T) {
	tests := []struct {
		name   string
		rate   int
		hold   time.Duration
		lo, hi int
		want   int
	}{
		{"loopback at 30/s stays at the floor", 30, time.Millisecond, 4, 512, 4},
		{"30/s at 300 ms", 30, 300 * time.Millisecond, 4, 512, 14},
		{"30/s at 1 s", 30, time.Second, 4, 512, 40},
		{"1000/s at 300 ms", 1000, 300 * time.Millisecond, 4, 512, 377},
		{"1000/s at 1 s is capped", 1000, time.Second, 4, 512, 512},
		{"1000/s at 1 s fits the default cap", 1000, time.Second, 4, DefaultSenders, 1252},
		{"1000/s at 1.2 s fits the default cap", 1000, 1200 * time.Millisecond, 4, DefaultSenders, 1502},
		{"fixed pool ignores the hold", 30, time.Second, 8, 8, 8},
		{"unknown rate uses the cap", 0, time.Millisecond, 4, 64, 64},
		{"no measurement yet", 30, 0, 4, 512, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, sendersFor(tc.rate, tc.hold, tc.lo, tc.hi))
		})
	}
}

// The hold estimate follows a rise within a few measurements and falls
// back slowly, and it reaches the new level either way.
func TestHoldEstimateRisesFastFallsSlowly(t *testing.T) {
	var h holdEstimate
	require.Zero(t, h.get())
	h.observe(10 * time.Millisecond)
	require.Equal(t, 10*time.Millisecond, h.get(), "first measurement taken as is")
	for range 10 {
		h.observe(300 * time.Millisecond)
	}
	require.Greater(t, h.get(), 260*time.Millisecond, "within 10 sends of a rise to 300 ms")
	h.observe(10 * time.Millisecond)
	require.Greater(t, h.get(), 250*time.Millisecond, "one quick answer barely lowers it")
	for range 150 {
		h.observe(10 * time.Millisecond)
	}
	require.Less(t, h.get(), 12*time.Millisecond, "back down after a sustained fall")
	h.observe(0)
	require.Less(t, h.get(), 12*time.Millisecond, "a zero measurement is ignored")
}
