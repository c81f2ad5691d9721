package admin

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// /lanes states an intake limit of 0 as no limit (FLOOD_* = 0 turns that
// limit off, docs/floods.md), never as "0 messages", which reads as none
// allowed.
func TestLanesStatesAZeroIntakeLimitAsNoLimit(t *testing.T) {
	for _, tc := range []struct {
		n    int
		what string
		want string
	}{
		{20, "messages", "20 messages"},
		{1, "taps", "1 taps"},
		{0, "messages", "no limit on messages"},
		{0, "taps", "no limit on taps"},
	} {
		require.Equal(t, tc.want, limitOf(tc.n, tc.what))
	}
}
