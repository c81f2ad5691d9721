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
