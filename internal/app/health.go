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
// is getMe's last failure) and that polling is alive:
//
//   - The lease holder (this process polls): its last successful getUpdates
//     is at most 2x the long-poll timeout old; otherwise 503 "polling: last
//     successful getUpdates ... ago".
//   - A standby poller (another process holds the lease): healthy only
//     while some poller is really polling, not merely holding the lease. The
//     poller writes a heartbeat with its successful getUpdates (key
//     {T}:app:polled, its lease token, expiring 2x the long-poll timeout
//     after it is written, by Valkey's clock so hosts' clocks do not
//     matter), and the standby reads it and the lease in one MGET. A lease
//     that is held and renewed while getUpdates stalls (Telegram
//     unreachable, a stuck process) is 503 "no poller is polling: ..." in
//     every poller, so an alert on any instance's /healthz fires, not only
//     on the stalled one's; so is a free lease (its holder stopped or died)
//     until this process takes it over and polls.
//
// An operator thus sees 200 from every poller while updates are fetched,
// and 503 from every poller when none is fetching them.
func (a *App) Health(ctx context.Context) Health {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := a.ping.Exec(ctx, a.c, nil, nil).Error(); err != nil {
		return Health{Reason: "valkey: " + a.redactor.String(err.Error())}
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
		return a.standbyHealth(ctx)
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

// standbyHealth is Health of a poller that does not hold the lease: 200
// while another poller's heartbeat is fresh (see Health).
func (a *App) standbyHealth(ctx context.Context) Health {
	holder, polled, err := a.inbox.PollerState(ctx)
	if err != nil {
		return Health{Reason: "valkey: read the poller lease: " + a.redactor.String(errors.Unwrap(err).Error())}
	}
	if polled != "" {
		return Health{OK: true, Reason: "ok (standby poller: " + polled + " is polling)"}
	}
	limit := 2 * a.opt.pollTimeout
	if holder == "" {
		return Health{Reason: fmt.Sprintf("no poller is polling: the poller lease is free and no getUpdates succeeded "+
			"in the last %v (the last poller stopped or died); this process takes the lease over", limit)}
	}
	return Health{Reason: fmt.Sprintf("no poller is polling: %s holds the poller lease but had no successful getUpdates "+
		"in the last %v (Telegram unreachable or the poller stuck); this process waits for the lease", holder, limit)}
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
