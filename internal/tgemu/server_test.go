package tgemu_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

func TestGetMe(t *testing.T) {
	ctx := testCtx(t)
	tests := []struct {
		name string
		opts []tgemu.Option
		want models.User
	}{
		{
			name: "default token and user",
			want: models.User{ID: 7000000001, IsBot: true, FirstName: "Codemojex Test", Username: "codemojex_test_bot", CanJoinGroups: true},
		},
		{
			name: "custom token and user",
			opts: []tgemu.Option{tgemu.WithToken("42:secret"), tgemu.WithBotUser(models.User{ID: 42, FirstName: "X", Username: "x_bot"})},
			want: models.User{ID: 42, IsBot: true, FirstName: "X", Username: "x_bot"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			emu := testkit.NewEmulator(t, tc.opts...)
			// bot.New calls getMe itself when WithSkipGetMe is absent.
			b, err := bot.New(emu.Token(), bot.WithServerURL(emu.URL()))
			require.NoError(t, err)
			me, err := b.GetMe(ctx)
			require.NoError(t, err)
			require.Equal(t, tc.want, *me)
			require.Equal(t, tc.want, emu.BotUser())
			require.Equal(t, tc.want.ID, b.ID())
		})
	}
}

func TestWrongTokenIsUnauthorized(t *testing.T) {
	emu := testkit.NewEmulator(t)
	_, err := bot.New("1:wrong", bot.WithServerURL(emu.URL()))
	require.ErrorIs(t, err, bot.ErrorUnauthorized)
	require.ErrorContains(t, err, "Unauthorized")

	code, r := rawDo(testCtx(t), t, emu.URL()+"/bot1:wrong/sendMessage", "application/json", `{}`)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, apiReply{ErrorCode: 401, Description: "Unauthorized"}, r)
}

func TestUnknownMethodAndPath(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)

	// "close" is a real Bot API method the emulator does not implement.
	_, err := newBot(t, emu).Close(ctx)
	require.ErrorIs(t, err, bot.ErrorNotFound)

	for _, path := range []string{"/bot" + emu.Token() + "/noSuchMethod", "/", "/foo", "/bot" + emu.Token() + "/"} {
		code, r := rawDo(ctx, t, emu.URL()+path, "application/json", `{}`)
		require.Equal(t, http.StatusNotFound, code, path)
		require.Equal(t, apiReply{ErrorCode: 404, Description: "Not Found"}, r, path)
	}
}

func TestMethodNamesAreCaseInsensitive(t *testing.T) {
	emu := testkit.NewEmulator(t)
	code, r := rawCall(testCtx(t), t, emu, "GETME", nil)
	require.Equal(t, http.StatusOK, code)
	require.True(t, r.OK)
}

func TestRequestBodyEncodings(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("the server's protocol, not its limits (limits_test.go)"))
	emu.AddChat(models.Chat{ID: 5})
	base := emu.URL() + "/bot" + emu.Token() + "/sendMessage"
	tests := []struct {
		name, contentType, body, url string
	}{
		{"json", "application/json", `{"chat_id":5,"text":"json body","reply_markup":{"inline_keyboard":[]}}`, base},
		{"urlencoded", "application/x-www-form-urlencoded", url.Values{"chat_id": {"5"}, "text": {"form body"}}.Encode(), base},
		{"query string", "", "", base + "?chat_id=5&text=query"},
		{"multipart", "multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n5\r\n" +
			"--XX\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nmultipart body\r\n--XX--\r\n", base},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, r := rawDo(ctx, t, tc.url, tc.contentType, tc.body)
			require.Equal(t, http.StatusOK, code, "%+v", r)
			require.True(t, r.OK)
		})
	}
	msgs := emu.Messages(5)
	require.Len(t, msgs, 4)
	require.Equal(t, []string{"json body", "form body", "query", "multipart body"},
		[]string{msgs[0].Text, msgs[1].Text, msgs[2].Text, msgs[3].Text})
	require.JSONEq(t, `{"inline_keyboard":[]}`, msgs[0].ReplyMarkup)
}

func TestLoggerNeverSeesToken(t *testing.T) {
	ctx := testCtx(t)
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	emu := testkit.NewEmulator(t, tgemu.WithLogger(logger), tgemu.WithAllowAnyChat())
	b := newBot(t, emu)
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 9, Text: "hello"})
	require.NoError(t, err)
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 9, Text: ""})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	_, _ = rawDo(ctx, t, emu.URL()+"/bot"+emu.Token()+"x/getMe", "", "")

	require.Contains(t, buf.String(), "method=sendMessage")
	require.NotContains(t, buf.String(), emu.Token())
	require.NotContains(t, buf.String(), strings.SplitN(emu.Token(), ":", 2)[1])
}

func TestCloseEndsLongPollAndWaiters(t *testing.T) {
	emu, err := tgemu.New()
	require.NoError(t, err)
	ctx := testCtx(t)

	pollDone := make(chan apiReply, 1)
	go func() {
		_, r := rawCall(ctx, t, emu, "getUpdates", url.Values{"timeout": {"30"}})
		pollDone <- r
	}()
	require.NoError(t, emu.WaitUntil(ctx, emu.Polling))

	waitErr := make(chan error, 1)
	go func() {
		_, err := emu.WaitForMessages(ctx, 1, 1)
		waitErr <- err
	}()

	require.NoError(t, emu.Close())
	select { // Close ends it: the poll's own end is 30 s away, half of it is the margin of a busy host
	case r := <-pollDone:
		require.Empty(t, updateIDs(t, r))
	case <-time.After(15 * time.Second):
		t.Fatal("long poll still pending after Close")
	}
	require.ErrorIs(t, <-waitErr, tgemu.ErrClosed)
	require.NoError(t, emu.Close(), "Close is idempotent")

	_, err = http.Get(emu.URL())
	require.Error(t, err, "server stopped")
	require.False(t, errors.Is(err, context.Canceled))
}

// ConnsAccepted counts connections, not requests (keep-alive), and
// WithIdleTimeout closes a connection left idle that long, as a server
// with a keep-alive timeout does: a client that then reuses it is refused
// (here net/http's client, which sees the close and dials again: a
// second connection accepted). Without the option a connection idle as
// long stays open.
func TestIdleConnectionsCloseAfterTheIdleTimeoutOnly(t *testing.T) {
	ctx := testCtx(t)
	for _, tc := range []struct {
		name  string
		opts  []tgemu.Option
		conns int
	}{
		{"no idle timeout", nil, 1},
		{"idle timeout 50 ms", []tgemu.Option{tgemu.WithIdleTimeout(50 * time.Millisecond)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emu := testkit.NewEmulator(t, tc.opts...)
			b, err := bot.New(emu.Token(), bot.WithServerURL(emu.URL()), bot.WithSkipGetMe())
			require.NoError(t, err)
			for range 3 {
				_, err := b.GetMe(ctx)
				require.NoError(t, err)
			}
			require.Equal(t, 1, emu.ConnsAccepted(), "three calls in turn on one connection")
			time.Sleep(400 * time.Millisecond)
			_, err = b.GetMe(ctx)
			require.NoError(t, err)
			require.Equal(t, tc.conns, emu.ConnsAccepted())
		})
	}
}
