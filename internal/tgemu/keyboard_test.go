package tgemu_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// sendMessage and editMessageText refuse an inline keyboard Telegram would
// refuse, with Telegram's description, and accept a valid one.
func TestInlineKeyboardIsValidatedOnSendAndEdit(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited())
	emu.AddChat(models.Chat{ID: 11})
	b := newBot(t, emu)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 11, Text: "board"})
	require.NoError(t, err)
	tests := []struct {
		name, markup, want string
	}{
		{"valid", `{"inline_keyboard":[[{"text":"🍎","callback_data":"a"}]]}`, ""},
		{"64-byte data", `{"inline_keyboard":[[{"text":"x","callback_data":"` + strings.Repeat("d", 64) + `"}]]}`, ""},
		{"65-byte data", `{"inline_keyboard":[[{"text":"x","callback_data":"` + strings.Repeat("d", 65) + `"}]]}`, "Bad Request: BUTTON_DATA_INVALID"},
		{"empty data", `{"inline_keyboard":[[{"text":"x","callback_data":""}]]}`, "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"},
		{"no action", `{"inline_keyboard":[[{"text":"x"}]]}`, "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"},
		{"empty text", `{"inline_keyboard":[[{"text":"","callback_data":"a"}]]}`, "Bad Request: BUTTON_TEXT_INVALID"},
		{"not JSON", `{"inline_keyboard":`, "Bad Request: can't parse reply keyboard markup JSON object"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{"sendMessage", "editMessageText"} {
				form := url.Values{"chat_id": {"11"}, "text": {"t" + strconv.Itoa(i) + method}, "reply_markup": {tc.markup}}
				if method == "editMessageText" {
					form.Set("message_id", strconv.Itoa(m.ID))
				}
				status, r := rawCall(ctx, t, emu, method, form)
				if tc.want == "" {
					require.Equal(t, http.StatusOK, status, "%s: %s", method, r.Description)
					continue
				}
				require.Equal(t, http.StatusBadRequest, status, method)
				require.Equal(t, tc.want, r.Description, method)
			}
		})
	}
}

// answerCallbackQuery succeeds once within the answer timeout after the tap;
// later, or a second time, it gets Telegram's "query is too old" 400.
func TestCallbackQueryAnswerTimesOut(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now))
	emu.AddChat(models.Chat{ID: 12})
	b := newBot(t, emu)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 12, Text: "pick",
		ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "A", CallbackData: "a"}}}}})
	require.NoError(t, err)
	late, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: 12, MessageID: m.ID, Data: "a"})
	require.NoError(t, err)
	clock.Advance(tgemu.CallbackAnswerTimeout + time.Second)
	_, err = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: late.CallbackQuery.ID})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	require.ErrorContains(t, err, "query is too old and response timeout expired or query ID is invalid")

	onTime, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: 12, MessageID: m.ID, Data: "a"})
	require.NoError(t, err)
	clock.Advance(tgemu.CallbackAnswerTimeout - time.Second)
	ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: onTime.CallbackQuery.ID, Text: "ok"})
	require.NoError(t, err)
	require.True(t, ok)
	answers := emu.CallbackAnswers()
	require.Len(t, answers, 1)
	require.Equal(t, tgemu.CallbackAnswerTimeout-time.Second, answers[0].Time.Sub(answers[0].TapTime))
}

// Edits count against the per-chat limit like messages (a burst of edits
// gets 429), and answerCallbackQuery counts against nothing.
func TestEditsCountAgainstLimitsAnswersDoNot(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now), tgemu.WithLimits(tgemu.ScaledLimits(30, 1, 20)))
	emu.AddChat(models.Chat{ID: 13})
	b := newBot(t, emu)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 13, Text: "v0"})
	require.NoError(t, err)
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 13, MessageID: m.ID, Text: "v1"})
	var tm *bot.TooManyRequestsError
	require.ErrorAs(t, err, &tm, "an edit in the same second as the message")
	for range 5 {
		u, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: 13, MessageID: m.ID, Data: "a"})
		require.NoError(t, err)
		_, err = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: u.CallbackQuery.ID})
		require.NoError(t, err, "answers are not rate limited")
	}
	clock.Advance(time.Second)
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 13, MessageID: m.ID, Text: "v1"})
	require.NoError(t, err)
	require.Len(t, emu.Messages(13)[0].Edits, 1, "only the edit that was admitted")
}

// A deleted message answers edits "message to edit not found"; an old group
// message "message can't be edited".
func TestEditOfDeletedOrOldMessageIsRefused(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited())
	emu.AddChat(models.Chat{ID: -14})
	b := newBot(t, emu)
	a, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: -14, Text: "a"})
	require.NoError(t, err)
	o, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: -14, Text: "o"})
	require.NoError(t, err)
	require.True(t, emu.DeleteMessage(-14, a.ID))
	require.True(t, emu.MakeUneditable(-14, o.ID))
	require.False(t, emu.DeleteMessage(-14, 999))
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: -14, MessageID: a.ID, Text: "a2"})
	require.ErrorContains(t, err, "Bad Request: message to edit not found")
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: -14, MessageID: o.ID, Text: "o2"})
	require.ErrorContains(t, err, "Bad Request: message can't be edited")
}
