package redact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/redact"
)

// token is a realistic bot token.
const token = "7000000001:AAHsecretTOKENfor-Redact_Tests_0123456"

var secretPart = token[strings.IndexByte(token, ':')+1:]

func TestStringForms(t *testing.T) {
	t.Parallel()
	r := redact.New(token)
	for _, tc := range []struct{ in, want string }{
		{"GET https://x/bot" + token + "/sendMessage", "GET https://x/bot" + redact.Redacted + "/sendMessage"},
		{"q=" + url.QueryEscape(token), "q=" + redact.Redacted},
		{"path " + url.PathEscape(token), "path " + redact.Redacted},
		{"cut at the colon: " + secretPart, "cut at the colon: " + redact.Redacted},
		{"7000000001:" + secretPart[:10] + " is too short a piece", "7000000001:" + secretPart[:10] + " is too short a piece"},
		{"twice " + token + " " + token, "twice " + redact.Redacted + " " + redact.Redacted},
		{"nothing here", "nothing here"},
	} {
		require.Equal(t, tc.want, r.String(tc.in), tc.in)
	}
	// The bot id is public and kept when only the secret appears.
	require.Equal(t, "7000000001 "+redact.Redacted, r.String("7000000001 "+secretPart))
}

func TestShortAndEmptyTokens(t *testing.T) {
	t.Parallel()
	require.Equal(t, "abc", redact.New("").String("abc"), "no token: nothing replaced")
	require.Equal(t, "1:abc x", redact.New("1:abc").String("1:abc x"), "secrets under 8 bytes are not replaced")
	var nilR *redact.Redactor
	require.Equal(t, "x "+token, nilR.String("x "+token))
	// A token with characters that escape differently is caught in every form.
	odd := "123456:secret/with?odd&chars"
	r := redact.New(odd)
	for _, s := range []string{odd, url.PathEscape(odd), url.QueryEscape(odd), "secret/with?odd&chars",
		url.QueryEscape("secret/with?odd&chars"), url.PathEscape("secret/with?odd&chars")} {
		require.NotContains(t, r.String("<"+s+">"), "secret", s)
	}
}

func TestErrorKeepsChain(t *testing.T) {
	t.Parallel()
	r := redact.New(token)
	require.NoError(t, r.Error(nil))
	raw := &url.Error{Op: "Post", URL: "https://x/bot" + token + "/getMe", Err: fs.ErrNotExist}
	wrapped := fmt.Errorf("send: %w", raw)
	red := r.Error(wrapped)
	testkit.RequireNoToken(t, red.Error(), token, "redacted error")
	require.Equal(t, "send: Post \"https://x/bot"+redact.Redacted+"/getMe\": file does not exist", red.Error())
	var ue *url.Error
	require.True(t, errors.As(red, &ue), "errors.As reaches the original")
	require.Same(t, raw, ue)
	require.ErrorIs(t, red, fs.ErrNotExist)
	require.Same(t, red, r.Error(red), "not wrapped twice")
	require.Equal(t, wrapped, errors.Unwrap(red))
}

func TestHandlerRedactsEverything(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := redact.New(token)
	log := slog.New(r.Handler(slog.NewTextHandler(&buf, nil))).With("url", "https://x/bot"+token+"/m")
	log.WithGroup("grp").Info("msg with "+token, slog.Any("err", errors.New("GET /bot"+token)),
		slog.Group("g", slog.String("s", secretPart), slog.Any("q", url.QueryEscape(token))),
		slog.Any("u", &url.URL{Path: "/bot" + token}), slog.Int("n", 7), slog.Any("v", lazy{}))
	out := buf.String()
	testkit.RequireNoToken(t, out, token, "log")
	require.Contains(t, out, "/bot"+redact.Redacted+"/m")
	require.Contains(t, out, "grp.n=7", "other kinds pass as they are")
	require.True(t, r.Handler(slog.NewTextHandler(&buf, nil)).Enabled(context.Background(), slog.LevelInfo))
}

// lazy is a LogValuer whose value carries the token.
type lazy struct{}

func (lazy) LogValue() slog.Value { return slog.StringValue("resolved " + token) }
