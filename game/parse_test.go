package game

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseGuessAccepts(t *testing.T) {
	pal := DefaultConfig().Palette
	want := []string{"🍎", "🍌", "🍇", "🍒"}
	tests := []struct {
		name, text string
		want       []string
	}{
		{"no spaces", "🍎🍌🍇🍒", want},
		{"spaces", "🍎 🍌 🍇 🍒", want},
		{"leading and trailing space", "  🍎 🍌 🍇 🍒 \n", want},
		{"unicode whitespace", "🍎\u00a0🍌\t🍇\u3000🍒\r\n", want},
		{"trailing FE0F on each", "🍎\ufe0f🍌\ufe0f🍇\ufe0f🍒\ufe0f", want},
		{"lone FE0F after space", "🍎 \ufe0f🍌🍇🍒", want},
		{"leading lone FE0F", "\ufe0f🍎🍌🍇🍒", want},
		{"FE0E text selector", "🍎\ufe0e🍌🍇🍒", want},
		{"repeats", "🥝🥝🥝🥝", []string{"🥝", "🥝", "🥝", "🥝"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGuess(tc.text, pal, 4)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseGuessPaletteWithFE0F(t *testing.T) {
	// ❤️ and ☀️ are spelled with FE0F in the palette; users' clients may
	// drop it, or add it where the palette has none (⭐).
	pal := []string{"❤️", "☀️", "⭐", "🍎"}
	got, err := ParseGuess("❤ ☀️ ⭐️ ❤️", pal, 4)
	require.NoError(t, err)
	require.Equal(t, []string{"❤️", "☀️", "⭐", "❤️"}, got, "result uses the palette's spelling")
}

func TestParseGuessRejects(t *testing.T) {
	pal := DefaultConfig().Palette
	tests := []struct {
		name, text string
		kind       GuessErrorKind
		got        int
		symbol     string
		msg        string // substring of Error()
	}{
		{"three", "🍎🍌🍇", WrongCount, 3, "", "needs exactly 4 emojis, and this one has 3"},
		{"five", "🍎 🍌 🍇 🍒 🍋", WrongCount, 5, "", "this one has 5"},
		{"empty", "", WrongCount, 0, "", "has none"},
		{"only spaces", " \t\n", WrongCount, 0, "", "has none"},
		{"plain text", "hello", Text, 1, "h", `"h" is not an emoji`},
		{"mixed text and emojis", "🍎🍌 and 🍇🍒", Text, 3, "a", `"a" is not an emoji`},
		{"digits", "1234", Text, 1, "1", "not an emoji"},
		{"comma separated", "🍎,🍌,🍇,🍒", Text, 2, ",", "not an emoji"},
		{"emoji not in palette", "🍎🍌🍇🐶", NotInPalette, 4, "🐶", "🐶 is not in the palette; use only 🍎 🍌 🍇 🍒 🍋 🥝"},
		{"skin tone is one symbol", "👍🏽🍌🍇🍒", NotInPalette, 1, "👍🏽", "👍🏽 is not in the palette"},
		{"ZWJ family is one symbol", "🍎👨‍👩‍👧🍇🍒", NotInPalette, 2, "👨‍👩‍👧", "👨‍👩‍👧 is not"},
		{"flag is one symbol", "🍎🍌🍇🇫🇷", NotInPalette, 4, "🇫🇷", "🇫🇷 is not"},
		{"keycap", "1️⃣🍌🍇🍒", NotInPalette, 1, "1️⃣", "is not in the palette"},
		{"wrong count and alien: alien reported", "🍎🐶", NotInPalette, 2, "🐶", "🐶"},
		{"invalid UTF-8 is text", "🍎🍌🍇\xff", Text, 4, "\xff", `"\xff" is not an emoji`},
		{"text wins over alien", "🐶 hi", Text, 2, "h", "not an emoji"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGuess(tc.text, pal, 4)
			require.Nil(t, got)
			var ge *GuessError
			require.True(t, errors.As(err, &ge), "error %v is a *GuessError", err)
			require.Equal(t, tc.kind, ge.Kind)
			require.Equal(t, tc.got, ge.Got)
			require.Equal(t, 4, ge.Need)
			require.Equal(t, tc.symbol, ge.Symbol)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestGuessErrorKindString(t *testing.T) {
	require.Equal(t, "wrong_count", WrongCount.String())
	require.Equal(t, "not_in_palette", NotInPalette.String())
	require.Equal(t, "text", Text.String())
	require.Equal(t, "GuessErrorKind(9)", GuessErrorKind(9).String())
}

func FuzzParseGuess(f *testing.F) {
	for _, s := range []string{
		"🍎🍌🍇🍒", "🍎 🍌 🍇 🍒", "🍎\ufe0f🍌🍇🍒", "hello", "🍎🍌🍇", "👍🏽🍌🍇🍒",
		"🍎👨‍👩‍👧🍇🍒", "\ufe0f\ufe0f", "", "\xff\xfe", "🍎\u200d🍌🍇🍒",
	} {
		f.Add(s)
	}
	pal := DefaultConfig().Palette
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseGuess(text, pal, 4)
		if err != nil {
			var ge *GuessError
			if !errors.As(err, &ge) {
				t.Fatalf("error %v is not a *GuessError", err)
			}
			if got != nil {
				t.Fatalf("rejected guess returned symbols %q", got)
			}
			if ge.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if len(got) != 4 {
			t.Fatalf("accepted %q as %d symbols", text, len(got))
		}
		for _, s := range got {
			if indexOf(pal, s) < 0 {
				t.Fatalf("accepted %q with non-palette symbol %q", text, s)
			}
		}
		again, err := ParseGuess(strings.Join(got, " "), pal, 4)
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("accepted %q as %q, which does not parse back: %q, %v", text, got, again, err)
		}
	})
}
