// Package httpserver is the process's HTTP server: /healthz (an answer of
// internal/health), /metrics (a Prometheus registry, with the queue gauges
// of QueueCollector) and, in webhook mode, the webhook receiver
// (internal/webhook) on its path. The server is a service
// (internal/lifecycle's contract: Name, Run): started once its listener is
// bound, shut down when stopped.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/codemojex/codemojex/internal/health"
)

// Timeouts bound the HTTP server's connections (webhook, /healthz,
// /metrics); see DefaultTimeouts.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers; Read the whole
	// request, body included (a webhook body is at most 1 MiB).
	ReadHeader, Read time.Duration
	// Write bounds a request from the end of its headers to the end of
	// the answer: it must exceed Read plus the time to record a webhook
	// update (bounded at webhook.RecordTimeout, 10 s), or a recorded update
	// is answered with a cut connection and resent by Telegram.
	Write time.Duration
	// Idle is how long a keep-alive connection may wait for its next
	// request (Telegram reuses its webhook connections).
	Idle time.Duration
}

// DefaultTimeouts are the HTTP server's timeouts: headers 5 s, request 15 s (1 MiB at about 70 KB/s),
// write 30 s (> 15 s read + 10 s recording), idle 120 s.
func DefaultTimeouts() Timeouts {
	return Timeouts{ReadHeader: 5 * time.Second, Read: 15 * time.Second, Write: 30 * time.Second, Idle: 120 * time.Second}
}

// shutdownTimeout bounds the server's graceful shutdown when stopped.
const shutdownTimeout = 2 * time.Second

// Config is a Server's.
type Config struct {
	// Listener is served when set (the server closes it); else the server
	// listens on Addr (HTTP_ADDR).
	Listener net.Listener
	Addr     string
	Timeouts Timeouts
	// Health answers GET /healthz: 200 when OK, else 503; the body is
	// its Reason and a newline.
	Health func(ctx context.Context) health.Health
	// Registry is what GET /metrics serves.
	Registry *prometheus.Registry
	// Webhook, when set, is served on WebhookPath (every method: it
	// answers 405 itself).
	Webhook     http.Handler
	WebhookPath string
	Log         *slog.Logger
}

// Server serves /healthz, /metrics and the webhook; a lifecycle service.
type Server struct {
	cfg Config
}

// New returns the server of cfg, or an error naming a missing part.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Health == nil || cfg.Registry == nil || cfg.Log == nil:
		return nil, errors.New("httpserver: Health, Registry and Log are required")
	case cfg.Webhook != nil && cfg.WebhookPath == "":
		return nil, errors.New("httpserver: a Webhook needs its WebhookPath")
	}
	return &Server{cfg: cfg}, nil
}

// Name is the service's name in logs and errors: "http".
func (s *Server) Name() string { return "http" }

// Handler is the server's routes: GET /healthz, GET /metrics and the
// webhook's path.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		h := s.cfg.Health(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !h.OK {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, h.Reason)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{Registry: s.cfg.Registry}))
	if s.cfg.Webhook != nil {
		mux.Handle(s.cfg.WebhookPath, s.cfg.Webhook)
	}
	return mux
}

// Run binds the listener (Config.Listener, else Addr: an error naming
// HTTP_ADDR if it cannot), calls started, serves until ctx ends, then shuts
// the server down (2 s at most for the requests in progress) and returns
// nil once Serve has returned. A server that stops serving on its own is
// an error.
func (s *Server) Run(ctx context.Context, started func()) error {
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.Addr); err != nil {
			return fmt.Errorf("HTTP_ADDR %s: %w", s.cfg.Addr, err)
		}
	}
	t := s.cfg.Timeouts // see Timeouts: write > read + recording an update
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle,
		ErrorLog: slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn)}
	s.cfg.Log.Info("serving /healthz and /metrics", slog.String("addr", ln.Addr().String()))
	started()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("HTTP server: %w", err)
		}
		return nil
	case err := <-served:
		return fmt.Errorf("HTTP server: %w", err)
	}
}
