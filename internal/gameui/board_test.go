package gameui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/game"
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
// description.
func TestHelpListsTheCommandMenu(t *testing.T) {
	t.Parallel()
	h := helpText(game.DefaultConfig())
	require.True(t, strings.HasPrefix(h, game.HelpText(game.DefaultConfig())+"\n\nCommands:\n"))
	for _, c := range Commands() {
		require.Contains(t, h, "/"+c.Command+" — "+c.Description+"\n")
	}
	require.True(t, strings.HasSuffix(h, "In a group, guess with /guess or by replying to one of my messages."))
}
