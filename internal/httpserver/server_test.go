package httpserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/health"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/internal/webhook"
	"github.com/codemojex/codemojex/lanes"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// webhookSecret is TELEGRAM_WEBHOOK_SECRET in these tests (that of
// internal/app's).
const webhookSecret = "test_secret-0123456789"

// serve runs a Server of cfg (Log, Registry and Health filled in when
// unset) on a loopback listener until the test ends, and returns its
// address.
func serve(t *testing.T, cfg Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.Listener = ln
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.Health == nil {
		cfg.Health = func(context.Context) health.Health { return health.Health{OK: true, Reason: "ok (worker)"} }
	}
	s, err := New(cfg)
	require.NoError(t, err)
	started := make(chan struct{})
	stop := testkit.RunInBackground(t, "http", 5*time.Second, func(ctx context.Context) error {
		return s.Run(ctx, func() { close(started) })
	})
	t.Cleanup(func() { require.NoError(t, stop(), "a stop is no failure") })
	<-started
	return ln.Addr().String()
}

// get answers GET url's status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// The routes: /healthz answers the check's reason and a newline, 200 when
// OK, else 503, as text; /metrics the registry; the webhook its path only.
func TestRoutes(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_test_total", Help: "A test counter."})
	reg.MustRegister(c)
	c.Add(3)
	hook := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	addr := serve(t, Config{Registry: reg, Webhook: hook, WebhookPath: "/tg/hook", Health: func(context.Context) health.Health {
		if !down.Load() {
			return health.Health{OK: true, Reason: "ok (polling)"}
		}
		return health.Health{Reason: "valkey: down"}
	}})
	code, body := get(t, "http://"+addr+"/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (polling)\n", body)
	down.Store(true)
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))

	code, body = get(t, "http://"+addr+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "codemojex_test_total 3")
	code, _ = get(t, "http://"+addr+"/tg/hook")
	require.Equal(t, http.StatusTeapot, code)
	code, _ = get(t, "http://"+addr+"/other")
	require.Equal(t, http.StatusNotFound, code)
}

// An address that cannot be bound fails Run before it is started, naming
// HTTP_ADDR.
func TestRunFailsOnAnUnusableAddress(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Addr: "127.0.0.1:-1", Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler),
		Health: func(context.Context) health.Health { return health.Health{} }})
	require.NoError(t, err)
	err = s.Run(context.Background(), func() { t.Error("started") })
	require.ErrorContains(t, err, "HTTP_ADDR 127.0.0.1:-1")
}

// The HTTP server bounds its connections: an idle keep-alive connection is
// closed after the idle timeout, and a request whose body never comes is
// cut at the read timeout instead of holding its connection forever.
// (Both timeouts are 500 ms; the test waits up to 30 s for each close,
// the margin of a busy host: without the timeouts neither ever comes.)
// (Moved from internal/app, where it ran the whole bot in webhook mode;
// the server with the webhook receiver on a real update queue is what it
// checks.)
func TestHTTPServerTimesOutIdleAndSlowConnections(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	upd, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(ns))...)
	require.NoError(t, err)
	rc := webhook.NewReceiver(webhook.ReceiverConfig{Secret: webhookSecret, Inbox: intake.NewInbox(c, upd, ns),
		Log: slog.New(slog.DiscardHandler)})
	timeouts := DefaultTimeouts()
	timeouts.Read, timeouts.Idle = 500*time.Millisecond, 500*time.Millisecond
	addr := serve(t, Config{Timeouts: timeouts, Webhook: rc, WebhookPath: "/tg/hook"})

	closedWithin := func(t *testing.T, conn net.Conn, d time.Duration) {
		t.Helper()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(d)))
		_, err := io.Copy(io.Discard, conn) // until the server closes it
		require.NoError(t, err, "the server closed the connection within %v", d)
	}
	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	_, err = fmt.Fprintf(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	closedWithin(t, idle, 30*time.Second)

	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	_, err = fmt.Fprintf(slow, "POST /tg/hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
		"X-Telegram-Bot-Api-Secret-Token: %s\r\nContent-Length: 1000\r\n\r\n{\"update_id\":", webhookSecret)
	require.NoError(t, err)
	closedWithin(t, slow, 30*time.Second)
}
