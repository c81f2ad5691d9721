package tgemu_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

func TestBotReceivesInjectedUpdates(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	got := make(chan *models.Update, 10)
	b := newBot(t, emu,
		bot.WithDefaultHandler(func(_ context.Context, _ *bot.Bot, u *models.Update) { got <- u }),
		bot.WithMessageTextHandler("start", bot.MatchTypeCommand, func(ctx context.Context, b *bot.Bot, u *models.Update) {
			_, _ = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: u.Message.Chat.ID, Text: "welcome",
				ReplyParameters: &models.ReplyParameters{MessageID: u.Message.ID}})
		}),
		bot.WithCallbackQueryDataHandler("pick:", bot.MatchTypePrefix, func(ctx context.Context, b *bot.Bot, u *models.Update) {
			_, _ = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: u.CallbackQuery.ID, Text: "ok " + u.CallbackQuery.Data})
		}),
	)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { b.Start(runCtx); close(done) }()
	t.Cleanup(func() { stop(); <-done })

	// A command in a private chat: answered by the command handler.
	u, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 501, From: models.User{FirstName: "Ann"}, Text: "/start"})
	require.NoError(t, err)
	require.Equal(t, []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Offset: 0, Length: 6}}, u.Message.Entities)
	msgs, err := emu.WaitForMessages(ctx, 501, 1)
	require.NoError(t, err)
	require.Equal(t, "welcome", msgs[0].Text)
	require.Equal(t, u.Message.ID, msgs[0].ReplyToMessageID)
	require.Equal(t, u.Message.ID+1, msgs[0].ID, "ids are shared by user and bot messages of a chat")

	// A group message replying to the bot: default handler.
	_, err = emu.InjectMessage(tgemu.TextMessage{ChatID: -600, From: models.User{ID: 501}, Text: "🎲 guess", ReplyToMessageID: 0})
	require.NoError(t, err)
	g := <-got
	require.Equal(t, "🎲 guess", g.Message.Text)
	require.Equal(t, models.ChatTypeGroup, g.Message.Chat.Type)
	require.Equal(t, int64(501), g.Message.From.ID)
	require.False(t, g.Message.From.IsBot)

	r, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 501, Text: "reply", ReplyToMessageID: msgs[0].ID})
	require.NoError(t, err)
	g = <-got
	require.Equal(t, r.ID, g.ID)
	require.NotNil(t, g.Message.ReplyToMessage)
	require.Equal(t, "welcome", g.Message.ReplyToMessage.Text)
	require.True(t, g.Message.ReplyToMessage.From.IsBot)

	// A button press answered by the callback handler.
	_, err = emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: 501, MessageID: msgs[0].ID, Data: "pick:3"})
	require.NoError(t, err)
	require.NoError(t, emu.WaitUntil(ctx, func() bool { return len(emu.CallbackAnswers()) == 1 }))
	require.Equal(t, "ok pick:3", emu.CallbackAnswers()[0].Text)

	// Everything delivered was confirmed by the bot's next offset.
	require.NoError(t, emu.WaitUntil(ctx, func() bool { return len(emu.PendingUpdates()) == 0 && emu.Polling() }))
}

func TestInjectMessageErrors(t *testing.T) {
	emu := testkit.NewEmulator(t)
	tests := []struct {
		name string
		msg  tgemu.TextMessage
		err  string
	}{
		{"no chat", tgemu.TextMessage{Text: "x"}, "ChatID is 0"},
		{"private chat written by someone else", tgemu.TextMessage{ChatID: 5, From: models.User{ID: 6}, Text: "x"}, "must be written by user 5"},
		{"group without sender", tgemu.TextMessage{ChatID: -5, Text: "x"}, "needs From.ID"},
		{"reply to unknown message", tgemu.TextMessage{ChatID: 5, Text: "x", ReplyToMessageID: 9}, "no message 9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := emu.InjectMessage(tc.msg)
			require.ErrorContains(t, err, tc.err)
		})
	}
	_, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: 77, MessageID: 1})
	require.ErrorContains(t, err, "unknown chat")
	require.Empty(t, emu.PendingUpdates())
	u, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 5, Text: "first"})
	require.NoError(t, err)
	require.Equal(t, 1, u.Message.ID, "failed injections do not consume message ids")
}

func TestBotCommandEntities(t *testing.T) {
	tests := []struct {
		text string
		want []models.MessageEntity
	}{
		{"hello", nil},
		{"/start", []models.MessageEntity{{Type: "bot_command", Offset: 0, Length: 6}}},
		{"/new@codemojex_test_bot 4", []models.MessageEntity{{Type: "bot_command", Offset: 0, Length: 23}}},
		{"😀 /guess 1234", []models.MessageEntity{{Type: "bot_command", Offset: 3, Length: 6}}},
		{"a/b /c", []models.MessageEntity{{Type: "bot_command", Offset: 4, Length: 2}}},
		{"/", nil},
	}
	emu := testkit.NewEmulator(t)
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			u, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 1, Text: tc.text})
			require.NoError(t, err)
			require.Equal(t, tc.want, u.Message.Entities)
		})
	}
}

func TestGetUpdatesOffsets(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	for i := range 5 {
		_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 1, Text: strconv.Itoa(i)})
		require.NoError(t, err)
	}
	raw := emu.InjectUpdate(models.Update{ID: 100, Message: &models.Message{ID: 50, Chat: models.Chat{ID: -9, Type: "supergroup"}, Text: "raw", Date: 1}})
	require.Equal(t, int64(100), raw.ID)
	next := emu.InjectUpdate(models.Update{})
	require.Equal(t, int64(101), next.ID, "ids continue after an explicit one")
	require.Contains(t, emu.Chats(), models.Chat{ID: -9, Type: "supergroup"})

	tests := []struct {
		name string
		form url.Values
		want []int64
	}{
		{"no offset returns all", nil, []int64{1, 2, 3, 4, 5, 100, 101}},
		{"limit", url.Values{"limit": {"2"}}, []int64{1, 2}},
		{"offset confirms earlier", url.Values{"offset": {"3"}}, []int64{3, 4, 5, 100, 101}},
		{"confirmed updates are gone for good", url.Values{"offset": {"0"}}, []int64{3, 4, 5, 100, 101}},
		{"offset between ids", url.Values{"offset": {"50"}, "limit": {"1"}}, []int64{100}},
		{"negative offset keeps the last ones", url.Values{"offset": {"-1"}}, []int64{101}},
		{"everything confirmed", url.Values{"offset": {"102"}}, []int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, r := rawCall(ctx, t, emu, "getUpdates", tc.form)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, tc.want, updateIDs(t, r))
		})
	}
	require.Empty(t, emu.PendingUpdates())
}

func TestGetUpdatesLongPoll(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)

	t.Run("wakes when an update arrives", func(t *testing.T) {
		res := make(chan apiReply, 1)
		go func() {
			_, r := rawCall(ctx, t, emu, "getUpdates", url.Values{"timeout": {"60"}})
			res <- r
		}()
		require.NoError(t, emu.WaitUntil(ctx, emu.Polling))
		u, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 3, Text: "hi"})
		require.NoError(t, err)
		select { // woken: the poll's own end is 60 s away, half of it is the margin of a busy host
		case r := <-res:
			require.Equal(t, []int64{u.ID}, updateIDs(t, r))
		case <-time.After(30 * time.Second):
			t.Fatal("the long poll was not woken by the update")
		}
	})

	t.Run("times out with an empty result", func(t *testing.T) {
		start := time.Now()
		_, r := rawCall(ctx, t, emu, "getUpdates", url.Values{"timeout": {"1"}, "offset": {strconv.FormatInt(emu.NextUpdateID(), 10)}})
		require.Equal(t, []int64{}, updateIDs(t, r))
		require.GreaterOrEqual(t, time.Since(start), time.Second)
	})

	t.Run("client cancellation ends the poll", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(cctx, http.MethodPost, emu.URL()+"/bot"+emu.Token()+"/getUpdates?timeout=30", nil)
			_, err := http.DefaultClient.Do(req)
			errc <- err
		}()
		require.NoError(t, emu.WaitUntil(ctx, emu.Polling))
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		require.NoError(t, emu.WaitUntil(ctx, func() bool { return !emu.Polling() }))
		reqs, err := emu.WaitForRequests(ctx, "getUpdates", 3)
		require.NoError(t, err)
		require.True(t, reqs[2].Canceled)
	})
}

func TestGetUpdatesConflict(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)

	older := make(chan apiReply, 1)
	go func() {
		code, r := rawCall(ctx, t, emu, "getUpdates", url.Values{"timeout": {"10"}})
		require.Equal(t, http.StatusConflict, code)
		older <- r
	}()
	require.NoError(t, emu.WaitUntil(ctx, emu.Polling))

	newer := make(chan apiReply, 1)
	go func() {
		_, r := rawCall(ctx, t, emu, "getUpdates", url.Values{"timeout": {"10"}})
		newer <- r
	}()
	require.Equal(t, apiReply{ErrorCode: 409,
		Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}, <-older)

	// The newer poll is still pending and gets the next update.
	require.NoError(t, emu.WaitUntil(ctx, emu.Polling))
	u, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 1, Text: "x"})
	require.NoError(t, err)
	require.Equal(t, []int64{u.ID}, updateIDs(t, <-newer))
}

func TestTwoBotInstancesSeeConflict(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	conflicts := make(chan error, 100)
	start := func() func() {
		b := newBot(t, emu, bot.WithErrorsHandler(func(err error) {
			if errors.Is(err, bot.ErrorConflict) {
				select {
				case conflicts <- err:
				default:
				}
			}
		}))
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { b.Start(runCtx) })
		return func() { stop(); wg.Wait() }
	}
	stop1 := start()
	require.NoError(t, emu.WaitUntil(ctx, emu.Polling))
	stop2 := start()
	select {
	case err := <-conflicts:
		require.ErrorContains(t, err, "terminated by other getUpdates request")
	case <-ctx.Done():
		t.Fatal("no 409 conflict reported by the library")
	}
	stop2()
	stop1()
}

func TestWebhookBlocksGetUpdates(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	emu.SetWebhook("https://example.invalid/hook")
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 1, Text: "old"})
	require.NoError(t, err)

	code, r := rawCall(ctx, t, emu, "getUpdates", nil)
	require.Equal(t, http.StatusConflict, code)
	require.Contains(t, r.Description, "can't use getUpdates method while webhook is active")

	ok, err := newBot(t, emu).DeleteWebhook(ctx, &bot.DeleteWebhookParams{DropPendingUpdates: true})
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, emu.WebhookURL())
	require.Empty(t, emu.PendingUpdates())
	_, r = rawCall(ctx, t, emu, "getUpdates", nil)
	require.Equal(t, []int64{}, updateIDs(t, r))
}

func TestAnswerCallbackQuery(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	emu.AddChat(models.Chat{ID: -3})
	b := newBot(t, emu)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: -3, Text: "pick",
		ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "A", CallbackData: "a"}}}}})
	require.NoError(t, err)
	require.NotNil(t, m.ReplyMarkup)

	_, err = emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: -3, MessageID: m.ID, Data: "a"})
	require.ErrorContains(t, err, "needs From.ID")
	u, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: -3, MessageID: m.ID, Data: "a", From: models.User{ID: 8}})
	require.NoError(t, err)
	require.Equal(t, "a", u.CallbackQuery.Data)
	require.Equal(t, m.ID, u.CallbackQuery.Message.Message.ID)

	tests := []struct {
		name string
		id   string
		err  bool
	}{
		{"first answer", u.CallbackQuery.ID, false},
		{"second answer", u.CallbackQuery.ID, true},
		{"unknown id", "nope", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: tc.id, Text: "done", ShowAlert: true})
			if tc.err {
				require.ErrorIs(t, err, bot.ErrorBadRequest)
				require.ErrorContains(t, err, "query is too old")
				return
			}
			require.NoError(t, err)
			require.True(t, ok)
		})
	}
	answers := emu.CallbackAnswers()
	require.Len(t, answers, 1)
	require.Equal(t, "done", answers[0].Text)
	require.True(t, answers[0].ShowAlert)
}

func TestSetMyCommands(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	b := newBot(t, emu)
	cmds := []models.BotCommand{{Command: "new", Description: "New game"}, {Command: "help", Description: "How to play"}}
	ru := []models.BotCommand{{Command: "new", Description: "Новая игра"}}

	tests := []struct {
		name   string
		params bot.SetMyCommandsParams
		scope  string
		lang   string
		err    string
	}{
		{name: "default scope", params: bot.SetMyCommandsParams{Commands: cmds}, scope: ""},
		{name: "group scope with language", params: bot.SetMyCommandsParams{Commands: ru, Scope: &models.BotCommandScopeAllGroupChats{}, LanguageCode: "ru"},
			scope: "all_group_chats", lang: "ru"},
		{name: "chat scope", params: bot.SetMyCommandsParams{Commands: cmds[:1], Scope: &models.BotCommandScopeChat{ChatID: -5}}, scope: "chat:-5"},
		{name: "invalid command", params: bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "New Game", Description: "x"}}}, err: "BOT_COMMAND_INVALID"},
		{name: "empty description", params: bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "x"}}}, err: "BOT_COMMAND_DESCRIPTION_INVALID"},
		{name: "language code not of two letters", params: bot.SetMyCommandsParams{Commands: cmds, LanguageCode: "pt-BR"}, err: "LANG_CODE_INVALID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := b.SetMyCommands(ctx, &tc.params)
			if tc.err != "" {
				require.ErrorIs(t, err, bot.ErrorBadRequest)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, tc.params.Commands, emu.MyCommands(tc.scope, tc.lang))
			got, err := b.GetMyCommands(ctx, &bot.GetMyCommandsParams{Scope: tc.params.Scope, LanguageCode: tc.params.LanguageCode})
			require.NoError(t, err)
			require.Equal(t, tc.params.Commands, got)
		})
	}
	require.Equal(t, cmds, emu.MyCommands("default", ""), "invalid calls keep the stored commands")
	require.Nil(t, emu.MyCommands("all_private_chats", ""))
}

// setMyDescription and setMyShortDescription keep a text per two-letter
// language_code (an empty one removes it, an overlong one or a longer code
// is refused); getMy... fall back to the text for every language.
func TestMyDescriptionsArePerLanguage(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	b := newBot(t, emu)
	for _, tc := range []struct {
		name string
		call func() (bool, error)
		err  string
	}{
		{"default", func() (bool, error) { return b.SetMyDescription(ctx, &bot.SetMyDescriptionParams{Description: "Play"}) }, ""},
		{"ru", func() (bool, error) {
			return b.SetMyDescription(ctx, &bot.SetMyDescriptionParams{Description: "Играть", LanguageCode: "ru"})
		}, ""},
		{"short fa", func() (bool, error) {
			return b.SetMyShortDescription(ctx, &bot.SetMyShortDescriptionParams{ShortDescription: "بازی", LanguageCode: "fa"})
		}, ""},
		{"region", func() (bool, error) {
			return b.SetMyDescription(ctx, &bot.SetMyDescriptionParams{Description: "Jogar", LanguageCode: "pt-BR"})
		}, "LANG_CODE_INVALID"},
		{"too long", func() (bool, error) {
			return b.SetMyShortDescription(ctx, &bot.SetMyShortDescriptionParams{ShortDescription: strings.Repeat("x", 121)})
		}, "SHORT_DESCRIPTION_TOO_LONG"},
	} {
		ok, err := tc.call()
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.True(t, ok, tc.name)
	}
	require.Equal(t, "Play", emu.MyDescription("", false))
	require.Equal(t, "Играть", emu.MyDescription("ru", false))
	require.Equal(t, "بازی", emu.MyDescription("fa", true))
	require.Empty(t, emu.MyDescription("pt", false))
	d, err := b.GetMyDescription(ctx, &bot.GetMyDescriptionParams{LanguageCode: "es"})
	require.NoError(t, err)
	require.Equal(t, "Play", d.Description, "no Spanish one: the default")
	d, err = b.GetMyDescription(ctx, &bot.GetMyDescriptionParams{LanguageCode: "ru"})
	require.NoError(t, err)
	require.Equal(t, "Играть", d.Description)
	_, err = b.SetMyDescription(ctx, &bot.SetMyDescriptionParams{LanguageCode: "ru"})
	require.NoError(t, err)
	require.Empty(t, emu.MyDescription("ru", false), "an empty description removes the language's")
}

// getChatMember answers the status SetChatMemberStatus set, "member"
// otherwise.
func TestGetChatMemberAnswersTheStatusSet(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	b := newBot(t, emu)
	emu.SetChatMemberStatus(-5, 7, "administrator")
	emu.SetChatMemberStatus(-5, 8, "creator")
	for user, want := range map[int64]models.ChatMemberType{7: models.ChatMemberTypeAdministrator, 8: models.ChatMemberTypeOwner, 9: models.ChatMemberTypeMember} {
		m, err := b.GetChatMember(ctx, &bot.GetChatMemberParams{ChatID: int64(-5), UserID: user})
		require.NoError(t, err)
		require.Equal(t, want, m.Type, "user %d", user)
	}
}

// TestOffsetBeyondNextUpdateIDIsIgnored: after the update_id sequence was
// reset to a lower id, an offset more than 10 beyond the next id is ignored
// (the queue is answered from its head, nothing confirmed, again and
// again), one at most 10 beyond is honoured, and an offset past a queued
// update confirms it.
func TestOffsetBeyondNextUpdateIDIsIgnored(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	emu.SetNextUpdateID(900000000)
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 1, Text: "/start"})
	require.NoError(t, err)
	_, r := rawCall(ctx, t, emu, "getUpdates", nil)
	require.Equal(t, []int64{900000000}, updateIDs(t, r))
	_, r = rawCall(ctx, t, emu, "getUpdates", url.Values{"offset": {"900000001"}})
	require.Equal(t, []int64{}, updateIDs(t, r))

	emu.SetNextUpdateID(120000000)
	require.Equal(t, int64(120000000), emu.NextUpdateID())
	_, err = emu.InjectMessage(tgemu.TextMessage{ChatID: 2, Text: "/help"})
	require.NoError(t, err)
	for range 2 {
		_, r = rawCall(ctx, t, emu, "getUpdates", url.Values{"offset": {"900000001"}})
		require.Equal(t, []int64{120000000}, updateIDs(t, r), "the offset is out of range: ignored")
	}
	_, r = rawCall(ctx, t, emu, "getUpdates", url.Values{"offset": {"120000011"}})
	require.Equal(t, []int64{}, updateIDs(t, r), "10 beyond the next id (120000001) is honoured and confirms")
	require.Empty(t, emu.PendingUpdates())

	_, err = emu.InjectMessage(tgemu.TextMessage{ChatID: 2, Text: "/help"})
	require.NoError(t, err)
	_, r = rawCall(ctx, t, emu, "getUpdates", url.Values{"offset": {"120000001"}})
	require.Equal(t, []int64{120000001}, updateIDs(t, r))
}
