// Package procs is the list of a deployment's live processes: each process
// of a bot (every role, on every host) writes a small heartbeat to Valkey
// every few seconds (Beater), and the console reads them all (List), so it
// shows the whole deployment, not only the process serving it.
//
// Keys (docs/keys.md), under the bot's tag {T}:
//
//	{T}:app:procs       sorted set  process id -> its heartbeat's expiry (ms, server clock);
//	                                at most MaxProcs members, PEXPIRE the TTL
//	{T}:app:proc:<id>   hash        what the process says of itself (see Process), PEXPIRE the TTL
//
// A process that stops removes both at once (Beater.Run's end); one that
// dies is gone from the list when its TTL passes (3 periods, 15 s by
// default).
package procs

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/luascript"
)

//go:embed lua/*.lua
var luaFS embed.FS

// MaxProcs bounds the live set and so every List: a deployment with more
// live processes lists the MaxProcs that beat last.
const MaxProcs = 256

// DefaultPeriod is how often a process beats; its heartbeat lives
// 3 periods.
const DefaultPeriod = 5 * time.Second

// Process is one live process as it last said.
type Process struct {
	// ID is the process's id: host:pid:random (NewID).
	ID string
	// Roles are what it runs: poller, handler, worker, console (BOT_ROLE
	// all is poller, handler and worker).
	Roles []string
	// Version is its build (internal/version.String()).
	Version string
	// Started is when it started; Seen its last heartbeat (server clock).
	Started, Seen time.Time
	// Figures are its own counters since it started (name -> value), e.g.
	// updates received, updates handled, messages sent.
	Figures map[string]float64
}

// The figures every process of the bot publishes (internal/app), by name:
// its counters since it started. The console sums them over the live
// processes for the deployment's rates.
const (
	FigureReceived = "updates received" // updates recorded from Telegram
	FigureHandled  = "updates handled"  // updates handled (result ok)
	FigureSent     = "messages sent"    // messages delivered (acked)
	Figure429      = "429s"             // 429 Too Many Requests answered
	FigureDead     = "dead letters"     // messages dead-lettered
	FigureDropped  = "updates dropped"  // updates dropped by the flood limits
	// FigureQueue + a queue's name: messages sent and edits accepted on
	// that queue (one figure per queue the process sent on).
	FigureQueue = "sends and edits: "
)

// FigureNames returns p's figure names, sorted.
func (p Process) FigureNames() []string { return slices.Sorted(maps.Keys(p.Figures)) }

// NewID returns a process id: host:pid:<4 random hex digits> ("" parts
// when the host name is unknown).
func NewID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%04x", host, os.Getpid(), time.Now().UnixNano()&0xffff)
}

// Registry reads and writes the heartbeats of one bot's processes (tag:
// the bot's key tag, without braces).
type Registry struct {
	c    valkey.Client
	set  string
	proc string // prefix of the hashes
	beat *valkey.Lua
}

// New returns the registry of tag's processes on c.
func New(c valkey.Client, tag string) *Registry {
	p := "{" + tag + "}:app:"
	return &Registry{c: c, set: p + "procs", proc: p + "proc:", beat: luascript.Must(luaFS, "beat")}
}

// Beat records p alive for ttl (p.Seen is set by the server). It returns
// how many processes are live. Errors: Valkey's, wrapped.
func (r *Registry) Beat(ctx context.Context, p Process, ttl time.Duration) (int, error) {
	args := []string{p.ID, strconv.FormatInt(ttl.Milliseconds(), 10), strconv.Itoa(MaxProcs),
		"roles", strings.Join(p.Roles, ","), "version", p.Version, "started", strconv.FormatInt(p.Started.UnixMilli(), 10)}
	for _, name := range p.FigureNames() {
		args = append(args, "f:"+name, strconv.FormatFloat(p.Figures[name], 'f', -1, 64))
	}
	n, err := r.beat.Exec(ctx, r.c, []string{r.set, r.proc + p.ID}, args).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("procs: beat: %w", err)
	}
	return int(n), nil
}

// Forget removes process id from the list at once (a process stopping).
func (r *Registry) Forget(ctx context.Context, id string) error {
	for _, err := range []error{
		r.c.Do(ctx, r.c.B().Zrem().Key(r.set).Member(id).Build()).Error(),
		r.c.Do(ctx, r.c.B().Del().Key(r.proc+id).Build()).Error(),
	} {
		if err != nil {
			return fmt.Errorf("procs: forget %s: %w", id, err)
		}
	}
	return nil
}

// List returns the live processes (at most MaxProcs), sorted by id: one
// read of the set, one of each hash, in two round trips. A process whose
// heartbeat expired is left out. Errors: Valkey's, wrapped.
func (r *Registry) List(ctx context.Context) ([]Process, error) {
	ids, err := r.c.Do(ctx, r.c.B().Zrange().Key(r.set).Min("0").Max(strconv.Itoa(MaxProcs-1)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("procs: list: %w", err)
	}
	slices.Sort(ids)
	cmds := make(valkey.Commands, 0, len(ids))
	for _, id := range ids {
		cmds = append(cmds, r.c.B().Hgetall().Key(r.proc+id).Build())
	}
	out := make([]Process, 0, len(ids))
	for i, res := range r.c.DoMulti(ctx, cmds...) {
		h, err := res.AsStrMap()
		if err != nil {
			return out, fmt.Errorf("procs: list: %w", err)
		}
		if len(h) == 0 {
			continue // expired since the set was trimmed
		}
		out = append(out, parse(ids[i], h))
	}
	return out, nil
}

func parse(id string, h map[string]string) Process {
	ms := func(k string) time.Time { n, _ := strconv.ParseInt(h[k], 10, 64); return time.UnixMilli(n) }
	p := Process{ID: id, Version: h["version"], Started: ms("started"), Seen: ms("seen"), Figures: map[string]float64{}}
	if h["roles"] != "" {
		p.Roles = strings.Split(h["roles"], ",")
	}
	for k, v := range h {
		if name, ok := strings.CutPrefix(k, "f:"); ok {
			p.Figures[name], _ = strconv.ParseFloat(v, 64)
		}
	}
	return p
}

// Beater beats for one process every Period until its context ends, then
// forgets it.
type Beater struct {
	Registry *Registry
	// Self returns what the process says of itself at each beat (its
	// figures change); ID, Roles, Version and Started should not.
	Self func() Process
	// Period between beats [DefaultPeriod]; the heartbeat lives 3 periods.
	Period time.Duration
	Log    *slog.Logger
}

// Run beats at once, then every Period, until ctx ends; then it removes
// the process (Forget, bounded by 2 s). A failed beat is logged (WARN) and
// retried at the next period. It returns nil.
func (b *Beater) Run(ctx context.Context) error {
	period := b.Period
	if period <= 0 {
		period = DefaultPeriod
	}
	t := time.NewTicker(period)
	defer t.Stop()
	id := ""
	for {
		p := b.Self()
		id = p.ID
		if _, err := b.Registry.Beat(ctx, p, 3*period); err != nil && ctx.Err() == nil {
			b.Log.Warn("procs: heartbeat not written", slog.Any("err", err))
		}
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			if err := b.Registry.Forget(fctx, id); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				b.Log.Warn("procs: heartbeat not removed", slog.Any("err", err))
			}
			return nil
		case <-t.C:
		}
	}
}
