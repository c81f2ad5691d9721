package notifier_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

func TestSplitLimits(t *testing.T) {
	t.Parallel()
	a4096 := strings.Repeat("a", 4096)
	require.Equal(t, []string{a4096}, notifier.Split(a4096, 0))
	over := strings.Repeat("a", 4095) + "😀"
	require.Equal(t, []string{strings.Repeat("a", 4095), "😀"}, notifier.Split(over, 0))
	require.Empty(t, notifier.Split("", 0))
	require.Empty(t, notifier.Split(" \n ", 0))
}

func TestSplitPrefersLineBreaksThenSpaces(t *testing.T) {
	t.Parallel()
	text := "first line\nsecond words here and more"
	parts := notifier.Split(text, 20)
	checkParts(t, text, parts, 20)
	require.Equal(t, "first line\n", parts[0])
	for _, p := range parts[1 : len(parts)-1] {
		require.True(t, strings.HasSuffix(p, " "), "cut after a space: %q", p)
	}
}

func TestSplitKeepsGraphemeClusters(t *testing.T) {
	t.Parallel()
	family := "👩‍👩‍👧‍👦" // 11 UTF-16 units, one cluster
	text := strings.Repeat(family, 10)
	parts := notifier.Split(text, 25)
	checkParts(t, text, parts, 25)
	for _, p := range parts {
		require.Equal(t, 0, len(strings.ReplaceAll(p, family, "")), "whole clusters only: %q", p)
	}
	flags := strings.Repeat("🇺🇦🇯🇵", 50)
	checkParts(t, flags, notifier.Split(flags, 7), 7)
	for _, p := range notifier.Split(flags, 7) {
		require.Equal(t, 0, utf8.RuneCountInString(p)%2, "flags are pairs of regional indicators")
	}
}

func TestSplitMixed10000(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	pieces := []string{"漢字かな交じり文", "👩‍👩‍👧‍👦", "🇺🇦", "e\u0301", "한국어", "👍🏽", "\r\n", "plain words ", "🏳️‍🌈"}
	for i := 0; utf8.RuneCountInString(b.String()) < 10000; i++ {
		b.WriteString(pieces[i%len(pieces)])
	}
	text := b.String()
	parts := notifier.Split(text, 0)
	require.Greater(t, len(parts), 2)
	checkParts(t, text, parts, tgtext.MaxTextUnits)
}

// A single grapheme cluster over the limit (a letter with 5,000 combining
// marks) is cut at rune boundaries, without panicking.
func TestSplitPathologicalCluster(t *testing.T) {
	t.Parallel()
	zalgo := "x" + strings.Repeat("\u0301", 5000)
	text := "before " + zalgo + " after"
	parts := notifier.Split(text, 0)
	checkParts(t, text, parts, tgtext.MaxTextUnits)
	require.Len(t, parts, 4)
	require.Equal(t, "before ", parts[0])
}
