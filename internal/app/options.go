package app

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/game"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/httpserver"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
)

// Defaults of the options.
const (
	// DefaultPollTimeout is getUpdates' long-poll timeout. /healthz reports
	// polling dead after 2x this without a successful getUpdates.
	DefaultPollTimeout = 25 * time.Second
	// DefaultDrainTimeout bounds a graceful stop: the handler in progress
	// and the workers' in-flight sends get this long after SIGINT/SIGTERM.
	DefaultDrainTimeout = 10 * time.Second
	// DefaultEditInterval is the least time between two edits of a
	// broadcast's progress message (a final edit always follows).
	DefaultEditInterval = broadcast.DefaultEditInterval
)

type options struct {
	log          *slog.Logger
	client       valkey.Client
	tag          string
	pollTimeout  time.Duration
	leaseTTL     time.Duration
	drain        time.Duration
	editInterval time.Duration
	auditCap     int
	now          func() time.Time
	rng          io.Reader
	listener     net.Listener
	handlers     []extraHandler
	intakeOnly   bool
	gameCfg      *game.Config
	waitLimit    time.Duration
	claimFail    time.Duration
	httpTimeouts HTTPTimeouts
	// errs are the options given bad values: New returns them, joined,
	// rather than run with a value the caller did not ask for.
	errs []error
}

// bad records that option name was given a bad value (want: what it takes).
func (o *options) bad(name string, got any, want string) {
	o.errs = append(o.errs, fmt.Errorf("app: %s(%v): %s", name, got, want))
}

type extraHandler struct {
	match update.MatchFunc
	h     update.HandlerFunc
}

// Option configures an App (New).
type Option func(*options)

// WithLogger sets the logger (default: JSON to stderr at LOG_LEVEL). It is
// wrapped so no line carries the bot token.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithValkey makes the app use client c (owned by the caller) instead of
// dialing VALKEY_URL.
func WithValkey(c valkey.Client) Option { return func(o *options) { o.client = c } }

// WithTag sets the Valkey hash tag of every key, overriding the
// configuration's VALKEY_KEY_TAG (config.Valkey.KeyTag, which is the tag
// without this option). Tests use it with valkeytest.Namespace, so apps of
// parallel tests share one server. A tag lanes refuses (lanes.ValidTag)
// makes New fail.
func WithTag(tag string) Option {
	return func(o *options) {
		if !lanes.ValidTag(tag) {
			o.bad("WithTag", tag, "a hash tag of "+lanes.TagRule)
			return
		}
		o.tag = tag
	}
}

// WithPollTimeout sets getUpdates' long-poll timeout (whole seconds, at
// least 1 s; default 25 s). Anything else makes New fail.
func WithPollTimeout(d time.Duration) Option {
	return func(o *options) {
		if d < time.Second || d%time.Second != 0 {
			o.bad("WithPollTimeout", d, "whole seconds, at least 1s (getUpdates' timeout is in seconds)")
			return
		}
		o.pollTimeout = d
	}
}

// WithLeaseTTL sets the poller lease length (default 15 s; positive, or
// New fails).
func WithLeaseTTL(d time.Duration) Option {
	return positive("WithLeaseTTL", d, func(o *options) *time.Duration { return &o.leaseTTL })
}

// WithDrainTimeout sets how long a graceful stop may take (default 10 s;
// positive, or New fails).
func WithDrainTimeout(d time.Duration) Option {
	return positive("WithDrainTimeout", d, func(o *options) *time.Duration { return &o.drain })
}

// WithEditInterval sets the least time between progress edits of a
// broadcast (default 2 s; positive, or New fails).
func WithEditInterval(d time.Duration) Option {
	return positive("WithEditInterval", d, func(o *options) *time.Duration { return &o.editInterval })
}

// positive is an Option setting the duration field of o to d, or
// recording a bad value when d <= 0.
func positive(name string, d time.Duration, field func(*options) *time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.bad(name, d, "a positive duration")
			return
		}
		*field(o) = d
	}
}

// WithRandom sets the source of game secrets (default crypto/rand).
func WithRandom(r io.Reader) Option { return func(o *options) { o.rng = r } }

// WithListener serves /healthz and /metrics on ln instead of listening on
// HTTP_ADDR (the app closes it).
func WithListener(ln net.Listener) Option { return func(o *options) { o.listener = ln } }

// WithHandler registers an extra update handler, tried before the built-in
// ones; it runs under the same middleware (panic recovery, MarkActive).
func WithHandler(match update.MatchFunc, h update.HandlerFunc) Option {
	return func(o *options) { o.handlers = append(o.handlers, extraHandler{match: match, h: h}) }
}

// WithGameConfig sets the config of new games (zero fields: the defaults;
// default game.DefaultConfig()).
func WithGameConfig(cfg game.Config) Option { return func(o *options) { o.gameCfg = &cfg } }

// WithIntakeOnly makes the process record updates on the update queue
// without handling them: a process stopped after intake and before handling, for
// crash-recovery tests and maintenance.
func WithIntakeOnly() Option { return func(o *options) { o.intakeOnly = true } }

// WithAuditCap sets how many admin actions the audit stream keeps
// (approximately: XADD MAXLEN ~ n; default admin.DefaultAuditCap; n >= 1, or
// New fails).
func WithAuditCap(n int) Option {
	return func(o *options) {
		if n < 1 {
			o.bad("WithAuditCap", n, "at least 1 entry")
			return
		}
		o.auditCap = n
	}
}

// WithClock sets the app's clock (default time.Now), which dates broadcast
// previews and so decides when one expires (broadcast.PreviewLifetime). A nil
// clock makes New fail.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now == nil {
			o.bad("WithClock", "nil", "a clock function")
			return
		}
		o.now = now
	}
}

// DefaultUpdateWaitLimit is how old the oldest unhandled update may be
// before /healthz answers 503 (see Health).
const DefaultUpdateWaitLimit = 2 * time.Minute

// WithUpdateWaitLimit sets how old the oldest unhandled update may be
// before /healthz answers 503 [DefaultUpdateWaitLimit]; positive, or New
// fails.
func WithUpdateWaitLimit(d time.Duration) Option {
	return positive("WithUpdateWaitLimit", d, func(o *options) *time.Duration { return &o.waitLimit })
}

// WithClaimFailLimit sets how long the worker's claims may fail before
// /healthz answers 503 [health.DefaultClaimFailLimit, 10 s]; positive, or
// New fails.
func WithClaimFailLimit(d time.Duration) Option {
	return positive("WithClaimFailLimit", d, func(o *options) *time.Duration { return &o.claimFail })
}

// HTTPTimeouts bound the HTTP server's connections (webhook, /healthz,
// /metrics): httpserver.Timeouts.
type HTTPTimeouts = httpserver.Timeouts

// DefaultHTTPTimeouts are the HTTP server's timeouts
// (httpserver.DefaultTimeouts: headers 5 s, request 15 s, write 30 s, idle
// 120 s).
func DefaultHTTPTimeouts() HTTPTimeouts { return httpserver.DefaultTimeouts() }

// WithHTTPTimeouts sets the HTTP server's timeouts [DefaultHTTPTimeouts()];
// zero fields keep their defaults, a negative one makes New fail.
func WithHTTPTimeouts(t HTTPTimeouts) Option {
	return func(o *options) {
		if min(t.ReadHeader, t.Read, t.Write, t.Idle) < 0 {
			o.bad("WithHTTPTimeouts", t, "durations >= 0 (0: the default)")
			return
		}
		d := &o.httpTimeouts
		d.ReadHeader, d.Read, d.Write, d.Idle = cmp.Or(t.ReadHeader, d.ReadHeader), cmp.Or(t.Read, d.Read), cmp.Or(t.Write, d.Write), cmp.Or(t.Idle, d.Idle)
	}
}
