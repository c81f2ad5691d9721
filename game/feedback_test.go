package game

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScore(t *testing.T) {
	tests := []struct {
		name          string
		secret, guess string
		green, yellow int
	}{
		{"exact", "A B C D", "A B C D", 4, 0},
		{"nothing", "A A A A", "B B B B", 0, 0},
		{"all misplaced", "A B C D", "D C B A", 0, 4},
		{"rotation", "A B C D", "B C D A", 0, 4},
		{"mixed", "A B C D", "A C B E", 1, 2},
		// Repeats: each secret symbol is matched once, greens first.
		{"guess repeats one secret symbol", "A B C D", "A A A A", 1, 0},
		{"secret repeats, guess once misplaced", "A A B B", "C C C A", 0, 1},
		{"green eats the repeat", "A A B C", "A D A A", 1, 1},
		{"more in guess than secret", "A B B C", "B B B B", 2, 0},
		{"more in secret than guess", "B B B A", "A B C D", 1, 1},
		{"double double swapped", "A A B B", "B B A A", 0, 4},
		{"classic 1122 vs 2211 half", "A A B B", "A B A B", 2, 2},
		{"yellow limited by secret count", "A B C C", "C C C A", 1, 2},
		{"green not counted again as yellow", "A B C D", "A A B B", 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Score(split(tc.secret), split(tc.guess))
			require.Equal(t, Feedback{Green: tc.green, Yellow: tc.yellow}, got)
			// Green+yellow never exceeds the code length, and the score is
			// symmetric in its yellow+green total.
			require.LessOrEqual(t, got.Green+got.Yellow, 4)
			rev := Score(split(tc.guess), split(tc.secret))
			require.Equal(t, got, rev)
		})
	}
}

func TestPoints(t *testing.T) {
	tests := []struct{ attempt, max, want int }{
		{1, 10, 100},
		{3, 10, 80},
		{10, 10, 10},
		{11, 10, 0},
		{0, 10, 0},
		{1, 1, 10},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Points(tc.attempt, tc.max), "attempt %d of %d", tc.attempt, tc.max)
	}
}

func TestPegs(t *testing.T) {
	require.Equal(t, "🟢🟢🟡⚪", Feedback{Green: 2, Yellow: 1}.Pegs(4))
	require.Equal(t, "⚪⚪⚪⚪", Feedback{}.Pegs(4))
	require.Equal(t, "🟢🟢🟢🟢", Feedback{Green: 4}.Pegs(4))
}
