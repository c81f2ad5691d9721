package tgtext_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier/tgtext"
)

func TestUTF16Len(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"ascii", "hello", 5},
		{"cyrillic and CJK (BMP)", "привет世界", 8},
		{"emoji above U+FFFF", "🍎", 2},
		{"emoji with variation selector", "❤️", 2},
		{"ZWJ family", "👨‍👩‍👧", 8},
		{"invalid byte", "a\xffb", 3},
		{"limit", strings.Repeat("a", tgtext.MaxTextUnits), 4096},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tgtext.UTF16Len(tc.in))
		})
	}
}

// TestClipCutsToTheLimitWithoutSplittingACharacter: a text of at most max
// UTF-16 units goes as it is; a longer one is cut to max-1 and "…", an
// emoji (2 units) never split (a callback answer at Telegram's 200).
func TestClipCutsToTheLimitWithoutSplittingACharacter(t *testing.T) {
	const max = tgtext.MaxCallbackAnswerUnits
	tests := []struct {
		name, in, want string
	}{
		{"short", "✅ Sent.", "✅ Sent."},
		{"exactly the limit", strings.Repeat("a", max), strings.Repeat("a", max)},
		{"one over", strings.Repeat("a", max+1), strings.Repeat("a", max-1) + "…"},
		{"emoji at the cut", strings.Repeat("a", max-2) + "💫💫", strings.Repeat("a", max-2) + "…"},
		{"emoji within", strings.Repeat("💫", max/2), strings.Repeat("💫", max/2)},
		{"emoji over", strings.Repeat("💫", max/2+1), strings.Repeat("💫", max/2-1) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tgtext.Clip(tc.in, max)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, tgtext.UTF16Len(got), max)
		})
	}
}

// Plural's count phrase: the singular for exactly one, the plural for
// none, many and a negative count.
func TestPluralIsSingularForExactlyOne(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "1 copy"}, {0, "0 copies"}, {2, "2 copies"}, {30, "30 copies"}, {-1, "-1 copies"}} {
		require.Equal(t, tc.want, tgtext.Plural(tc.n, "copy", "copies"))
	}
}
