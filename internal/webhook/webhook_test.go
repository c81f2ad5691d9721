package webhook

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// secret is TELEGRAM_WEBHOOK_SECRET in these tests (that of internal/app's).
const secret = "test_secret-0123456789"

// newInbox is an update queue on a real Valkey, in the test's own
// namespace.
func newInbox(t *testing.T) *intake.Inbox {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	upd, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(ns))...)
	require.NoError(t, err)
	return intake.NewInbox(c, upd, ns)
}

// A request without the right secret is 401 and records nothing; a body
// that is not an update, or is too large, is 400; another method is 405.
// (Moved from internal/app, where it ran the whole bot in BOT_ROLE=poller;
// the receiver on a real update queue is what it checks.)
func TestWebhookRefusesWrongSecretAndBadBodies(t *testing.T) {
	t.Parallel()
	inbox := newInbox(t)
	received := prometheus.NewCounter(prometheus.CounterOpts{Name: "received"})
	rc := NewReceiver(ReceiverConfig{Secret: secret, Inbox: inbox, Received: received, Log: slog.New(slog.DiscardHandler)})
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	url := hs.URL + "/tg/hook"
	ctx := context.Background()
	good := fmt.Appendf(nil, `{"update_id":5,"message":{"message_id":5,"date":1700000000,`+
		`"chat":{"id":704,"type":"private","first_name":"U"},"from":{"id":704,"is_bot":false,"first_name":"U"},"text":"/help",`+
		`"entities":[{"type":"bot_command","offset":0,"length":5}]}}`)
	for _, tc := range []struct {
		name, secret string
		body         []byte
		want         int
	}{
		{"missing secret", "", good, http.StatusUnauthorized},
		{"wrong secret", "test_secret-0123456788", good, http.StatusUnauthorized},
		{"secret prefix", secret[:5], good, http.StatusUnauthorized},
		{"not JSON", secret, []byte("update_id=5"), http.StatusBadRequest},
		{"JSON without update_id", secret, []byte(`{"message":{}}`), http.StatusBadRequest},
		{"oversized", secret, append([]byte(`{"update_id":6,"x":"`), append(bytes.Repeat([]byte("a"), 1<<20), '"', '}')...), http.StatusBadRequest},
	} {
		require.Equal(t, tc.want, testkit.PostUpdate(t, url, tc.secret, tc.body), tc.name)
	}
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	n, err := inbox.Unhandled(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing recorded")
	b, err := inbox.Backlog(ctx)
	require.NoError(t, err)
	require.Zero(t, b.Pending)

	require.Equal(t, http.StatusOK, testkit.PostUpdate(t, url, secret, good))
	require.Equal(t, http.StatusOK, testkit.PostUpdate(t, url, secret, good), "a resend is answered 200")
	n, err = inbox.Unhandled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "and recorded once")

	// The answers as counted on /metrics (codemojex_webhook_requests_total)
	// and the updates recorded (codemojex_updates_received_total).
	for answer, want := range map[string]float64{"unauthorized": 3, "bad_request": 3, "recorded": 2, "error": 0} {
		require.Equal(t, want, value(t, rc.requests.WithLabelValues(answer)), answer)
	}
	require.Equal(t, 1.0, value(t, received), "the resend is no new update")
}

// value is a counter's value.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}
