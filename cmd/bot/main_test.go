package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

const goodToken = "123456789:AAbcdefghijklmnopqrstuvwxyz0123456"

// TestBadConfigExitsWithCode2 builds the real binary and runs it with one
// bad variable at a time: it stops with exit code 2 and a message naming
// the variable and what it expects, never the token.
func TestBadConfigExitsWithCode2(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildBot(t)

	for _, tc := range []struct {
		name, env, want string
	}{
		{"no token", "TELEGRAM_BOT_TOKEN=", "TELEGRAM_BOT_TOKEN: the bot token from @BotFather"},
		{"bad token", "TELEGRAM_BOT_TOKEN=123:short", "TELEGRAM_BOT_TOKEN: a token shaped <digits>:<20-100 letters, digits, _ or ->"},
		{"api url", "TELEGRAM_API_URL=ftp://x", "TELEGRAM_API_URL: an http(s) URL"},
		{"valkey url", "VALKEY_URL=http://x", "VALKEY_URL: a redis:// (rediss:// for TLS, unix:// for a socket) URL"},
		{"valkey key tag", "VALKEY_KEY_TAG={bot}", "VALKEY_KEY_TAG: the hash tag of this bot's keys: 1-64 characters of A-Z a-z 0-9 . _ -"},
		{"admin ids", "ADMIN_IDS=1,abc", `ADMIN_IDS: Telegram user ids, positive whole numbers, comma-separated (e.g. 11,22; a comma at the end is fine); got "abc"`},
		{"empty admin id", "ADMIN_IDS=1,,2", "ADMIN_IDS: Telegram user ids, positive whole numbers, comma-separated (e.g. 11,22; a comma at the end is fine); an id is empty"},
		{"negative admin", "ADMIN_IDS=-5", "ADMIN_IDS: Telegram user ids, positive whole numbers"},
		{"global rate", "TELEGRAM_GLOBAL_RATE=0", "TELEGRAM_GLOBAL_RATE: messages/s for the whole bot, 1..10000"},
		{"chat rate", "TELEGRAM_CHAT_RATE=fast", `TELEGRAM_CHAT_RATE: a whole number, messages/s per private chat, 1..100 (Telegram allows about 1); got "fast"`},
		{"group rate", "TELEGRAM_GROUP_RATE=7000", "TELEGRAM_GROUP_RATE: messages/min per group, 1..6000"},
		{"role", "BOT_ROLE=leader", `BOT_ROLE: one of all, poller, handler, worker; got "leader"`},
		{"workers", "WORKERS=0", "WORKERS: most sends in flight per process, 1..4096"},
		{"console without a token", "CONSOLE_ADDR=127.0.0.1:8081", "CONSOLE_TOKEN: required with CONSOLE_ADDR: at least 32 random characters"},
		{"workers text", "WORKERS=many", `WORKERS: a whole number, most sends in flight per process, 1..4096; got "many", not a whole number`},
		{"worker lease without unit", "WORKER_LEASE=30", `WORKER_LEASE: a Go duration such as 30s (a number with a unit: ms, s, m, h); the value set is not: unable to parse duration: time: missing unit in duration "30"`},
		{"worker lease too short", "WORKER_LEASE=10ms", "WORKER_LEASE: a duration from 1s to 1h, e.g. 30s; got 10ms"},
		{"http addr", "HTTP_ADDR=8080", `HTTP_ADDR: host:port or :port, e.g. :8080; got "8080"`},
		{"log level", "LOG_LEVEL=loud", `LOG_LEVEL: one of debug, info, warn, error; got "loud"`},
		{"api url holds the token", "TELEGRAM_API_URL=ftp://x/bot" + goodToken, "TELEGRAM_API_URL: an http(s) URL"},
		{"api url with the bot path", "TELEGRAM_API_URL=https://api.telegram.org/bot" + goodToken, "TELEGRAM_API_URL: the Bot API server only, such as https://api.telegram.org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// An empty directory: no .env there.
			code, stderr := testkit.RunBot(t, bin, t.TempDir(), []string{"TELEGRAM_BOT_TOKEN=" + goodToken, tc.env})
			require.Equal(t, 2, code)
			require.Contains(t, stderr, "codemojex: configuration error: "+tc.want)
			testkit.RequireNoToken(t, stderr, goodToken, "stderr")
		})
	}

	// A malformed .env is reported by file and line, never quoted: the bad
	// line may be the token's.
	for _, tc := range []struct {
		name, dotenv, want string
	}{
		{"dotenv unterminated quote", "WORKERS=2\nTELEGRAM_BOT_TOKEN=\"" + goodToken + "\n",
			`.env: line 2: a quoted value has no closing "`},
		{"dotenv bad variable name", "TELEGRAM BOT-TOKEN=" + goodToken + "\n",
			".env: line 1: a variable name has a character other than"},
		{"dotenv no variable name", "WORKERS=2\n=" + goodToken + "\n",
			".env: line 2: no variable name before '='"},
		{"dotenv a name starting with a digit", "1TELEGRAM_BOT_TOKEN=" + goodToken + "\n",
			".env: line 1: a variable name has a character other than letters, digits and '_', or starts with a digit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wd := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(wd, ".env"), []byte(tc.dotenv), 0o600))
			code, stderr := testkit.RunBot(t, bin, wd, nil)
			require.Equal(t, 2, code)
			require.Contains(t, stderr, "codemojex: configuration error: "+tc.want)
			testkit.RequireNoToken(t, stderr, goodToken, "stderr")
		})
	}

	t.Run("dotenv does not override the environment", func(t *testing.T) {
		t.Parallel()
		wd := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(wd, ".env"), []byte("TELEGRAM_BOT_TOKEN="+goodToken+"\nWORKERS=0\nBOT_ROLE=worker\n"), 0o600))
		code, stderr := testkit.RunBot(t, bin, wd, []string{"BOT_ROLE=nope"})
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `BOT_ROLE: one of all, poller, handler, worker; got "nope"`, "the set variable wins over .env")
	})

	t.Run("an empty variable that beats .env is named", func(t *testing.T) {
		t.Parallel()
		wd := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(wd, ".env"), []byte("TELEGRAM_BOT_TOKEN="+goodToken+"\n"), 0o600))
		code, stderr := testkit.RunBot(t, bin, wd, []string{"TELEGRAM_BOT_TOKEN="})
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "codemojex: configuration error: TELEGRAM_BOT_TOKEN: the bot token from @BotFather")
		require.Contains(t, stderr, "set but empty in the environment, so .env's values were not used: TELEGRAM_BOT_TOKEN (unset them to use .env's)")
		testkit.RequireNoToken(t, stderr, goodToken, "stderr")
	})
}

// TestUnreachableValkeyIsNamedWithoutItsPassword: a Valkey that refuses
// the connection stops the process with an error naming VALKEY_URL and the
// URL it tried, its password replaced, and how to start one, never the
// token (new-user trials: the error did not say which setting, then gave
// no hint).
func TestUnreachableValkeyIsNamedWithoutItsPassword(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildBot(t)
	code, stderr := testkit.RunBot(t, bin, t.TempDir(), []string{"TELEGRAM_BOT_TOKEN=" + goodToken, "VALKEY_URL=redis://:s3cret-pass@127.0.0.1:1/0"})
	require.NotZero(t, code)
	require.Contains(t, stderr, "connect to Valkey at VALKEY_URL redis://:xxxxx@127.0.0.1:1/0 (is a Valkey or Redis 7+ server running there? docker compose up starts one; without Docker see docs/operations.md#running-without-docker): ")
	require.NotContains(t, stderr, "s3cret-pass")
	testkit.RequireNoToken(t, stderr, goodToken, "stderr")
}

// TestRejectedTokenExitsWithCode2: a well-formed token Telegram answers 401
// to (wrong or revoked) stops the process at once with exit code 2 and a
// message saying so, instead of retrying getMe forever; the token is never
// shown.
func TestRejectedTokenExitsWithCode2(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildBot(t)
	emu := testkit.NewEmulator(t)
	srv := valkeytest.Start(t, valkeytest.Options{})

	code, stderr := testkit.RunBot(t, bin, t.TempDir(), []string{"TELEGRAM_BOT_TOKEN=" + goodToken, "TELEGRAM_API_URL=" + emu.URL(),
		"VALKEY_URL=" + srv.URL, "HTTP_ADDR=127.0.0.1:0"})
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "telegram rejected the bot token (401 Unauthorized): TELEGRAM_BOT_TOKEN is wrong or was revoked")
	testkit.RequireNoToken(t, stderr, goodToken, "stderr")
}

// TestBinaryServesTheConsoleOnConsoleAddr: with CONSOLE_ADDR and
// CONSOLE_TOKEN the real binary serves the console there: the sign-in page
// with its CSP, and a signed-in Overview after the token; not on HTTP_ADDR.
func TestBinaryServesTheConsoleOnConsoleAddr(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildBot(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("the bot's start and stop, not its pacing"))
	srv := valkeytest.Start(t, valkeytest.Options{})
	addr, httpAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	const token = "binary-console-token-0123456789-abcdef"
	testkit.StartBot(t, bin, "bot", []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(),
		"VALKEY_URL=" + srv.URL, "HTTP_ADDR=" + httpAddr, "CONSOLE_ADDR=" + addr, "CONSOLE_TOKEN=" + token})
	var resp *http.Response
	require.Eventually(t, func() bool {
		var err error
		resp, err = http.Get("http://" + addr + "/login")
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "the console answers")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "Console token (CONSOLE_TOKEN)")
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	resp, err = (&http.Client{Jar: jar}).PostForm("http://"+addr+"/login", url.Values{"token": {token}})
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `id="v-oldest"`, "signed in: the Overview")
	testkit.RequireNoToken(t, string(body), emu.Token(), "the Overview")
	resp, err = http.Get("http://" + httpAddr + "/login")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "the console is not on HTTP_ADDR")
}

// The bot takes no arguments but these: -h/--help prints the usage and
// exits 0 without reading the configuration (nor starting anything), so
// does --version with the version; healthcheck refuses a bad argument with
// 2 before probing anything (its probes: TestHealthcheckExitCodes); any
// other argument exits 2 (it used to be ignored, so `codemojex --help`
// with a valid environment started the bot).
func TestArgumentsAreHelpOrRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--help"}, exitOK},
		{[]string{"-h"}, exitOK},
		{[]string{"--version"}, exitOK},
		{[]string{"version"}, exitOK},
		{[]string{"--version", "now"}, exitConfig},
		{[]string{"healthcheck", "now"}, exitConfig},
		{[]string{"healthcheck", "-bogus"}, exitConfig},
		{[]string{"healthcheck", "-timeout", "-1s"}, exitConfig},
		{[]string{"start"}, exitConfig},
	} {
		require.Equal(t, tc.want, run(tc.args), "%v", tc.args)
	}
}
