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
