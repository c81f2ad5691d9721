package tgapi_test

import (
	"context"
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
	"github.com/codemojex/codemojex/redact"
	"github.com/codemojex/codemojex/tgapi"
)

// newClient returns a client of emu with cfg's other fields.
func newClient(t *testing.T, emu *tgemu.Emulator, cfg tgapi.Config) *tgapi.Client {
	t.Helper()
	if cfg.Token == "" {
		cfg.Token = emu.Token()
	}
	if cfg.ServerURL == "" {
		cfg.ServerURL = emu.URL()
	}
	c, err := tgapi.New(cfg)
	require.NoError(t, err)
	return c
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Every method the bot uses, against the emulator.
func TestMethods(t *testing.T) {
	t.Parallel()
	emu := testkit.NewEmulator(t, testkit.Unlimited("the client's encoding and errors, not pacing"))
	c := newClient(t, emu, tgapi.Config{Timeout: 10 * time.Second})
	ctx := ctxFor(t, 30*time.Second)

	me, err := c.GetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, emu.BotUser().ID, me.ID)
	require.Equal(t, emu.BotUser().Username, me.Username)

	const chat = int64(42)
	emu.AddChat(models.Chat{ID: chat})
	m, err := c.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "<b>hi</b>", ParseMode: models.ParseModeHTML,
		DisableNotification: true, ReplyMarkup: json.RawMessage(`{"inline_keyboard":[[{"text":"a","callback_data":"x"}]]}`)})
	require.NoError(t, err)
	require.NotZero(t, m.ID)
	require.Equal(t, "hi", m.Text)
	got := emu.Messages(chat)
	require.Len(t, got, 1)
	require.Contains(t, got[0].Text, "hi")

	e, err := c.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: m.ID, Text: "hello"})
	require.NoError(t, err)
	require.Equal(t, m.ID, e.ID)
	require.Equal(t, "hello", e.Text)

	upd, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{From: models.User{ID: chat}, ChatID: chat, MessageID: m.ID, Data: "x"})
	require.NoError(t, err)
	require.NoError(t, c.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: upd.CallbackQuery.ID, Text: "ok"}))
	require.Len(t, emu.CallbackAnswers(), 1)

	require.NoError(t, c.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "play", Description: "Play"}}}))
	require.Equal(t, []models.BotCommand{{Command: "play", Description: "Play"}}, emu.MyCommands("", ""))

	// getUpdates: the tap above, then one message; the offset confirms.
	_, err = emu.InjectMessage(tgemu.TextMessage{ChatID: chat, Text: "/start"})
	require.NoError(t, err)
	ups, err := c.GetUpdates(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, ups, 2)
	require.Equal(t, upd.ID, ups[0].ID)
	var u models.Update
	require.NoError(t, json.Unmarshal(ups[1].JSON, &u))
	require.Equal(t, "/start", u.Message.Text)
	require.Equal(t, ups[1].ID, u.ID)
	ups, err = c.GetUpdates(ctx, ups[1].ID+1, 0)
	require.NoError(t, err)
	require.Empty(t, ups)

	// Webhook: set, read, delete.
	require.NoError(t, c.SetWebhook(ctx, &bot.SetWebhookParams{URL: "https://example.com/hook", SecretToken: "s3cret", AllowedUpdates: []string{"message"}}))
	info, err := c.GetWebhookInfo(ctx)
	require.NoError(t, err)
	require.Equal(t, "https://example.com/hook", info.URL)
	require.NoError(t, c.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}))
	info, err = c.GetWebhookInfo(ctx)
	require.NoError(t, err)
	require.Empty(t, info.URL)
	require.NoError(t, c.DeleteWebhook(ctx, nil), "nil parameters: none sent")

	// getMyStarBalance: unlimited by default, then 1.3 Stars.
	s, err := c.GetMyStarBalance(ctx)
	require.NoError(t, err)
	require.Equal(t, tgemu.UnlimitedStars, s.Amount)
	emu.SetStarBalance(13)
	s, err = c.GetMyStarBalance(ctx)
	require.NoError(t, err)
	require.Equal(t, models.StarAmount{Amount: 1, NanostarAmount: 300_000_000}, *s)
}

// want is what a test expects of an *Error.
type want struct {
	status, code  int
	retryAfter    time.Duration // IsRetryAfter's wait (with isRetry)
	isRetry       bool
	migrateTo     int64
	kind          tgapi.Kind
	answered      bool // an ok=false Bot API answer
	unknown       bool // OutcomeUnknown
	unauthorized  bool
	forbidden     bool
	conflict      bool
	badRequest    bool
	deadline      bool // errors.Is context.DeadlineExceeded
	descContains  string
	errorContains string
}

// Every shape of failure becomes one *Error with the fields Telegram gave,
// and the token appears in none of them.
func TestErrorShapes(t *testing.T) {
	t.Parallel()
	const (
		chat     = int64(7)
		blocked  = int64(8)
		group    = int64(-9)
		newGroup = int64(-1000000000009)
	)
	send := func(to int64) func(ctx context.Context, c *tgapi.Client) error {
		return func(ctx context.Context, c *tgapi.Client) error {
			_, err := c.SendMessage(ctx, &bot.SendMessageParams{ChatID: to, Text: "x"})
			return err
		}
	}
	for _, tc := range []struct {
		name  string
		fault *tgemu.Fault
		setup func(emu *tgemu.Emulator)
		cfg   tgapi.Config
		call  func(ctx context.Context, c *tgapi.Client) error
		want  want
	}{
		{name: "429 with retry_after", fault: ptr(tgemu.TooManyRequests(7).For("sendMessage")), call: send(chat),
			want: want{status: 429, code: 429, isRetry: true, retryAfter: 7 * time.Second, answered: true, descContains: "Too Many Requests"}},
		{name: "429 without parameters", fault: ptr(tgemu.TooManyRequests(0).For("sendMessage")), call: send(chat),
			want: want{status: 429, code: 429, isRetry: true, answered: true}},
		{name: "400 migrate_to_chat_id", setup: func(emu *tgemu.Emulator) { emu.MigrateChat(group, newGroup) }, call: send(group),
			want: want{status: 400, code: 400, migrateTo: newGroup, answered: true, badRequest: true, descContains: "upgraded to a supergroup"}},
		{name: "403 blocked", setup: func(emu *tgemu.Emulator) { emu.SetChatStatus(blocked, tgemu.ChatBlocked) }, call: send(blocked),
			want: want{status: 403, code: 403, kind: tgapi.KindBlocked, answered: true, forbidden: true, descContains: "bot was blocked by the user"}},
		{name: "400 chat not found", call: send(12345),
			want: want{status: 400, code: 400, kind: tgapi.KindChatNotFound, answered: true, badRequest: true, descContains: "chat not found"}},
		{name: "401 wrong token", cfg: tgapi.Config{Token: "999:wrong-secret-of-the-bot"}, call: func(ctx context.Context, c *tgapi.Client) error {
			_, err := c.GetMe(ctx)
			return err
		}, want: want{status: 401, code: 401, answered: true, unauthorized: true, descContains: "Unauthorized"}},
		{name: "409 conflict, webhook set", setup: func(emu *tgemu.Emulator) { emu.SetWebhook("https://example.com/hook") },
			call: func(ctx context.Context, c *tgapi.Client) error {
				_, err := c.GetUpdates(ctx, 0, 0)
				return err
			}, want: want{status: 409, code: 409, kind: tgapi.KindWebhookActive, answered: true, conflict: true, descContains: "webhook is active"}},
		{name: "500 JSON", fault: ptr(tgemu.InternalServerError().For("sendMessage")), call: send(chat),
			want: want{status: 500, code: 500, answered: true, descContains: "Internal Server Error"}},
		{name: "502 HTML page", fault: ptr(tgemu.BadGateway().For("sendMessage")), call: send(chat),
			want: want{status: 502, errorContains: "HTTP 502, answer is not Bot API JSON"}},
		{name: "401 HTML page", fault: ptr(tgemu.HTTPError(http.StatusUnauthorized, "<html>401</html>").For("getMe")),
			call: func(ctx context.Context, c *tgapi.Client) error {
				_, err := c.GetMe(ctx)
				return err
			}, want: want{status: 401, unauthorized: true, errorContains: "HTTP 401, answer is not Bot API JSON"}},
		{name: "200 not JSON", fault: ptr(tgemu.NonJSON().For("sendMessage")), call: send(chat),
			want: want{status: 200, errorContains: "HTTP 200, answer is not Bot API JSON"}},
		{name: "malformed JSON", fault: ptr(tgemu.HTTPError(http.StatusOK, `{"ok":true,"result":{"message_id":`).For("sendMessage")), call: send(chat),
			want: want{status: 200, errorContains: "answer is not Bot API JSON"}},
		{name: "result of another shape", fault: ptr(tgemu.HTTPError(http.StatusOK, `{"ok":true,"result":"text"}`).For("sendMessage")), call: send(chat),
			want: want{status: 200, errorContains: "unexpected result"}},
		{name: "timeout of the caller", fault: ptr(tgemu.Delay(5 * time.Second).For("sendMessage")),
			call: func(ctx context.Context, c *tgapi.Client) error {
				ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				return send(chat)(ctx, c)
			}, want: want{unknown: true, deadline: true}},
		{name: "timeout of the client", fault: ptr(tgemu.Delay(5 * time.Second).For("sendMessage")), cfg: tgapi.Config{Timeout: 200 * time.Millisecond},
			call: send(chat), want: want{unknown: true, deadline: true}},
		{name: "connection dropped", fault: ptr(tgemu.DropConnection().For("sendMessage")), call: send(chat),
			want: want{unknown: true}},
		{name: "answer held, then dropped", fault: ptr(tgemu.HeldResponse(100 * time.Millisecond).For("sendMessage")), call: send(chat),
			want: want{unknown: true}},
		{name: "server URL that does not parse", cfg: tgapi.Config{ServerURL: "http://[::1"}, call: send(chat),
			want: want{errorContains: redact.Redacted}},
	} {
		for _, tr := range transports {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				requireErrorShape(t, tc.setup, tc.fault, tc.cfg, tr.hc(), tc.call, tc.want)
			})
		}
	}
}

// requireErrorShape runs call on a client of a new emulator (setup and
// fault applied, cfg's fields with hc as its HTTPClient) and requires its
// error to have w's shape, and no token anywhere in it.
func requireErrorShape(t *testing.T, setup func(*tgemu.Emulator), fault *tgemu.Fault, cfg tgapi.Config, hc *http.Client,
	call func(context.Context, *tgapi.Client) error, w want) {
	t.Helper()
	const chat = int64(7) // as TestErrorShapes'
	emu := testkit.NewEmulator(t, testkit.Unlimited("the client's encoding and errors, not pacing"))
	emu.AddChat(models.Chat{ID: chat})
	if setup != nil {
		setup(emu)
	}
	if fault != nil {
		emu.InjectFault(*fault)
	}
	cfg.HTTPClient = hc
	token := cfg.Token
	if token == "" {
		token = emu.Token()
	}
	c := newClient(t, emu, cfg)
	err := call(ctxFor(t, 20*time.Second), c)
	require.Error(t, err)
	var e *tgapi.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, w.status, e.Status, "status: %v", err)
	require.Equal(t, w.status, tgapi.Status(err))
	require.Equal(t, w.code, e.Code, "error_code: %v", err)
	d, isRetry := tgapi.IsRetryAfter(err)
	require.Equal(t, w.isRetry, isRetry)
	require.Equal(t, w.retryAfter, d)
	to, migrated := tgapi.MigrateTo(err)
	require.Equal(t, w.migrateTo, to)
	require.Equal(t, w.migrateTo != 0, migrated)
	require.Equal(t, w.kind, e.Kind(), "kind of %q", e.Description)
	require.Equal(t, w.answered, e.Answered())
	require.Equal(t, w.unknown, e.OutcomeUnknown(), "outcome unknown: %v", err)
	require.Equal(t, w.unauthorized, tgapi.IsUnauthorized(err))
	require.Equal(t, w.forbidden, tgapi.IsForbidden(err))
	require.Equal(t, w.conflict, tgapi.IsConflict(err))
	require.Equal(t, w.badRequest, tgapi.IsBadRequest(err))
	require.Equal(t, w.deadline, errors.Is(err, context.DeadlineExceeded), "deadline: %v", err)
	require.Contains(t, e.Description, w.descContains)
	require.Contains(t, err.Error(), w.errorContains)
	require.Contains(t, err.Error(), "telegram ")
	if w.answered {
		require.Nil(t, e.Err)
		require.Contains(t, err.Error(), e.Description)
	} else {
		require.Error(t, e.Err)
		require.Zero(t, e.Code)
	}
	// Never the token: not in the text, the description, or a
	// *url.Error's URL reached with errors.As.
	testkit.RequireNoToken(t, err.Error(), token, "error")
	testkit.RequireNoToken(t, e.Description, token, "description")
	var ue *url.Error
	if errors.As(err, &ue) {
		testkit.RequireNoToken(t, ue.URL, token, "url.Error URL")
		testkit.RequireNoToken(t, ue.Error(), token, "url.Error")
		require.Contains(t, ue.URL, redact.Redacted)
	}
}

// The description table: each kind under its error_code only, any case.
func TestKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code int
		desc string
		want tgapi.Kind
	}{
		{400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same", tgapi.KindNotModified},
		{400, "Bad Request: message to edit not found", tgapi.KindEditNotFound},
		{400, "Bad Request: message can't be edited", tgapi.KindCantEdit},
		{400, "Bad Request: chat not found", tgapi.KindChatNotFound},
		{400, "Bad Request: message is too long", tgapi.KindTooLong},
		{400, "Bad Request: can't parse entities: Can't find end tag corresponding to start tag b", tgapi.KindParseEntities},
		{400, "Bad Request: " + tgemu.CannotPayDescription, tgapi.KindCannotPay},
		{400, "Bad Request: not enough Stars", tgapi.KindCannotPay},
		{403, "Forbidden: bot was blocked by the user", tgapi.KindBlocked},
		{403, "Forbidden: user is deactivated", tgapi.KindDeactivated},
		{403, "Forbidden: bot was kicked from the supergroup chat", tgapi.KindKicked},
		{409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", tgapi.KindWebhookActive},
		{409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", tgapi.KindOther},
		{400, "Bad Request: message text is empty", tgapi.KindOther},
		{403, "Bad Request: chat not found", tgapi.KindOther}, // a row holds under its code only
		{500, "Internal Server Error", tgapi.KindOther},
	} {
		e := &tgapi.Error{Method: "sendMessage", Status: tc.code, Code: tc.code, Description: tc.desc}
		require.Equal(t, tc.want, e.Kind(), tc.desc)
		require.Equal(t, tc.want != tgapi.KindOther, tgapi.IsKind(e, tc.want) && tc.want != tgapi.KindOther, tc.desc)
	}
	// No answer: no kind, whatever the text.
	require.Equal(t, tgapi.KindOther, (&tgapi.Error{Method: "sendMessage", Err: errors.New("chat not found")}).Kind())
}

// The answers of the emulator that only a description tells apart.
func TestKindsOfEmulatorAnswers(t *testing.T) {
	t.Parallel()
	emu := testkit.NewEmulator(t, testkit.Unlimited("the client's encoding and errors, not pacing"))
	c := newClient(t, emu, tgapi.Config{})
	ctx := ctxFor(t, 20*time.Second)
	const chat = int64(5)
	emu.AddChat(models.Chat{ID: chat})
	m, err := c.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "x"})
	require.NoError(t, err)
	_, err = c.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: m.ID, Text: "x"})
	require.True(t, tgapi.IsKind(err, tgapi.KindNotModified), "%v", err)
	_, err = c.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: m.ID + 100, Text: "y"})
	require.True(t, tgapi.IsKind(err, tgapi.KindEditNotFound), "%v", err)
	_, err = c.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "<b>x", ParseMode: models.ParseModeHTML})
	require.True(t, tgapi.IsKind(err, tgapi.KindParseEntities), "%v", err)
	_, err = c.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: string(make([]byte, 5000))})
	require.True(t, tgapi.IsBadRequest(err), "%v", err)
	emu.SetStarBalance(0)
	_, err = c.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "paid", AllowPaidBroadcast: true})
	require.True(t, tgapi.IsKind(err, tgapi.KindCannotPay), "%v", err)
}

// IsCannotPay matches the documented stand-in and the wordings around it.
func TestIsCannotPay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		want bool
	}{
		{"Bad Request: " + tgemu.CannotPayDescription, true},
		{"Bad Request: balance_too_low", true},
		{"Bad Request: not enough stars to send", true},
		{"Bad Request: INSUFFICIENT STARS", true},
		{"Bad Request: the Stars balance is too low", true},
		{"bad request, Bad Request: " + tgemu.CannotPayDescription, true},
		{"Bad Request: not enough Stars to send paid broadcast", true},
		{"Bad Request: the bot's Stars balance is too low", true},
		{"Bad Request: chat not found", false},
		{"Bad Request: message is too long", false},
		{"", false},
	} {
		require.Equal(t, tc.want, tgapi.IsCannotPay(tc.desc), tc.desc)
	}
}

func TestNewRefusesAnEmptyToken(t *testing.T) {
	t.Parallel()
	_, err := tgapi.New(tgapi.Config{Token: " "})
	require.Error(t, err)
}

func ptr[T any](v T) *T { return &v }

// Answers are read into buffers the client reuses for later answers: what
// a call decoded (an update's JSON as received, a sent message) stays as it
// was after more calls read their answers into the same buffers.
func TestAnAnswersBufferIsReusedWithoutChangingWhatWasDecoded(t *testing.T) {
	t.Parallel()
	emu := testkit.NewEmulator(t, testkit.Unlimited("the client's answer buffers, not pacing"))
	c := newClient(t, emu, tgapi.Config{Timeout: 10 * time.Second})
	ctx := ctxFor(t, 30*time.Second)
	const chat = int64(42)
	emu.AddChat(models.Chat{ID: chat})
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: chat, Text: "/start first"})
	require.NoError(t, err)
	ups, err := c.GetUpdates(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	update := string(ups[0].JSON)
	first, err := c.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "first message"})
	require.NoError(t, err)
	for i := range 20 {
		_, err := c.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: strings.Repeat(strconv.Itoa(i%10), 300)})
		require.NoError(t, err)
		require.Equal(t, update, string(ups[0].JSON), "the update's JSON after %d more answers", i+1)
		require.Equal(t, "first message", first.Text)
	}
}
