package gameui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/internal/tapdata"
)

// The board's keyboard: the palette in rows of three, then ⌫, ☑️ (✅ once
// a composition is complete) and 🏳️; every button is signed for its chat
// and game (kind tapdata.KindGame) and fits Telegram's 64 bytes.
func TestBoardKeyboardIsSignedForItsChatAndGame(t *testing.T) {
	t.Parallel()
	codec := tapdata.New("123:gameui-test-token_0000000000000000")
	u := &UI{codec: codec}
	st := game.State{ID: "0123456789abcdef", Config: game.DefaultConfig()}
	const chat = int64(-1001234567890)
	for _, tc := range []struct {
		canSubmit bool
		submit    string
	}{{false, "☑️"}, {true, "✅"}} {
		kb, err := u.keyboard(chat, st, tc.canSubmit)
		require.NoError(t, err)
		var labels []string
		for _, row := range kb.InlineKeyboard {
			var r []string
			for _, b := range row {
				r = append(r, b.Text)
				require.LessOrEqual(t, len(b.CallbackData), tapdata.MaxData)
				d, err := codec.Decode(b.CallbackData, chat)
				require.NoError(t, err, b.Text)
				require.Equal(t, tapdata.KindGame, d.Kind)
				require.Equal(t, st.ID, d.Scope)
			}
			labels = append(labels, strings.Join(r, " "))
		}
		require.Equal(t, []string{"🍎 🍌 🍇", "🍒 🍋 🥝", "⌫ " + tc.submit + " 🏳️"}, labels)
	}
}

// /help lists the rules, then every command of the menu with its
// description, in each language.
func TestHelpListsTheCommandMenu(t *testing.T) {
	t.Parallel()
	cat, err := i18n.New()
	require.NoError(t, err)
	h := helpText(cat.For("en"), game.DefaultConfig())
	require.True(t, strings.HasPrefix(h, game.HelpText(game.DefaultConfig())+"\n\nCommands:\n"))
	require.True(t, strings.HasSuffix(h, "In a group, guess with /guess or by replying to one of my messages."))
	for _, l := range i18n.Languages() {
		h := helpText(cat.For(l), game.DefaultConfig())
		cmds := commands(cat.For(l))
		require.Len(t, cmds, 7)
		for _, c := range cmds {
			require.Contains(t, h, "/"+c.Command+" — "+c.Description+"\n", l)
		}
	}
	require.Contains(t, helpText(cat.For("ru"), game.DefaultConfig()), "У вас 10 попыток")
}

// In English the catalog renders package game's texts byte for byte:
// boards (private and group, playing, won, lost, given up), replies to
// guesses, rejected guesses and the rules.
func TestEnglishCatalogRendersPackageGamesTexts(t *testing.T) {
	t.Parallel()
	cat, err := i18n.New()
	require.NoError(t, err)
	en := cat.For("en")
	cfg := game.Config{CodeLength: 4, MaxAttempts: 3, Palette: game.DefaultConfig().Palette}.WithDefaults()
	st := game.State{ID: "0123456789abcdef", Config: cfg, Secret: []string{"🍎", "🍌", "🍇", "🍒"}, Status: game.Playing}
	states := map[string]game.State{"fresh": st}
	var results []game.Result
	cur := st
	for i, g := range []string{"🍎🍎🍎🍎", "🍌🍎🍇🍒", "🍋🍋🍋🍋"} {
		next, res, err := cur.GuessBy(g, "Ann")
		require.NoError(t, err)
		results = append(results, res)
		cur = next
		states[fmt.Sprintf("after %d", i+1)] = cur
	}
	won, res, err := states["after 1"].GuessBy("🍎🍌🍇🍒", "Bob")
	require.NoError(t, err)
	results = append(results, res)
	states["won"] = won
	one, res, err := game.State{ID: "x", Config: cfg, Secret: st.Secret, Status: game.Playing}.Guess("🍎🍌🍇🍒")
	require.NoError(t, err)
	results = append(results, res)
	states["won at once"] = one
	gaveUp, err := states["after 1"].GiveUp()
	require.NoError(t, err)
	states["gave up"] = gaveUp
	comps := []game.Composition{{Player: "Ann", Symbols: []string{"🍎"}}, {Player: "Bob"}}
	for name, s := range states {
		require.Equal(t, s.Board(), stateBoard(en, s), name)
		for _, group := range []bool{false, true} {
			for _, c := range [][]game.Composition{nil, comps} {
				require.Equal(t, s.BoardText(c, group), boardText(en, s, c, group), "%s group=%v", name, group)
			}
		}
	}
	for _, r := range results {
		require.Equal(t, r.Text(), resultText(en, r))
	}
	for _, g := range []string{"", "🍎", "🍎🍎🍎🍎🍎", "🐶🍎🍎🍎", "abcd", "🍎 x"} {
		_, _, err := st.Guess(g)
		ge, ok := errors.AsType[*game.GuessError](err)
		require.True(t, ok, g)
		require.Equal(t, "❌ Not a valid guess: "+ge.Error()+". No attempt used.", guessErrorText(en, ge), g)
	}
	require.Equal(t, "❌ Not a valid guess: invalid guess. No attempt used.", guessErrorText(en, &game.GuessError{}))
	require.Equal(t, game.GiveUpText(st.Secret), giveUpText(en, st.Secret))
}

// The English texts exported for other packages' tests are the catalog's.
func TestExportedTextsAreTheEnglishCatalogs(t *testing.T) {
	t.Parallel()
	cat, err := i18n.New()
	require.NoError(t, err)
	en := cat.For("en")
	for id, want := range map[string]string{"no_game": TextNoGame, "guess_usage": TextGuessUsage, "top_empty": TextTopEmpty,
		"toast_game_over": ToastGameOver, "toast_empty": ToastEmpty, "toast_gave_up": ToastGaveUp} {
		require.Equal(t, want, en.T(id, nil), id)
	}
	require.Equal(t, ToastFull, en.N("toast_full", 4, map[string]any{"N": 4}))
}

// The menus: one per language, English first, each with its commands and
// descriptions in that language, within Telegram's limits.
func TestMenusSayTheCommandsInEachLanguage(t *testing.T) {
	t.Parallel()
	cat, err := i18n.New()
	require.NoError(t, err)
	menus := Menus(cat)
	require.Len(t, menus, len(i18n.Languages()))
	require.Equal(t, "en", menus[0].Lang)
	for _, m := range menus {
		require.Len(t, m.Commands, 7, m.Lang)
		require.NotEmpty(t, m.Description)
		require.LessOrEqual(t, utf8.RuneCountInString(m.Description), 512, m.Lang)
		require.LessOrEqual(t, utf8.RuneCountInString(m.ShortDescription), 120, m.Lang)
	}
	require.Equal(t, "Начать новую игру", menus[1].Commands[0].Description)
	require.Equal(t, "شروع بازی جدید", menus[4].Commands[0].Description)
}
