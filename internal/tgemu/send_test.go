package tgemu_test

import (
	"encoding/json"
	"errors"
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
	"github.com/codemojex/codemojex/notifier/tgtext"
)

func TestSendMessageSuccess(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now), testkit.Unlimited("sendMessage's validation, not its limits (limits_test.go)"))
	emu.AddChat(models.Chat{ID: 100, FirstName: "Ann", Username: "ann"})
	emu.AddChat(models.Chat{ID: -200, Title: "Players"})
	b := newBot(t, emu)

	m1, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 100, Text: "<b>hi</b> &amp; bye", ParseMode: models.ParseModeHTML})
	require.NoError(t, err)
	clock.Advance(1500 * time.Millisecond)
	m2, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: "@ann", Text: "second",
		ReplyParameters: &models.ReplyParameters{MessageID: m1.ID}})
	require.NoError(t, err)
	g1, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: -200, Text: "group"})
	require.NoError(t, err)

	require.Equal(t, 1, m1.ID)
	require.Equal(t, 2, m2.ID)
	require.Equal(t, 1, g1.ID, "message ids are per chat")
	require.Equal(t, "hi & bye", m1.Text, "returned text has the markup removed, like Telegram")
	require.Equal(t, int(clock.Now().Add(-1500*time.Millisecond).Unix()), m1.Date)
	require.Equal(t, models.Chat{ID: 100, Type: models.ChatTypePrivate, FirstName: "Ann", Username: "ann"}, m1.Chat)
	require.Equal(t, models.Chat{ID: -200, Type: models.ChatTypeGroup, Title: "Players"}, g1.Chat)
	require.NotNil(t, m1.From)
	require.True(t, m1.From.IsBot)
	require.NotNil(t, m2.ReplyToMessage)
	require.Equal(t, 1, m2.ReplyToMessage.ID)

	msgs := emu.Messages(100)
	require.Len(t, msgs, 2)
	require.Equal(t, tgemu.Message{ChatID: 100, ID: 1, Time: clock.Now().Add(-1500 * time.Millisecond),
		Text: "<b>hi</b> &amp; bye", ParseMode: "HTML"}, msgs[0])
	require.Equal(t, 1, msgs[1].ReplyToMessageID)
	require.Equal(t, clock.Now(), msgs[1].Time)
	require.Len(t, emu.AllMessages(), 3)

	st := emu.Stats()
	require.Equal(t, 3, st.Sent)
	require.Equal(t, 3, st.SendRequests)
	require.Zero(t, st.Rejected)
}

func TestSendMessageErrors(t *testing.T) {
	const (
		private     = int64(10)
		blocked     = int64(11)
		deactivated = int64(12)
		group       = int64(-20)
		kicked      = int64(-21)
		kickedSuper = int64(-1002000000021)
		migrated    = int64(-22)
		supergroup  = int64(-1001000000022)
	)
	tests := []struct {
		name    string
		params  bot.SendMessageParams
		is      error  // errors.Is target
		desc    string // full Telegram description
		migrate int64  // expected *bot.MigrateError.MigrateToChatID
	}{
		{name: "chat_id missing", params: bot.SendMessageParams{Text: "x"}, is: bot.ErrorBadRequest, desc: "Bad Request: chat_id is empty"},
		{name: "text empty", params: bot.SendMessageParams{ChatID: private}, is: bot.ErrorBadRequest, desc: "Bad Request: message text is empty"},
		// Only an empty text parameter is the Bot API server's "message text is
		// empty"; a blank one reaches TDLib, which refuses it as "text must be
		// non-empty" (telegram-bot-api Client.cpp get_input_message_text; TDLib
		// MessageEntity.cpp fix_formatted_text).
		{name: "text blank", params: bot.SendMessageParams{ChatID: private, Text: " \n "}, is: bot.ErrorBadRequest, desc: "Bad Request: text must be non-empty"},
		{name: "text too long", params: bot.SendMessageParams{ChatID: private, Text: strings.Repeat("a", 4097)}, is: bot.ErrorBadRequest, desc: "Bad Request: message is too long"},
		{name: "unknown chat", params: bot.SendMessageParams{ChatID: 999, Text: "x"}, is: bot.ErrorBadRequest, desc: "Bad Request: chat not found"},
		{name: "unknown username", params: bot.SendMessageParams{ChatID: "@nobody", Text: "x"}, is: bot.ErrorBadRequest, desc: "Bad Request: chat not found"},
		{name: "blocked", params: bot.SendMessageParams{ChatID: blocked, Text: "x"}, is: bot.ErrorForbidden, desc: "Forbidden: bot was blocked by the user"},
		{name: "deactivated", params: bot.SendMessageParams{ChatID: deactivated, Text: "x"}, is: bot.ErrorForbidden, desc: "Forbidden: user is deactivated"},
		{name: "kicked from group", params: bot.SendMessageParams{ChatID: kicked, Text: "x"}, is: bot.ErrorForbidden, desc: "Forbidden: bot was kicked from the group chat"},
		{name: "kicked from supergroup", params: bot.SendMessageParams{ChatID: kickedSuper, Text: "x"}, is: bot.ErrorForbidden, desc: "Forbidden: bot was kicked from the supergroup chat"},
		{name: "migrated group", params: bot.SendMessageParams{ChatID: migrated, Text: "x"}, desc: "Bad Request: group chat was upgraded to a supergroup chat", migrate: supergroup},
		{name: "html unbalanced", params: bot.SendMessageParams{ChatID: private, Text: "<b>bold", ParseMode: models.ParseModeHTML},
			is: bot.ErrorBadRequest, desc: "Bad Request: can't parse entities: Can't find end tag corresponding to start tag b"},
		{name: "html unknown tag", params: bot.SendMessageParams{ChatID: private, Text: "<div>x</div>", ParseMode: models.ParseModeHTML},
			is: bot.ErrorBadRequest, desc: `Bad Request: can't parse entities: Unsupported start tag "div" at byte offset 0`},
		{name: "markdownv2 unescaped", params: bot.SendMessageParams{ChatID: private, Text: "Score: 1.5", ParseMode: models.ParseModeMarkdown},
			is: bot.ErrorBadRequest, desc: `Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\'`},
		{name: "markdown unclosed", params: bot.SendMessageParams{ChatID: private, Text: "*bold", ParseMode: models.ParseModeMarkdownV1},
			is: bot.ErrorBadRequest, desc: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0"},
		{name: "unsupported parse mode", params: bot.SendMessageParams{ChatID: private, Text: "x", ParseMode: "BBCode"}, is: bot.ErrorBadRequest, desc: "Bad Request: unsupported parse_mode"},
		{name: "reply to missing message", params: bot.SendMessageParams{ChatID: private, Text: "x", ReplyParameters: &models.ReplyParameters{MessageID: 77}},
			is: bot.ErrorBadRequest, desc: "Bad Request: message to be replied not found"},
		{name: "group still fine", params: bot.SendMessageParams{ChatID: group, Text: "x"}},
		{name: "reply to missing allowed", params: bot.SendMessageParams{ChatID: private, Text: "x",
			ReplyParameters: &models.ReplyParameters{MessageID: 77, AllowSendingWithoutReply: true}}},
	}

	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("sendMessage's validation, not its limits (limits_test.go)"))
	for _, id := range []int64{private, group} {
		emu.AddChat(models.Chat{ID: id})
	}
	emu.SetChatStatus(blocked, tgemu.ChatBlocked)
	emu.SetChatStatus(deactivated, tgemu.ChatDeactivated)
	emu.SetChatStatus(kicked, tgemu.ChatKicked)
	emu.SetChatStatus(kickedSuper, tgemu.ChatKicked)
	emu.MigrateChat(migrated, supergroup)
	b := newBot(t, emu)

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(emu.SendRequests())
			_, err := b.SendMessage(ctx, &tc.params)
			reqs := emu.SendRequests()
			require.Len(t, reqs, before+1)
			last := reqs[len(reqs)-1]
			if tc.desc == "" {
				require.NoError(t, err)
				require.True(t, last.Accepted())
				return
			}
			require.Error(t, err)
			require.False(t, last.Accepted())
			require.Equal(t, tc.desc, last.Description)
			require.ErrorContains(t, err, tc.desc)
			if tc.migrate != 0 {
				var me *bot.MigrateError
				require.True(t, errors.As(err, &me), "%T %v", err, err)
				require.Equal(t, int(tc.migrate), me.MigrateToChatID)
				require.Equal(t, 400, last.ErrorCode)
				return
			}
			require.ErrorIs(t, err, tc.is)
		})
	}

	// The migration target works, and restoring a chat lets messages through.
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: supergroup, Text: "moved"})
	require.NoError(t, err)
	emu.SetChatStatus(blocked, tgemu.ChatActive)
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: blocked, Text: "back"})
	require.NoError(t, err)
	st := emu.Stats()
	require.Equal(t, len(tests)+2, st.SendRequests)
	require.Equal(t, 4, st.Sent)
	require.Equal(t, len(tests)-2, st.Rejected)
}

func TestTextLengthCountsUTF16Units(t *testing.T) {
	const emoji = "😀" // U+1F600: 2 UTF-16 code units
	tests := []struct {
		name  string
		text  string
		units int
		ok    bool
	}{
		{"4096 ascii", strings.Repeat("a", 4096), 4096, true},
		{"4097 ascii", strings.Repeat("a", 4097), 4097, false},
		{"2048 emoji", strings.Repeat(emoji, 2048), 4096, true},
		{"2048 emoji and one more unit", strings.Repeat(emoji, 2048) + "a", 4097, false},
		{"2049 emoji", strings.Repeat(emoji, 2049), 4098, false},
		{"4096 cyrillic (2 bytes, 1 unit each)", strings.Repeat("ж", 4096), 4096, true},
		{"4096 CJK (3 bytes, 1 unit each)", strings.Repeat("語", 4096), 4096, true},
		{"4095 ascii and an emoji", strings.Repeat("a", 4095) + emoji, 4097, false},
	}
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("sendMessage's validation, not its limits (limits_test.go)"), tgemu.WithAllowAnyChat())
	b := newBot(t, emu)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.units, tgtext.UTF16Len(tc.text))
			_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: tc.text})
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, bot.ErrorBadRequest)
			require.ErrorContains(t, err, "message is too long")
		})
	}
}

func TestInvalidUTF8IsRejected(t *testing.T) {
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat())
	_, err := newBot(t, emu).SendMessage(testCtx(t), &bot.SendMessageParams{ChatID: 1, Text: "a\xffb"})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	require.ErrorContains(t, err, "text must be encoded in UTF-8")
}

func TestEditMessageText(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now))
	emu.AddChat(models.Chat{ID: 7})
	b := newBot(t, emu)
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 7, Text: "v1"})
	require.NoError(t, err)
	user, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 7, Text: "from user"})
	require.NoError(t, err)

	clock.Advance(time.Second)
	edited, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 7, MessageID: sent.ID, Text: "<i>v2</i>", ParseMode: models.ParseModeHTML})
	require.NoError(t, err)
	require.Equal(t, "v2", edited.Text)
	require.Equal(t, sent.ID, edited.ID)
	require.Equal(t, int(clock.Now().Unix()), edited.EditDate)

	tests := []struct {
		name   string
		params bot.EditMessageTextParams
		is     error
		desc   string
	}{
		{"not modified", bot.EditMessageTextParams{ChatID: 7, MessageID: sent.ID, Text: "<i>v2</i>", ParseMode: models.ParseModeHTML},
			bot.ErrorBadRequest, "message is not modified"},
		{"missing message", bot.EditMessageTextParams{ChatID: 7, MessageID: 99, Text: "x"}, bot.ErrorBadRequest, "message to edit not found"},
		{"user's message", bot.EditMessageTextParams{ChatID: 7, MessageID: user.Message.ID, Text: "x"}, bot.ErrorBadRequest, "message can't be edited"},
		{"no message id", bot.EditMessageTextParams{ChatID: 7, Text: "x"}, bot.ErrorBadRequest, "message identifier is not specified"},
		{"bad markup", bot.EditMessageTextParams{ChatID: 7, MessageID: sent.ID, Text: "a_b", ParseMode: models.ParseModeMarkdown}, bot.ErrorBadRequest, "can't parse entities"},
		{"unknown chat", bot.EditMessageTextParams{ChatID: 8, MessageID: 1, Text: "x"}, bot.ErrorBadRequest, "chat not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.EditMessageText(ctx, &tc.params)
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.desc)
		})
	}

	v2At := clock.Now()
	clock.Advance(time.Second) // an edit counts against the chat's 1 message/s
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 7, MessageID: sent.ID, Text: "v3"})
	require.NoError(t, err)
	m, err := emu.WaitForEdits(ctx, 7, sent.ID, 2)
	require.NoError(t, err)
	require.Equal(t, "v1", m.Text)
	require.Equal(t, "v3", m.CurrentText())
	require.Equal(t, []tgemu.Edit{
		{Time: v2At, Text: "<i>v2</i>", ParseMode: "HTML"},
		{Time: clock.Now(), Text: "v3"},
	}, m.Edits)
	require.Equal(t, 2, emu.Stats().Edits)

	emu.SetChatStatus(7, tgemu.ChatBlocked)
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 7, MessageID: sent.ID, Text: "v4"})
	require.ErrorIs(t, err, bot.ErrorForbidden)
}

// Emptiness is judged after parsing: an empty text parameter is the Bot API
// server's "message text is empty"; a text of only tags, spaces or
// newlines is TDLib's "text must be non-empty"; on sends and edits alike.
func TestEmptyTextIsJudgedAfterParsing(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("sendMessage's validation, not its limits (limits_test.go)"))
	emu.AddChat(models.Chat{ID: 17})
	b := newBot(t, emu)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 17, Text: "x"})
	require.NoError(t, err)
	tests := []struct {
		name, mode, text, want string
	}{
		{"empty", "", "", "Bad Request: message text is empty"},
		{"empty with a parse_mode", "HTML", "", "Bad Request: message text is empty"},
		{"blank", "", " \n\t\r", "Bad Request: text must be non-empty"},
		{"only tags", "HTML", "<b></b><i></i>", "Bad Request: text must be non-empty"},
		{"tags around blanks", "HTML", "<b> </b>\n<i>\n</i>", "Bad Request: text must be non-empty"},
		{"only MarkdownV2 markers", "MarkdownV2", "**~~", "Bad Request: text must be non-empty"},
		{"only Markdown markers", "Markdown", "** __", "Bad Request: text must be non-empty"},
		{"an escaped character is text", "MarkdownV2", `\*`, ""},
		{"a character reference is text", "HTML", "<b>&amp;</b>", ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{"sendMessage", "editMessageText"} {
				form := url.Values{"chat_id": {"17"}, "text": {tc.text}, "parse_mode": {tc.mode}}
				if method == "editMessageText" {
					form.Set("message_id", strconv.Itoa(m.ID))
					if tc.want == "" {
						form.Set("text", tc.text+strings.Repeat(" x", i)) // a change each time
					}
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

// "message is not modified" compares what Telegram keeps: the parsed text
// and entities, and the inline keyboard as parsed; markup that differs in
// its raw text but parses the same is not a change.
func TestEditNotModifiedIsJudgedOnParsedContent(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("sendMessage's validation, not its limits (limits_test.go)"))
	emu.AddChat(models.Chat{ID: 18})
	kb := func(buttons string) string { return `{"inline_keyboard":[[` + buttons + `]]}` }
	type content struct{ text, mode, markup string }
	tests := []struct {
		name        string
		sent, edit  content
		notModified bool
	}{
		{"same raw text", content{"a", "", ""}, content{"a", "", ""}, true},
		{"<b> and <strong>", content{"<b>a</b>", "HTML", ""}, content{"<strong>a</strong>", "HTML", ""}, true},
		{"HTML and MarkdownV2 bold", content{"<b>a</b> b", "HTML", ""}, content{"*a* b", "MarkdownV2", ""}, true},
		{"plain and HTML without tags", content{"a < b", "", ""}, content{"a &lt; b", "HTML", ""}, true},
		{"trailing blanks", content{"a", "", ""}, content{"a \n", "", ""}, true},
		{"bold dropped", content{"<b>a</b>", "HTML", ""}, content{"a", "", ""}, false},
		{"bold added", content{"a", "", ""}, content{"*a*", "Markdown", ""}, false},
		{"another link", content{`<a href="https://a.org">l</a>`, "HTML", ""}, content{`<a href="https://b.org">l</a>`, "HTML", ""}, false},
		{"another text", content{"a", "", ""}, content{"b", "", ""}, false},
		{"keyboard with its keys in another order", content{"a", "", kb(`{"text":"A","callback_data":"1"}`)},
			content{"a", "", kb(`{"callback_data":"1","text":"A"}`)}, true},
		{"keyboard as go-telegram/bot sends it", content{"a", "", kb(`{"text":"A","callback_data":"1"}`)},
			content{"a", "", kb(`{"text":"A","callback_data":"1","copy_text":{"text":""}}`)}, true},
		{"keyboard with an unknown field", content{"a", "", kb(`{"text":"A","callback_data":"1"}`)},
			content{"a", "", kb(`{"text":"A","callback_data":"1","colour":"red"}`)}, true},
		{"empty keyboard is none", content{"a", "", ""}, content{"a", "", `{"inline_keyboard":[]}`}, true},
		{"keyboard removed", content{"a", "", kb(`{"text":"A","callback_data":"1"}`)}, content{"a", "", ""}, false},
		{"other callback_data", content{"a", "", kb(`{"text":"A","callback_data":"1"}`)},
			content{"a", "", kb(`{"text":"A","callback_data":"2"}`)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, r := rawCall(ctx, t, emu, "sendMessage", url.Values{"chat_id": {"18"}, "text": {tc.sent.text},
				"parse_mode": {tc.sent.mode}, "reply_markup": {tc.sent.markup}})
			require.Equal(t, http.StatusOK, status, r.Description)
			var m models.Message
			require.NoError(t, json.Unmarshal(r.Result, &m))
			status, r = rawCall(ctx, t, emu, "editMessageText", url.Values{"chat_id": {"18"}, "message_id": {strconv.Itoa(m.ID)},
				"text": {tc.edit.text}, "parse_mode": {tc.edit.mode}, "reply_markup": {tc.edit.markup}})
			if !tc.notModified {
				require.Equal(t, http.StatusOK, status, r.Description)
				return
			}
			require.Equal(t, http.StatusBadRequest, status)
			require.Equal(t, "Bad Request: message is not modified: specified new message content and reply markup are "+
				"exactly the same as a current content and reply markup of the message", r.Description)
		})
	}
}
