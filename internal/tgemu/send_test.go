package tgemu_test

import (
	"errors"
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
	emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now), testkit.Unlimited())
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
		{name: "text blank", params: bot.SendMessageParams{ChatID: private, Text: " \n "}, is: bot.ErrorBadRequest, desc: "Bad Request: message text is empty"},
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
	emu := testkit.NewEmulator(t, testkit.Unlimited())
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
	emu := testkit.NewEmulator(t, testkit.Unlimited(), tgemu.WithAllowAnyChat())
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
