package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health is the outcome of a health check.
type Health struct {
	OK     bool
	Reason string // why not OK, or what the process is doing
}

// Health checks that Valkey answers a script call and, in poller roles,
// that Telegram accepted the token (getMe succeeded; until then the reason
// is getMe's last failure) and that polling is alive: the lease holder's
// last successful getUpdates is at most 2x the long-poll timeout old. A
// poller waiting for another one's lease is healthy (standby).
func (a *App) Health(ctx context.Context) Health {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := a.ping.Exec(ctx, a.c, nil, nil).Error(); err != nil {
		return Health{Reason: "valkey: " + a.red.String(err.Error())}
	}
	if !a.cfg.Polls() {
		return Health{OK: true, Reason: "ok (worker)"}
	}
	if a.me.Load() == nil {
		if msg := a.meErr.Load(); msg != nil {
			return Health{Reason: "telegram: getMe failing: " + *msg}
		}
		return Health{Reason: "telegram: waiting for getMe's first answer"}
	}
	if !a.leader.Load() {
		return Health{OK: true, Reason: "ok (standby poller: another poller is active)"}
	}
	last := a.lastPoll.Load()
	if last == 0 {
		return Health{Reason: "polling: no successful getUpdates yet"}
	}
	age := time.Since(time.Unix(0, last))
	if limit := 2 * a.opt.pollTimeout; age > limit {
		return Health{Reason: fmt.Sprintf("polling: last successful getUpdates %v ago (limit %v)", age.Round(time.Second), limit)}
	}
	return Health{OK: true, Reason: "ok (polling)"}
}

// startHTTP serves /healthz and /metrics on the listener given with
// WithListener, else on HTTP_ADDR.
func (a *App) startHTTP() (*http.Server, error) {
	ln := a.opt.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", a.cfg.HTTPAddr); err != nil {
			return nil, fmt.Errorf("app: HTTP_ADDR %s: %w", a.cfg.HTTPAddr, err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		h := a.Health(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !h.OK {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, h.Reason)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{Registry: a.reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("HTTP server stopped", slog.Any("err", err))
		}
	}()
	a.log.Info("serving /healthz and /metrics", slog.String("addr", ln.Addr().String()))
	return srv, nil
}
