package gameui

import (
	"testing"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/i18n"
)

// BenchmarkBoardText is the CPU a board render costs from the catalog
// (what a tap or a guess renders once) against package game's English
// one: the localization's share of handling an update.
//
// Run: go test -run '^$' -bench BoardText ./internal/gameui/
func BenchmarkBoardText(b *testing.B) {
	cat, err := i18n.New()
	if err != nil {
		b.Fatal(err)
	}
	st := game.State{ID: "0123456789abcdef", Config: game.DefaultConfig(), Secret: []string{"🍎", "🍌", "🍇", "🍒"}, Status: game.Playing}
	for _, g := range []string{"🍎🍎🍎🍎", "🍌🍎🍇🍒", "🍋🍋🍋🍋"} {
		if st, _, err = st.GuessBy(g, "Ann"); err != nil {
			b.Fatal(err)
		}
	}
	comps := []game.Composition{{Player: "Ann", Symbols: []string{"🍎"}}}
	b.Run("game", func(b *testing.B) {
		for b.Loop() {
			_ = st.BoardText(comps, true)
		}
	})
	for _, l := range []string{"en", "ru", "fa"} {
		b.Run("catalog_"+l, func(b *testing.B) {
			t := cat.For(l)
			for b.Loop() {
				_ = boardText(t, st, comps, true)
			}
		})
	}
}

// BenchmarkGuessTexts is the CPU of the texts one typed guess renders (its
// answer, then the board edited in place: resultText and boardText), from
// package game's English (no catalog: the bot before localization) and
// from the catalog in English, Russian and Persian (Persian's numbers in
// its digits): the localization's cost per guess, the heaviest update of
// a game for texts. The bench's "languages" section reads its ns/op.
//
// Run: go test -run '^$' -bench GuessTexts ./internal/gameui/
func BenchmarkGuessTexts(b *testing.B) {
	cat, err := i18n.New()
	if err != nil {
		b.Fatal(err)
	}
	st := game.State{ID: "0123456789abcdef", Config: game.DefaultConfig(), Secret: []string{"🍎", "🍌", "🍇", "🍒"}, Status: game.Playing}
	for _, g := range []string{"🍎🍎🍎🍎", "🍌🍎🍇🍒"} {
		if st, _, err = st.Guess(g); err != nil {
			b.Fatal(err)
		}
	}
	st, res, err := st.Guess("🍋🍋🍋🍋")
	if err != nil {
		b.Fatal(err)
	}
	comps := []game.Composition{{Player: "Ann"}}
	b.Run("game", func(b *testing.B) {
		for b.Loop() {
			_ = res.Text()
			_ = st.BoardText(comps, false)
		}
	})
	for _, l := range []string{"en", "ru", "fa"} {
		b.Run("catalog_"+l, func(b *testing.B) {
			t := cat.For(l)
			for b.Loop() {
				_ = resultText(t, res)
				_ = boardText(t, st, comps, false)
			}
		})
	}
}
