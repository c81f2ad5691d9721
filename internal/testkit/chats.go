package testkit

import (
	"encoding/json"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// audienceBatch is how many chats one round trip of AddAudience writes.
const audienceBatch = 1000

// AddAudience makes the n private chats first..first+n-1 known: written
// straight into the broadcast audience's buckets under hash tag tag (as if
// each had sent the bot an update; chats.Audience.AddCmd, audienceBatch a
// round trip), and registered in emu unless it is nil (an emulator that
// takes any chat: tgemu.WithAllowAnyChat). A large audience (tens of
// thousands) takes a second or two, not one round trip a chat.
func AddAudience(t testing.TB, c valkey.Client, tag string, emu *tgemu.Emulator, first int64, n int) {
	t.Helper()
	aud := chats.NewAudience(c, tag)
	cmds := make(valkey.Commands, 0, audienceBatch)
	flush := func() {
		for _, r := range c.DoMulti(t.Context(), cmds...) {
			require.NoError(t, r.Error())
		}
		cmds = cmds[:0]
	}
	for i := range n {
		chat := first + int64(i)
		if emu != nil {
			emu.AddChat(models.Chat{ID: chat, Type: models.ChatTypePrivate, FirstName: "U"})
		}
		if cmds = append(cmds, aud.AddCmd(chat)); len(cmds) == audienceBatch {
			flush()
		}
	}
	if len(cmds) > 0 {
		flush()
	}
}

// Keyboard reads an inline keyboard (a message's reply_markup JSON, "" for
// none): its buttons' labels by row, and each label's callback data (at
// most 64 bytes, as Telegram takes it, or t fails).
func Keyboard(t testing.TB, markup string) ([][]string, map[string]string) {
	t.Helper()
	if markup == "" {
		return nil, nil
	}
	var kb models.InlineKeyboardMarkup
	require.NoError(t, json.Unmarshal([]byte(markup), &kb))
	var rows [][]string
	data := map[string]string{}
	for _, r := range kb.InlineKeyboard {
		var row []string
		for _, b := range r {
			row = append(row, b.Text)
			data[b.Text] = b.CallbackData
			require.LessOrEqual(t, len(b.CallbackData), 64)
		}
		rows = append(rows, row)
	}
	return rows, data
}

// CopiesIn counts chat's messages on emu whose text is text (a broadcast's
// copies to it: 1 is once, 0 lost, more repeated).
func CopiesIn(emu *tgemu.Emulator, chat int64, text string) int {
	n := 0
	for _, m := range emu.Messages(chat) {
		if m.Text == text {
			n++
		}
	}
	return n
}
