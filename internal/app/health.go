package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health is the outcome of a health check.
type Health struct {
	OK     bool
	Reason string // why not OK, or what the process is doing
}

// Health checks that Valkey answers a script call that writes (so a Valkey
// out of memory under noeviction, which refuses writes, is 503 "valkey: out
// of memory ..."), and, in poller roles, that Telegram accepted the token (getMe succeeded; until then the reason
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
// In every role, an unhandled update older than 2 min (the oldest on the
// update queue) is 503 "updates waiting N s: is any handler running?".
//
// An operator thus sees 200 from every poller while updates are fetched,
// and 503 from every poller when none is fetching them. A healthy answer
// also carries the warning about Valkey's maxmemory-policy found at start,
// if any (see checkEvictionPolicy).
func (a *App) Health(ctx context.Context) Health {
	h := a.health(ctx)
	if w := a.evictionRisk.Load(); w != nil && *w != "" && h.OK {
		h.Reason += "; warning: " + *w
	}
	return h
}

func (a *App) health(ctx context.Context) Health {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	probeTTL := strconv.FormatInt(time.Minute.Milliseconds(), 10)
	if err := a.ping.Exec(ctx, a.c, []string{a.keys.health()}, []string{probeTTL}).Error(); err != nil {
		msg := a.redactor.String(err.Error())
		if isOOM(err) {
			return Health{Reason: "valkey: out of memory, writes refused: updates are not recorded (nor confirmed to Telegram) " +
				"and replies not queued until memory is freed or maxmemory raised: " + msg}
		}
		return Health{Reason: "valkey: " + msg}
	}
	if h, ok := a.updatesWaiting(ctx); !ok {
		return h
	}
	if !a.cfg.Polls() && !a.cfg.Handles() {
		return Health{OK: true, Reason: "ok (worker)"}
	}
	if a.me.Load() == nil {
		if msg := a.meErr.Load(); msg != nil {
			return Health{Reason: "telegram: getMe failing: " + *msg}
		}
		return Health{Reason: "telegram: waiting for getMe's first answer"}
	}
	if !a.cfg.Polls() {
		return Health{OK: true, Reason: "ok (handler)"}
	}
	if a.cfg.Webhook() {
		if !a.webhookSet.Load() {
			return Health{Reason: "webhook: setWebhook has not succeeded yet"}
		}
		return Health{OK: true, Reason: "ok (webhook)"}
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

// updatesWaiting checks, in every role, the age of the oldest recorded
// update not yet handled (the update queue's recorded times): older than
// the wait limit (DefaultUpdateWaitLimit, 2 min) it is 503 "updates waiting
// N s: is any handler running?" (e.g. a poller and workers deployed with no
// handler or all process). ok is false with that Health.
func (a *App) updatesWaiting(ctx context.Context) (Health, bool) {
	oldest, err := a.inbox.Oldest(ctx)
	if err != nil {
		return Health{Reason: "valkey: read the oldest unhandled update: " + a.redactor.String(err.Error())}, false
	}
	if oldest.IsZero() {
		return Health{}, true
	}
	age := time.Since(oldest)
	if age <= a.opt.waitLimit {
		return Health{}, true
	}
	return Health{Reason: fmt.Sprintf("updates waiting %d s: is any handler running? (the oldest unhandled update's age; "+
		"limit %v; a BOT_ROLE=handler or all process handles them)", int(age.Seconds()), a.opt.waitLimit)}, false
}

// isOOM reports whether err is Valkey's answer to a write over maxmemory
// under noeviction: "OOM command not allowed when used memory >
// 'maxmemory'.".
func isOOM(err error) bool {
	return err != nil && strings.Contains(err.Error(), "OOM command not allowed")
}

// checkEvictionPolicy reads Valkey's maxmemory-policy (CONFIG GET) once at
// start. Anything but noeviction lets Valkey evict keys under memory
// pressure: queued jobs, leases, the inbox or its offset could vanish
// silently, so it logs a warning naming that risk and /healthz carries it.
// A server that refuses CONFIG (managed services often do) is tolerated:
// it logs that the policy could not be checked.
func (a *App) checkEvictionPolicy(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	m, err := a.c.Do(ctx, a.c.B().ConfigGet().Parameter("maxmemory-policy").Build()).AsStrMap()
	policy, ok := m["maxmemory-policy"]
	if err == nil && !ok {
		err = errors.New("no maxmemory-policy in the answer")
	}
	if err != nil {
		a.log.Warn("Valkey maxmemory-policy could not be checked (CONFIG GET refused or failed); make sure it is noeviction, "+
			"or queued messages may be evicted silently under memory pressure", slog.Any("err", a.redactor.Error(err)))
		return
	}
	if policy == "noeviction" {
		a.evictionRisk.Store(nil)
		return
	}
	w := "Valkey maxmemory-policy is " + policy + ", not noeviction: under memory pressure Valkey may evict " +
		"queued messages, leases and recorded updates, losing them silently; set maxmemory-policy noeviction"
	a.evictionRisk.Store(&w)
	a.log.Warn(w, slog.String("maxmemory_policy", policy))
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

// newHTTP returns the server of /healthz, /metrics and the webhook, and
// its listener: the one given with WithListener, else one bound to
// HTTP_ADDR (httpService serves it).
func (a *App) newHTTP() (*http.Server, net.Listener, error) {
	ln := a.opt.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", a.cfg.HTTPAddr); err != nil {
			return nil, nil, fmt.Errorf("app: HTTP_ADDR %s: %w", a.cfg.HTTPAddr, err)
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
	if a.cfg.Webhook() && a.cfg.Polls() {
		mux.Handle(a.cfg.WebhookPath(), a.webhookHandler())
	}
	t := a.opt.httpTimeouts // see HTTPTimeouts: write > read + recording an update
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	return srv, ln, nil
}
