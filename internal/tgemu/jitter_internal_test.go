package tgemu

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJitteredSpansPlusMinusItsFractionAroundTheDelay: a draw u in [0, 1)
// maps onto d × (1 ± j), u = 0.5 on d itself.
func TestJitteredSpansPlusMinusItsFractionAroundTheDelay(t *testing.T) {
	const d = 200 * time.Millisecond
	cases := []struct {
		name string
		j, u float64
		want time.Duration
	}{
		{"lowest draw", 0.5, 0, 100 * time.Millisecond},
		{"middle draw", 0.5, 0.5, d},
		{"a quarter", 0.5, 0.25, 150 * time.Millisecond},
		{"three quarters", 0.5, 0.75, 250 * time.Millisecond},
		{"no jitter", 0, 0.9, d},
		{"full jitter, lowest", 1, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, jittered(d, tc.j, tc.u))
		})
	}
}
