package worker_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/redact"
	"github.com/codemojex/codemojex/worker"
)

// secretPart is the token after the ':'.
var secretPart = token[strings.IndexByte(token, ':')+1:]

// The token never appears in logs, returned errors or dead letters, whatever
// goes wrong: connection resets, 5xx (HTML and JSON), non-JSON bodies, a bad
// server URL.
func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{maxAttempts: 2})
	e.emu.InjectFault(tgemu.DropConnection().ForChat(1).Times(-1))
	e.emu.InjectFault(tgemu.BadGateway().ForChat(2).Times(-1))
	e.emu.InjectFault(tgemu.InternalServerError().ForChat(3).Times(-1))
	e.emu.InjectFault(tgemu.NonJSON().ForChat(4).Times(-1))
	e.emu.InjectFault(tgemu.DropConnection().Processed().ForChat(5).Times(-1))
	for c := int64(1); c <= 5; c++ {
		e.notify(c, "x", notifier.Reply)
	}
	_, stop := e.start(e.config())
	dead := e.waitDead(tgjob.QueueReply, 5)
	require.NoError(t, stop())

	// A worker whose server URL cannot even be parsed: the library's error
	// quotes the whole request URL, token included.
	bad := e.config()
	bad.ServerURL = "http://[::1"
	bad.Registerer = nil
	badLogs := &testkit.LogBuffer{}
	bad.Logger = slog.New(slog.NewJSONHandler(badLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.notify(6, "x", notifier.Notification)
	e.start(bad)
	dead = append(dead, e.waitDead(tgjob.QueueNotify, 1)...)

	for _, d := range dead {
		require.True(t, strings.HasPrefix(d.Reason, "transient: "), d.Reason)
		testkit.RequireNoToken(t, d.Reason, token, "dead letter "+d.Reason)
	}
	testkit.RequireNoToken(t, e.logs.String(), token, "logs")
	testkit.RequireNoToken(t, badLogs.String(), token, "logs")
	require.Contains(t, badLogs.String(), redact.Redacted, "the bad URL's error was logged, redacted")

	// Returned errors: the library's raw error does carry the token (so the
	// check above means something); the redacted one does not, and still
	// matches with errors.As.
	b, err := bot.New(token, bot.WithServerURL("http://[::1"), bot.WithSkipGetMe())
	require.NoError(t, err)
	_, raw := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: 1, Text: "x"})
	require.ErrorContains(t, raw, secretPart)
	red := redact.New(token).Error(raw)
	testkit.RequireNoToken(t, red.Error(), token, "redacted error")
	var ue *url.Error
	require.True(t, errors.As(red, &ue))

	_, err = worker.New(e.n, worker.Config{Token: " "})
	require.Error(t, err)
	testkit.RequireNoToken(t, err.Error(), token, "New error")
}
