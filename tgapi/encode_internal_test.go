package tgapi

import (
	"encoding/json"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
)

// sendParams builds the params FuzzSendMessageIsJSONMarshals varies: the
// fields the worker sets, and the ones appendSendMessage leaves to
// json.Marshal (flags bits 5 and 6).
func sendParams(chat int64, text, parseMode string, flags uint8, replyTo int, markup []byte) *bot.SendMessageParams {
	p := &bot.SendMessageParams{ChatID: chat, Text: text, ParseMode: models.ParseMode(parseMode),
		DisableNotification: flags&1 != 0, ProtectContent: flags&2 != 0, AllowPaidBroadcast: flags&4 != 0}
	if flags&8 != 0 {
		p.ChatID = int(chat)
	}
	if flags&16 != 0 {
		p.ReplyParameters = &models.ReplyParameters{MessageID: replyTo, AllowSendingWithoutReply: replyTo%2 == 0}
	}
	if flags&32 != 0 {
		p.MessageThreadID = replyTo
	}
	if flags&64 != 0 {
		p.ChatID = "@channel"
	}
	if markup != nil {
		p.ReplyMarkup = json.RawMessage(markup)
	}
	return p
}

// Where appendSendMessage takes a sendMessage's params, it writes
// json.Marshal's bytes; where json.Marshal fails, it does not take them.
func FuzzSendMessageIsJSONMarshals(f *testing.F) {
	kb := []byte(`{"inline_keyboard":[[{"text":"🍎 <a> & b","callback_data":"g:1:a"}]]}`)
	f.Add(int64(1000000001), "Lazy broadcast benchmark", "", uint8(4), 0, []byte(nil))
	f.Add(int64(-1001234567890), "🔐 <b>New</b> code & \"more\"\n\ttab \\ \x01 \x7f \u2028 \u2029 \xff end", "HTML", uint8(1|16), 42, kb)
	f.Add(int64(5), "", "MarkdownV2", uint8(2|8|16), 7, []byte(" { \"a\" : [ 1 , 2 ] } "))
	f.Add(int64(5), "x", "", uint8(0), 0, []byte(`{"a":`))
	f.Add(int64(5), "x", "", uint8(0), 0, []byte{})
	f.Add(int64(5), "x", "", uint8(32), 3, []byte(nil))
	f.Add(int64(5), "x", "<i>", uint8(64), 0, []byte(`"\u2028<"`))
	f.Fuzz(func(t *testing.T, chat int64, text, parseMode string, flags uint8, replyTo int, markup []byte) {
		p := sendParams(chat, text, parseMode, flags, replyTo, markup)
		got, ok := appendSendMessage(nil, p)
		want, err := json.Marshal(p)
		if !ok {
			return
		}
		require.NoError(t, err, "appendSendMessage took params json.Marshal refuses")
		require.Equal(t, string(want), string(got))
	})
}

// The worker's sends (a broadcast copy, a reply with a keyboard and a
// quote of the message it answers) are encoded without reflection, and the
// body a call sends is json.Marshal's; params of other shapes go to
// json.Marshal.
func TestTheWorkersSendsAreEncodedWithoutReflection(t *testing.T) {
	kb := json.RawMessage(`{"inline_keyboard":[[{"text":"🍎","callback_data":"g:1:a"}]]}`)
	for _, c := range []struct {
		name string
		p    *bot.SendMessageParams
		fast bool
	}{
		{"a paid broadcast copy", &bot.SendMessageParams{ChatID: int64(1000000001), Text: "Hello", AllowPaidBroadcast: true}, true},
		{"a reply with a keyboard", &bot.SendMessageParams{ChatID: int64(-100123), Text: "<b>Board</b>", ParseMode: models.ParseModeHTML,
			DisableNotification: true, ReplyMarkup: kb,
			ReplyParameters: &models.ReplyParameters{MessageID: 9, AllowSendingWithoutReply: true}}, true},
		{"a chat given by username", &bot.SendMessageParams{ChatID: "@channel", Text: "x"}, false},
		{"entities", &bot.SendMessageParams{ChatID: int64(1), Text: "x", Entities: []models.MessageEntity{{Type: "bold", Length: 1}}}, false},
		{"a reply quoting its message", &bot.SendMessageParams{ChatID: int64(1), Text: "x",
			ReplyParameters: &models.ReplyParameters{MessageID: 9, Quote: "q"}}, false},
		{"a reply to another chat's message", &bot.SendMessageParams{ChatID: int64(1), Text: "x",
			ReplyParameters: &models.ReplyParameters{MessageID: 9, ChatID: int64(2)}}, false},
		{"a markup of another type", &bot.SendMessageParams{ChatID: int64(1), Text: "x",
			ReplyMarkup: models.ReplyKeyboardRemove{RemoveKeyboard: true}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, fast := appendSendMessage(nil, c.p)
			require.Equal(t, c.fast, fast)
			got, err := encodeParams(c.p)
			require.NoError(t, err)
			want, err := json.Marshal(c.p)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		})
	}
}
