// Package health is the process's /healthz check: Valkey answers a script
// that writes, no update waits unhandled too long and, in the poller and
// handler roles, Telegram accepted the token and some poller polls (see
// Checker.Check). It reads the rest of the process through Status and
// Inbox only; the HTTP server (internal/httpserver) serves its answer.
package health

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/luascript"
	"github.com/codemojex/codemojex/redact"
)

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and loaded with luascript.Must.
//
//go:embed lua/*.lua
var luaFS embed.FS

// Key is the /healthz write probe's key, {<tag>}:app:health (a string "1",
// PX 1 min; docs/keys.md).
func Key(tag string) string { return "{" + tag + "}:app:health" }

// Health is the outcome of a health check.
type Health struct {
	OK     bool
	Reason string // why not OK, or what the process is doing
}

// Status is what the checks read of the process's state, each a func the
// process sets (nil funcs are not allowed where its role reads them).
type Status struct {
	// Me reports getMe's state: ok once it succeeded; until then failure
	// is its last failure, redacted ("" before its first answer).
	Me func() (ok bool, failure string)
	// Leader reports whether this process holds the poller lease.
	Leader func() bool
	// LastPoll is the time of the last successful getUpdates (zero: none).
	LastPoll func() time.Time
	// WebhookSet reports whether setWebhook succeeded (webhook mode).
	WebhookSet func() bool
	// Paused reads the store's global pause (every role; nil: not read):
	// its time left (0: not paused, -1: until resumed), its why, and
	// whether it stops the bot rather than throttle it (down: a 401 from
	// Telegram, a pause until resumed) (lanes.Inspector.Paused).
	Paused func(ctx context.Context) (left time.Duration, why string, down bool, err error)
	// Claims reports the worker's claims (roles that send): since when
	// the claims have been failing (zero: the last one succeeded or none
	// failed) and the last failure, redacted (worker.Worker.Claims).
	Claims func() (failingSince time.Time, lastErr string)
}

// DefaultClaimFailLimit is Config.ClaimFailLimit's default: a Valkey
// failover or restart takes a few seconds, which the worker's claims ride
// out with backoff; failing for longer is reported.
const DefaultClaimFailLimit = 10 * time.Second

// Inbox is what the checks read of the update queue (*intake.Inbox).
type Inbox interface {
	// Oldest is the recorded time of the oldest unhandled update (zero:
	// none).
	Oldest(ctx context.Context) (time.Time, error)
	// PollerState is the poller lease's holder ("" when free) and the
	// heartbeat of the poller that polled within 2x the long-poll
	// timeout ("" when none did).
	PollerState(ctx context.Context) (holder, polled string, err error)
}

// Config is a Checker's: the Valkey client and hash tag of the probe key,
// the update queue, the process's state, its role and its limits.
type Config struct {
	Client valkey.Client
	Tag    string
	Inbox  Inbox
	Status Status
	// Polls, Handles, Sends and Webhook are the process's role
	// (config.Config's Polls, Handles, Sends, Webhook).
	Polls, Handles, Sends, Webhook bool
	// ClaimFailLimit is how long the worker's claims may fail before
	// /healthz says so (0: DefaultClaimFailLimit).
	ClaimFailLimit time.Duration
	// PollTimeout is getUpdates' long-poll timeout: polling is dead after
	// 2x it without a successful getUpdates.
	PollTimeout time.Duration
	// WaitLimit is how old the oldest unhandled update may be.
	WaitLimit time.Duration
	Redactor  *redact.Redactor // keeps the token out of every reason
	Log       *slog.Logger
}

// Checker runs the /healthz checks of one process.
type Checker struct {
	cfg  Config
	ping *valkey.Lua // a script that writes proves Valkey answers, runs Lua and accepts writes
	// evictionRisk is the warning about Valkey's maxmemory-policy found
	// at start ("" or nil when it is noeviction), added to a healthy
	// answer.
	evictionRisk atomic.Pointer[string]
}

// New returns the Checker of cfg, or an error naming a missing part.
func New(cfg Config) (*Checker, error) {
	switch {
	case cfg.Client == nil || cfg.Inbox == nil || cfg.Redactor == nil || cfg.Log == nil:
		return nil, errors.New("health: Client, Inbox, Redactor and Log are required")
	case (cfg.Polls || cfg.Handles) && cfg.Status.Me == nil:
		return nil, errors.New("health: Status.Me is required in the poller and handler roles")
	case cfg.Polls && (cfg.Status.Leader == nil || cfg.Status.LastPoll == nil || cfg.Status.WebhookSet == nil):
		return nil, errors.New("health: Status.Leader, LastPoll and WebhookSet are required in poller roles")
	case cfg.Sends && cfg.Status.Claims == nil:
		return nil, errors.New("health: Status.Claims is required in roles that send")
	case cfg.ClaimFailLimit < 0:
		return nil, fmt.Errorf("health: ClaimFailLimit %v: want >= 0", cfg.ClaimFailLimit)
	}
	if cfg.ClaimFailLimit == 0 {
		cfg.ClaimFailLimit = DefaultClaimFailLimit
	}
	return &Checker{cfg: cfg, ping: luascript.Must(luaFS, "health")}, nil
}

// Check checks that Valkey answers a script call that writes (so a Valkey
// out of memory under noeviction, which refuses writes, is 503 "valkey: out
// of memory ..."), and, in poller and handler roles, that Telegram accepted
// the token (getMe succeeded; until then the reason is getMe's last
// failure), and in poller roles that polling is alive:
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
// update queue) is 503 "updates waiting N s: is any handler running?"; a
// global pause that stops the bot (Status.Paused's down: a 401 from
// Telegram, so the token is revoked or wrong, or a pause until resumed) is
// 503 "sends paused (<why>, <time left>): nothing is sent to Telegram",
// while a flood pause (a 429 from several chats, retry_after long) is
// Telegram's throttle, not a fault: 200, with "sends paused (<why>, <time
// left>): Telegram's flood control" added to the reason. In roles that send, claims failing
// for longer than Config.ClaimFailLimit (Valkey refusing the claim script:
// READONLY after a failover, OOM, NOPERM) are 503 "worker: claims failing
// for N s: ...".
//
// An operator thus sees 200 from every poller while updates are fetched,
// and 503 from every poller when none is fetching them. A healthy answer
// also carries the warning about Valkey's maxmemory-policy found at start,
// if any (see CheckEvictionPolicy).
func (c *Checker) Check(ctx context.Context) Health {
	h := c.check(ctx)
	if w := c.evictionRisk.Load(); w != nil && *w != "" && h.OK {
		h.Reason += "; warning: " + *w
	}
	return h
}

func (c *Checker) check(ctx context.Context) Health {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	probeTTL := strconv.FormatInt(time.Minute.Milliseconds(), 10)
	if err := c.ping.Exec(ctx, c.cfg.Client, []string{Key(c.cfg.Tag)}, []string{probeTTL}).Error(); err != nil {
		msg := c.cfg.Redactor.String(err.Error())
		if u, ok := lanes.Unavailable(err); ok && u.Cause == "OOM" {
			return Health{Reason: "valkey: out of memory, writes refused: updates are not recorded (nor confirmed to Telegram) " +
				"and replies not queued until memory is freed or maxmemory raised: " + msg}
		}
		return Health{Reason: "valkey: " + msg}
	}
	if h, ok := c.updatesWaiting(ctx); !ok {
		return h
	}
	throttled, h, ok := c.paused(ctx)
	if !ok {
		return h
	}
	if h, ok := c.claims(); !ok {
		return h
	}
	h = c.role(ctx)
	if h.OK && throttled != "" {
		h.Reason += "; " + throttled
	}
	return h
}

// role is check's part that depends on the process's role.
func (c *Checker) role(ctx context.Context) Health {
	if !c.cfg.Polls && !c.cfg.Handles {
		return Health{OK: true, Reason: "ok (worker)"}
	}
	if ok, failure := c.cfg.Status.Me(); !ok {
		if failure != "" {
			return Health{Reason: "telegram: getMe failing: " + failure}
		}
		return Health{Reason: "telegram: waiting for getMe's first answer"}
	}
	if !c.cfg.Polls {
		return Health{OK: true, Reason: "ok (handler)"}
	}
	if c.cfg.Webhook {
		if !c.cfg.Status.WebhookSet() {
			return Health{Reason: "webhook: setWebhook has not succeeded yet"}
		}
		return Health{OK: true, Reason: "ok (webhook)"}
	}
	if !c.cfg.Status.Leader() {
		return c.standby(ctx)
	}
	last := c.cfg.Status.LastPoll()
	if last.IsZero() {
		return Health{Reason: "polling: no successful getUpdates yet"}
	}
	age := time.Since(last)
	if limit := 2 * c.cfg.PollTimeout; age > limit {
		return Health{Reason: fmt.Sprintf("polling: last successful getUpdates %v ago (limit %v)", age.Round(time.Second), limit)}
	}
	return Health{OK: true, Reason: "ok (polling)"}
}

// updatesWaiting checks, in every role, the age of the oldest recorded
// update not yet handled (the update queue's recorded times): older than
// the wait limit (Config.WaitLimit) it is 503 "updates waiting N s: is any
// handler running?" (e.g. a poller and workers deployed with no handler or
// all process). ok is false with that Health.
func (c *Checker) updatesWaiting(ctx context.Context) (Health, bool) {
	oldest, err := c.cfg.Inbox.Oldest(ctx)
	if err != nil {
		return Health{Reason: "valkey: read the oldest unhandled update: " + c.cfg.Redactor.String(err.Error())}, false
	}
	if oldest.IsZero() {
		return Health{}, true
	}
	age := time.Since(oldest)
	if age <= c.cfg.WaitLimit {
		return Health{}, true
	}
	return Health{Reason: fmt.Sprintf("updates waiting %d s: is any handler running? (the oldest unhandled update's age; "+
		"limit %v; a BOT_ROLE=handler or all process handles them)", int(age.Seconds()), c.cfg.WaitLimit)}, false
}

// paused reads the global pause (Status.Paused): ok is false with a 503
// Health for a pause that stops the bot; throttled describes a flood pause
// ("" when not paused).
func (c *Checker) paused(ctx context.Context) (throttled string, h Health, ok bool) {
	if c.cfg.Status.Paused == nil {
		return "", Health{}, true
	}
	left, why, down, err := c.cfg.Status.Paused(ctx)
	switch {
	case err != nil:
		return "", Health{Reason: "valkey: read the global pause: " + c.cfg.Redactor.String(err.Error())}, false
	case left == 0:
		return "", Health{}, true
	}
	span := "until resumed"
	if left > 0 {
		span = fmt.Sprintf("%v left", left.Round(time.Second))
	}
	if !down {
		return fmt.Sprintf("sends paused (%s, %s): Telegram's flood control", why, span), Health{}, true
	}
	return "", Health{Reason: fmt.Sprintf("sends paused (%s, %s): nothing is sent to Telegram", why, span)}, false
}

// claims checks the worker's claims (Status.Claims, roles that send): ok
// is false with a 503 Health when they have failed for longer than
// Config.ClaimFailLimit.
func (c *Checker) claims() (Health, bool) {
	if !c.cfg.Sends {
		return Health{}, true
	}
	since, last := c.cfg.Status.Claims()
	if since.IsZero() {
		return Health{}, true
	}
	age := time.Since(since)
	if age <= c.cfg.ClaimFailLimit {
		return Health{}, true
	}
	return Health{Reason: fmt.Sprintf("worker: claims failing for %d s (limit %v): nothing is sent: %s",
		int(age.Seconds()), c.cfg.ClaimFailLimit, c.cfg.Redactor.String(last))}, false
}

// CheckEvictionPolicy reads Valkey's maxmemory-policy (CONFIG GET) once at
// start. Anything but noeviction lets Valkey evict keys under memory
// pressure: queued jobs, leases, the inbox or its offset could vanish
// silently, so it logs a warning naming that risk and Check's healthy
// answers carry it. A server that refuses CONFIG (managed services often
// do) is tolerated: it logs that the policy could not be checked.
func (c *Checker) CheckEvictionPolicy(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	vc := c.cfg.Client
	m, err := vc.Do(ctx, vc.B().ConfigGet().Parameter("maxmemory-policy").Build()).AsStrMap()
	policy, ok := m["maxmemory-policy"]
	if err == nil && !ok {
		err = errors.New("no maxmemory-policy in the answer")
	}
	if err != nil {
		c.cfg.Log.Warn("Valkey maxmemory-policy could not be checked (CONFIG GET refused or failed); make sure it is noeviction, "+
			"or queued messages may be evicted silently under memory pressure", slog.Any("err", c.cfg.Redactor.Error(err)))
		return
	}
	if policy == "noeviction" {
		c.evictionRisk.Store(nil)
		return
	}
	w := "Valkey maxmemory-policy is " + policy + ", not noeviction: under memory pressure Valkey may evict " +
		"queued messages, leases and recorded updates, losing them silently; set maxmemory-policy noeviction"
	c.evictionRisk.Store(&w)
	c.cfg.Log.Warn(w, slog.String("maxmemory_policy", policy))
}

// standby is Check of a poller that does not hold the lease: 200 while
// another poller's heartbeat is fresh (see Check).
func (c *Checker) standby(ctx context.Context) Health {
	holder, polled, err := c.cfg.Inbox.PollerState(ctx)
	if err != nil {
		return Health{Reason: "valkey: read the poller lease: " + c.cfg.Redactor.String(errors.Unwrap(err).Error())}
	}
	if polled != "" {
		return Health{OK: true, Reason: "ok (standby poller: " + polled + " is polling)"}
	}
	limit := 2 * c.cfg.PollTimeout
	if holder == "" {
		return Health{Reason: fmt.Sprintf("no poller is polling: the poller lease is free and no getUpdates succeeded "+
			"in the last %v (the last poller stopped or died); this process takes the lease over", limit)}
	}
	return Health{Reason: fmt.Sprintf("no poller is polling: %s holds the poller lease but had no successful getUpdates "+
		"in the last %v (Telegram unreachable or the poller stuck); this process waits for the lease", holder, limit)}
}
