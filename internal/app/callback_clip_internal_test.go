package app

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAToastLongerThanTelegramTakesIsClippedToItsLimit: an answer of at
// most 200 UTF-16 code units goes as it is; a longer one is cut to 199
// and "…", an emoji (2 units) never split, so Telegram shows it rather
// than refusing it (400 MESSAGE_TOO_LONG): e.g. a repeated Stop's answer
// of a paid broadcast with its progress.
func TestAToastLongerThanTelegramTakesIsClippedToItsLimit(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short", "✅ Sent.", "✅ Sent."},
		{"exactly 200", strings.Repeat("a", 200), strings.Repeat("a", 200)},
		{"201", strings.Repeat("a", 201), strings.Repeat("a", 199) + "…"},
		{"emoji at the cut", strings.Repeat("a", 198) + "💫💫", strings.Repeat("a", 198) + "…"},
		{"emoji within", strings.Repeat("💫", 100), strings.Repeat("💫", 100)},
		{"emoji over", strings.Repeat("💫", 101), strings.Repeat("💫", 99) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := clipToast(tc.in)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, utf16Len(got), maxToast)
		})
	}
}
