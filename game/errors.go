package game

import (
	"errors"
	"fmt"
	"strings"
)

// ErrGameOver is returned (wrapped) by State.Guess and State.GiveUp when the
// game has already been won, lost or given up.
var ErrGameOver = errors.New("the game is over")

// ErrInvalidState is wrapped by State.Validate and DecodeState errors: a
// stored state that breaks the game's invariants or has an unknown version.
var ErrInvalidState = errors.New("invalid game state")

// GuessErrorKind says what is wrong with a rejected guess, so callers can
// branch (for example, ignore ordinary chat text in a group).
type GuessErrorKind int

// The kinds of GuessError.
const (
	// WrongCount: only palette emojis, but not CodeLength of them (Got says
	// how many; zero for an empty or all-whitespace message).
	WrongCount GuessErrorKind = iota + 1
	// NotInPalette: an emoji (Symbol) that is not in the palette.
	NotInPalette
	// Text: a symbol (Symbol) that is not an emoji at all: letters, digits,
	// punctuation. The message is probably not meant as a guess.
	Text
)

// String returns the kind's name: "wrong_count", "not_in_palette" or "text".
func (k GuessErrorKind) String() string {
	switch k {
	case WrongCount:
		return "wrong_count"
	case NotInPalette:
		return "not_in_palette"
	case Text:
		return "text"
	default:
		return fmt.Sprintf("GuessErrorKind(%d)", int(k))
	}
}

// GuessError is a rejected guess. It does not use an attempt. Its Error text
// is plain, user-facing English that says exactly what is wrong.
type GuessError struct {
	Kind GuessErrorKind
	// Got is the number of symbols (grapheme clusters other than
	// whitespace) in the guess; for Text and NotInPalette it counts those
	// up to and including the offending one.
	Got int
	// Need is the code length.
	Need int
	// Symbol is the offending grapheme cluster (NotInPalette, Text).
	Symbol string
	// Palette is the game's palette, for the message.
	Palette []string
}

// Error implements error, e.g. "🐶 is not in the palette; use only 🍎 🍌 🍇 🍒 🍋 🥝".
func (e *GuessError) Error() string {
	pal := strings.Join(e.Palette, " ")
	switch e.Kind {
	case WrongCount:
		if e.Got == 0 {
			return fmt.Sprintf("a guess needs %d emojis from %s, and this message has none", e.Need, pal)
		}
		return fmt.Sprintf("a guess needs exactly %d emojis, and this one has %d", e.Need, e.Got)
	case NotInPalette:
		return fmt.Sprintf("%s is not in the palette; use only %s", e.Symbol, pal)
	case Text:
		return fmt.Sprintf("%q is not an emoji; a guess is %d emojis from %s, spaces allowed", e.Symbol, e.Need, pal)
	default:
		return "invalid guess"
	}
}
