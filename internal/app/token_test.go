package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// wrongToken is well formed, but not the emulator's: it answers 401.
const wrongToken = "111111111:AAwrongTokenTheEmulatorRejects_0123"

// TestTokenRejected: a token Telegram answers 401 to (wrong or revoked)
// stops the process with intake.ErrTokenRejected and a clear error line, whether
// getMe or, later, getUpdates gets the 401; the token is never shown.
func TestTokenRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   []string
		fault *tgemu.Fault
		log   string
	}{
		{name: "getMe", env: []string{"TELEGRAM_BOT_TOKEN=" + wrongToken},
			log: "Telegram answered 401 Unauthorized to getMe: TELEGRAM_BOT_TOKEN is wrong or was revoked"},
		{name: "getUpdates", fault: ptr(tgemu.HTTPError(http.StatusUnauthorized,
			`{"ok":false,"error_code":401,"description":"Unauthorized"}`).For("getUpdates").Times(-1)),
			log: "Telegram answered 401 Unauthorized to getUpdates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.fault != nil {
				h.emu.InjectFault(*tc.fault)
			}
			err := h.runUntilError(tc.env)
			require.ErrorIs(t, err, intake.ErrTokenRejected)
			require.Contains(t, err.Error(), "TELEGRAM_BOT_TOKEN is wrong or was revoked")
			testkit.RequireNoToken(t, err.Error(), wrongToken, "the error")
			logs := h.logs.String()
			require.Contains(t, logs, tc.log)
			testkit.RequireNoToken(t, logs, wrongToken, "a log line")
			require.Equal(t, 1, strings.Count(logs, "401 Unauthorized to "+tc.name), "no retry loop")
		})
	}
}

// TestHealthWhileGetMeFails: while getMe fails, /healthz answers 503 with
// the (redacted) failure, not "standby"; once it succeeds, the poller polls
// and /healthz answers 200.
func TestHealthWhileGetMeFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.emu.InjectFault(tgemu.BadGateway().For("getMe").Times(-1))
	r := h.start(nil)
	require.Eventually(t, func() bool {
		code, body := h.get(r, "/healthz")
		return code == http.StatusServiceUnavailable && strings.HasPrefix(body, "telegram: getMe failing: ")
	}, wait, 20*time.Millisecond)
	code, body := h.get(r, "/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.NotContains(t, body, "standby")
	testkit.RequireNoToken(t, body, h.emu.Token(), "/healthz")
	require.False(t, r.app.leader.Load(), "no lease before getMe succeeded")

	h.emu.ClearFaults()
	h.waitLeader(r)
	code, body = h.get(r, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (polling)\n", body)
}

func ptr[T any](v T) *T { return &v }
