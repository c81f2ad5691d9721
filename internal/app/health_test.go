package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestHealthzAndMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := valkeytest.Start(t, valkeytest.Options{})
	h.c = srv.Client(t)
	r := h.start(nil)
	h.waitLeader(r)
	require.Contains(t, h.ask(0, user(1001, "Ann"), "/start"), "Welcome")

	code, body := h.get(r, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (polling)\n", body)

	// The reply reached the emulator before the worker recorded its
	// message id and acked it: wait for the ack.
	require.Eventually(t, func() bool {
		code, body = h.get(r, "/metrics")
		return code == http.StatusOK && strings.Contains(body, `codemojex_worker_sent_total{queue="reply"} 1`)
	}, wait, 10*time.Millisecond)
	for _, want := range []string{
		`codemojex_queue_depth{queue="reply"} 0`,
		`codemojex_queue_in_flight{queue="notify"} 0`,
		`codemojex_queue_dead_letters{queue="reply"} 0`,
		`codemojex_inbox_depth 0`,
		`codemojex_updates_received_total 1`,
		`codemojex_updates_handled_total{result="ok"} 1`,
		`codemojex_poller_active 1`,
		`codemojex_worker_sent_total{queue="reply"} 1`,
		`codemojex_worker_send_duration_seconds_count`,
		`codemojex_worker_claim_duration_seconds_count`,
	} {
		require.Contains(t, body, want)
	}

	srv.Kill()
	require.Eventually(t, func() bool {
		code, body := h.get(r, "/healthz")
		return code == http.StatusServiceUnavailable && strings.HasPrefix(body, "valkey: ")
	}, wait, 100*time.Millisecond, "503 with a reason while Valkey does not answer")
}
