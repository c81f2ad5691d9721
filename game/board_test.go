package game

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const rules = "🔐 New code: 4 emojis from 🍎 🍌 🍇 🍒 🍋 🥝 (repeats allowed). Tap or type a guess: 🟢 right place, 🟡 wrong place, ⚪ no match."

// A private board shows the guesses with their pegs, the one composition
// in progress with placeholders, and the attempts left.
func TestBoardTextPrivateShowsGuessesCompositionAndAttempts(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	require.Equal(t, rules+"\n\n✏️ _ _ _ _\n10 of 10 attempts left.", st.BoardText(nil, false))
	st, _ = play(t, st, "🍎🍇🍋🍋")
	require.Equal(t, rules+"\n\n1. 🍎🍇🍋🍋  🟢🟡⚪⚪\n\n✏️ 🍎 🍌 _ _\n9 of 10 attempts left.",
		st.BoardText([]Composition{{Symbols: []string{"🍎", "🍌"}}}, false))
}

// A group board names each guess's player and shows one line per player
// composing; players with nothing chosen are not listed.
func TestBoardTextGroupNamesPlayers(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	st, _, err := st.GuessBy("🍒🍒🍒🍒", "Ann")
	require.NoError(t, err)
	got := st.BoardText([]Composition{{Player: "Ann", Symbols: []string{"🍎"}}, {Player: "Bob"}, {Player: "Cy", Symbols: []string{"🥝", "🥝", "🥝", "🥝"}}}, true)
	require.Equal(t, rules+"\n\n1. 🍒🍒🍒🍒  🟢⚪⚪⚪  Ann\n\n✏️ Ann: 🍎 _ _ _\n✏️ Cy: 🥝 🥝 🥝 🥝\n9 of 10 attempts left.", got)
}

// A finished board shows the outcome with the code or the points, and no
// composition.
func TestBoardTextFinishedShowsOutcome(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	won, _, err := st.GuessBy("🍎🍌🍇🍒", "Ann")
	require.NoError(t, err)
	require.Equal(t, rules+"\n\n1. 🍎🍌🍇🍒  🟢🟢🟢🟢  Ann\n\n🎉 Code cracked in 1/10 attempt! +100 points. (Ann)",
		won.BoardText([]Composition{{Player: "Bob", Symbols: []string{"🍎"}}}, true))
	gave, err := st.GiveUp()
	require.NoError(t, err)
	require.Equal(t, rules+"\n\n🏳️ Given up. The code was 🍎🍌🍇🍒.", gave.BoardText(nil, false))
	st.Config.MaxAttempts = 1
	lost, _ := play(t, st, "🥝🥝🥝🥝")
	require.Equal(t, rules+"\n\n1. 🥝🥝🥝🥝  ⚪⚪⚪⚪\n\n💥 Out of attempts. The code was 🍎🍌🍇🍒.", lost.BoardText(nil, false))
}

func TestCompositionSlots(t *testing.T) {
	require.Equal(t, "_ _ _ _", Composition{}.Slots(4))
	require.Equal(t, "🍎 🍌 _ _", Composition{Symbols: []string{"🍎", "🍌"}}.Slots(4))
	require.Equal(t, "🍎 🍌 🍇", Composition{Symbols: []string{"🍎", "🍌", "🍇"}}.Slots(3))
}
