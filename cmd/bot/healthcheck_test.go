package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// TestHealthcheckExitCodes runs the real binary's `healthcheck` against
// servers answering /healthz: exit 0 on a 200, 1 on another status, on no
// server and on no answer within -timeout (each with one line saying
// why), 2 on an HTTP_ADDR it cannot probe or a bad argument; an empty host
// is probed on the loopback, and HTTP_ADDR comes from .env when the
// environment has none.
func TestHealthcheckExitCodes(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildBot(t)
	serve := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/healthz" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	healthy, unhealthy := serve(http.StatusOK, "ok\n"), serve(http.StatusServiceUnavailable, "valkey: connection refused\nmore")
	hung := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hung }))
	t.Cleanup(func() { close(hung); stuck.Close() })
	_, healthyPort, err := net.SplitHostPort(healthy)
	require.NoError(t, err)
	withDotenv := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(withDotenv, ".env"), []byte("HTTP_ADDR="+healthy+"\n"), 0o600))

	for _, tc := range []struct {
		name string
		dir  string // "" = an empty directory
		env  []string
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{"200 is healthy", "", []string{"HTTP_ADDR=" + healthy}, nil, 0, "healthy: ok"},
		{"an empty host is the loopback", "", []string{"HTTP_ADDR=:" + healthyPort}, nil, 0, "healthy: ok"},
		{"an unspecified host is the loopback", "", []string{"HTTP_ADDR=0.0.0.0:" + healthyPort}, nil, 0, "healthy: ok"},
		{"HTTP_ADDR from .env", withDotenv, nil, nil, 0, "healthy: ok"},
		{"503 is unhealthy, with the reason", "", []string{"HTTP_ADDR=" + unhealthy}, nil, 1, "503 valkey: connection refused"},
		{"no server is unhealthy", "", []string{"HTTP_ADDR=" + testkit.FreeAddr(t)}, nil, 1, "unhealthy: GET http://"},
		{"no answer within the timeout is unhealthy", "", []string{"HTTP_ADDR=" + strings.TrimPrefix(stuck.URL, "http://")},
			[]string{"-timeout", "200ms"}, 1, "no answer within the timeout"},
		{"port 0 cannot be probed", "", []string{"HTTP_ADDR=:0"}, nil, 2, "port 0 is picked by the kernel"},
		{"a bad HTTP_ADDR", "", []string{"HTTP_ADDR=8080"}, nil, 2, "configuration error: HTTP_ADDR: host:port or :port"},
		{"an extra argument", "", []string{"HTTP_ADDR=" + healthy}, []string{"now"}, 2, "usage: codemojex healthcheck"},
		{"--help is not an error", "", []string{"HTTP_ADDR=" + healthy}, []string{"--help"}, 0, "usage: codemojex healthcheck [-timeout 3s]"},
		{"-h too", "", []string{"HTTP_ADDR=" + healthy}, []string{"-h"}, 0, "-timeout duration"},
		{"a bad timeout", "", []string{"HTTP_ADDR=" + healthy}, []string{"-timeout", "soon"}, 2, "invalid value"},
		{"a timeout of 0", "", []string{"HTTP_ADDR=" + healthy}, []string{"-timeout", "0s"}, 2, "a positive timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := tc.dir
			if dir == "" {
				dir = t.TempDir()
			}
			code, stdout, stderr := testkit.RunBinary(t, bin, dir, tc.env, append([]string{"healthcheck"}, tc.args...)...)
			require.Equal(t, tc.code, code, "stdout %q, stderr %q", stdout, stderr)
			if tc.code == 0 {
				require.Contains(t, stdout, tc.out)
				return
			}
			require.Contains(t, stderr, tc.out)
			require.Empty(t, stdout)
		})
	}
}

// TestHealthcheckAndVersionOfTheRunningBot: a binary stamped with a
// version at link time (as the Dockerfile does) prints it on --version and
// in its start-up log line; its `healthcheck` exits 1 before the bot
// serves, 0 once the bot is healthy (its /healthz 200: it polled and
// answered a /start), and 1 again once it stopped.
func TestHealthcheckAndVersionOfTheRunningBot(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildBot(t, "-ldflags", "-X github.com/codemojex/codemojex/internal/version.stamped=v9.9.9-test")
	code, stdout, _ := testkit.RunBinary(t, bin, t.TempDir(), nil, "--version")
	require.Zero(t, code)
	require.Regexp(t, `^codemojex v9\.9\.9-test \(go1\.\d+\S*, \w+/\w+\)\n$`, stdout)

	emu := testkit.NewEmulator(t, testkit.Unlimited("the bot's health, not its pacing"))
	srv := valkeytest.Start(t, valkeytest.Options{})
	httpAddr := testkit.FreeAddr(t)
	probe := func() (int, string) {
		code, stdout, stderr := testkit.RunBinary(t, bin, t.TempDir(), []string{"HTTP_ADDR=" + httpAddr}, "healthcheck")
		return code, stdout + stderr
	}
	code, out := probe()
	require.Equal(t, 1, code, "nothing serves yet: %s", out)

	p := testkit.StartBot(t, bin, "bot", []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(),
		"VALKEY_URL=" + srv.URL, "HTTP_ADDR=" + httpAddr})
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 77, From: models.User{ID: 77, FirstName: "Op"}, Text: "/start"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = emu.WaitForMessages(ctx, 77, 1)
	require.NoError(t, err, "the bot answers /start")
	require.Eventually(t, func() bool {
		code, out = probe()
		return code == 0
	}, 60*time.Second, 200*time.Millisecond, "healthcheck exits 0 once the bot is healthy; last: %d %s", code, out)
	require.Contains(t, out, "healthy: ok")
	resp, err := http.Get("http://" + httpAddr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the probe's verdict is /healthz's")
	require.Contains(t, p.Out.String(), `"msg":"codemojex starting","version":"v9.9.9-test"`)

	require.NoError(t, p.Stop())
	code, out = probe()
	require.Equal(t, 1, code, "stopped: %s", out)
}
