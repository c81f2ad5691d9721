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

// TestSecondPollerWaits: a second poller sees the first one's lease, says
// so and waits, without any getUpdates (so no 409); it takes over when the
// first stops.
func TestSecondPollerWaits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.start([]string{"BOT_ROLE=poller"})
	h.waitLeader(first)
	second := h.start([]string{"BOT_ROLE=all"})
	require.Eventually(t, func() bool {
		return strings.Contains(h.logs.String(), "another poller is active (it holds the poller lease in Valkey), waiting")
	}, wait, 10*time.Millisecond)
	ann := user(903, "Ann")
	require.Contains(t, h.ask(0, ann, "/start"), "Welcome", "the second process's worker sends the first's replies")
	code, body := h.get(second, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (standby poller: "+first.app.lease.Token()+" is polling)\n", body)
	require.False(t, second.app.leader.Load())

	first.stop()
	h.waitLeader(second)
	require.Contains(t, h.ask(0, ann, "/help"), "Codemojex")
	for _, r := range h.emu.Requests() {
		require.NotEqual(t, http.StatusConflict, r.HTTPStatus, "no 409: only one process polled at a time")
	}
}

// TestConflictBacksOff: when Telegram answers getUpdates 409 (another
// instance outside this Valkey, or a webhook), the poller says so and backs
// off instead of looping.
func TestConflictBacksOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.emu.SetWebhook("https://example.com/hook")
	r := h.start(nil)
	time.Sleep(3 * time.Second)
	conflicts := 0
	for _, rq := range h.emu.Requests() {
		if rq.HTTPStatus == http.StatusConflict {
			conflicts++
		}
	}
	require.Equal(t, 1, conflicts, "one 409, then a back-off of at least 5 s")
	require.Contains(t, h.logs.String(), "Telegram answered 409 Conflict: another instance polls this bot")
	code, body := h.get(r, "/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "polling: no successful getUpdates yet")
}

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
