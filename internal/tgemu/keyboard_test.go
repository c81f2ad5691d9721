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
	emu := testkit.NewEmulator(t, testkit.Unlimited("keyboard validation, not the limits (limits_test.go)"))
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
	emu := testkit.NewEmulator(t, testkit.Unlimited("keyboard validation, not the limits (limits_test.go)"))
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

// A button's action is the first action field in the Bot API server's
// order (url, callback_data, callback_game, pay, switch_inline_query...,
// login_url, web_app, copy_text); unknown fields are not actions; each
// field read has its type; the answers are the server's texts.
func TestInlineKeyboardButtonActions(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("keyboard validation, not the limits (limits_test.go)"))
	emu.AddChat(models.Chat{ID: 15})
	const unallowed = "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
	long := strings.Repeat("d", 65)
	tests := []struct {
		name, button, want string
	}{
		{"misspelled callback_date is no action", `{"text":"x","callback_date":"a"}`, unallowed},
		{"empty url and callback_data are no action", `{"text":"x","url":"","callback_data":""}`, unallowed},
		{"go-telegram/bot's shape: callback_data and an empty copy_text", `{"text":"x","callback_data":"a","copy_text":{"text":""}}`, ""},
		{"only an empty copy_text (unknown; taken as no action)", `{"text":"x","copy_text":{"text":""}}`, unallowed},
		{"copy_text", `{"text":"x","copy_text":{"text":"c"}}`, ""},
		{"url before callback_data: callback_data never read", `{"text":"x","url":"https://t.me","callback_data":"` + long + `"}`, ""},
		{"callback_data over 64 bytes", `{"text":"x","callback_data":"` + long + `"}`, "Bad Request: BUTTON_DATA_INVALID"},
		{"callback_data as a number", `{"text":"x","callback_data":7}`, ""},
		{"url null", `{"text":"x","url":null,"callback_data":"a"}`, `Bad Request: can't parse inline keyboard button: Field "url" must be of type String`},
		{"pay, whatever its value", `{"text":"x","pay":false}`, ""},
		{"callback_game", `{"text":"x","callback_game":{}}`, ""},
		{"switch_inline_query may be empty", `{"text":"x","switch_inline_query":""}`, ""},
		{"switch_inline_query not a string", `{"text":"x","switch_inline_query":true}`, `Bad Request: can't parse inline keyboard button: Field "switch_inline_query" must be of type String`},
		{"switch_inline_query_chosen_chat", `{"text":"x","switch_inline_query_chosen_chat":{"allow_user_chats":true}}`, ""},
		{"web_app", `{"text":"x","web_app":{"url":"https://example.org"}}`, ""},
		{"web_app not an object", `{"text":"x","web_app":"https://example.org"}`, `Bad Request: can't parse inline keyboard button: Field "web_app" must be of type Object`},
		{"login_url without url", `{"text":"x","login_url":{}}`, `Bad Request: can't parse inline keyboard button: Can't find field "url"`},
		{"no text", `{"callback_data":"a"}`, `Bad Request: can't parse inline keyboard button: Can't find field "text"`},
		{"empty text", `{"text":"","url":"https://t.me"}`, "Bad Request: BUTTON_TEXT_INVALID"},
		{"not an object", `"x"`, "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must be an Object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"chat_id": {"15"}, "text": {"t"}, "reply_markup": {`{"inline_keyboard":[[` + tc.button + `]]}`}}
			status, r := rawCall(ctx, t, emu, "sendMessage", form)
			if tc.want == "" {
				require.Equal(t, http.StatusOK, status, r.Description)
				return
			}
			require.Equal(t, http.StatusBadRequest, status)
			require.Equal(t, tc.want, r.Description)
		})
	}
	markups := []struct{ markup, want string }{
		{`[]`, "Bad Request: object expected as reply markup"},
		{`{"inline_keyboard":{}}`, `Bad Request: field "inline_keyboard" must be of type Array`},
		{`{"inline_keyboard":[{"text":"x","callback_data":"a"}]}`, `Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays`},
	}
	for _, tc := range markups {
		status, r := rawCall(ctx, t, emu, "sendMessage", url.Values{"chat_id": {"15"}, "text": {"t"}, "reply_markup": {tc.markup}})
		require.Equal(t, http.StatusBadRequest, status, tc.markup)
		require.Equal(t, tc.want, r.Description, tc.markup)
	}
}

// answerCallbackQuery: a text over 200 characters is 400 "MESSAGE_TOO_LONG"
// and leaves the query unanswered; an unknown id is "query is too old".
func TestAnswerCallbackQueryText(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	emu.AddChat(models.Chat{ID: 16})
	b := newBot(t, emu)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 16, Text: "pick",
		ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "A", CallbackData: "a"}}}}})
	require.NoError(t, err)
	u, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: 16, MessageID: m.ID, Data: "a"})
	require.NoError(t, err)
	tests := []struct {
		name, id, text, want string
	}{
		{"201 characters", u.CallbackQuery.ID, strings.Repeat("x", tgemu.MaxCallbackAnswerText+1), "Bad Request: MESSAGE_TOO_LONG"},
		{"unknown id", "nope", "ok", "Bad Request: query is too old and response timeout expired or query ID is invalid"},
		{"200 characters", u.CallbackQuery.ID, strings.Repeat("x", tgemu.MaxCallbackAnswerText), ""},
		{"answered already", u.CallbackQuery.ID, "ok", "Bad Request: query is too old and response timeout expired or query ID is invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, r := rawCall(ctx, t, emu, "answerCallbackQuery", url.Values{"callback_query_id": {tc.id}, "text": {tc.text}})
			if tc.want == "" {
				require.Equal(t, http.StatusOK, status, r.Description)
				return
			}
			require.Equal(t, http.StatusBadRequest, status)
			require.Equal(t, tc.want, r.Description)
		})
	}
	require.Len(t, emu.CallbackAnswers(), 1)
}
