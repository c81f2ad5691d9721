package lanes

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

//go:embed lua/*.lua
var luaFS embed.FS

// scripts holds every lanes script, each prefixed with the helpers of
// common.lua it calls (see scriptsrc.go). They run
// by EVALSHA and fall back to EVAL on NOSCRIPT (after a server restart or
// SCRIPT FLUSH), so callers never see NOSCRIPT.
type scripts struct {
	enqueue, claim, ack, extend, settle, lane, drain, requeue, pause, stats *valkey.Lua
	// acks acks several leases in one call (AckAll).
	acks *valkey.Lua
	// coalesce replaces a pending job by key (coalesce.go).
	coalesce *valkey.Lua
	// cancel removes waiting jobs by id (cancel.go).
	cancel *valkey.Lua
	// ackLost settles a job whose work was done under a lost lease
	// (acklost.go).
	ackLost *valkey.Lua
	// floor publishes and reads the claimers' round-trip floors (floor.go).
	floor *valkey.Lua
	// recover beats a claimer's heart and recovers dead claimers' leases
	// (liveness.go).
	recover *valkey.Lua
	// learn lowers and reads the budgets' learned rates (learn.go).
	learn *valkey.Lua
	// qpause pauses and resumes one queue (qpause.go).
	qpause *valkey.Lua
	// sha maps each script to the SHA1 of its body, for pipelined EVALSHA.
	sha map[*valkey.Lua]string
}

func loadScripts() (*scripts, error) {
	common, err := luaFS.ReadFile("lua/common.lua")
	if err != nil {
		return nil, err
	}
	lib, err := parseLuaLib(string(common))
	if err != nil {
		return nil, err
	}
	s := &scripts{sha: map[*valkey.Lua]string{}}
	load := func(name string) (*valkey.Lua, error) {
		body, err := luaFS.ReadFile("lua/" + name + ".lua")
		if err != nil {
			return nil, fmt.Errorf("lanes: script %s: %w", name, err)
		}
		src := lib.source(string(body))
		sum := sha1.Sum([]byte(src))
		l := valkey.NewLuaScript(src)
		s.sha[l] = hex.EncodeToString(sum[:])
		return l, nil
	}
	for name, dst := range map[string]**valkey.Lua{
		"enqueue": &s.enqueue, "claim": &s.claim, "ack": &s.ack, "acks": &s.acks, "extend": &s.extend,
		"settle": &s.settle, "lane": &s.lane, "drain": &s.drain, "requeue": &s.requeue,
		"pause": &s.pause, "stats": &s.stats, "cancel": &s.cancel, "floor": &s.floor, "recover": &s.recover,
		"learn": &s.learn, "qpause": &s.qpause, "acklost": &s.ackLost,
	} {
		if *dst, err = load(name); err != nil {
			return nil, err
		}
	}
	if s.coalesce, err = load("coalesce"); err != nil {
		return nil, err
	}
	return s, nil
}

// core is what a Store and its Inspector share: the client, the keyspace,
// the options and the loaded scripts.
type core struct {
	c       valkey.Client
	keys    keyspace
	opt     options
	scripts *scripts
	// qargs are the configured queues' queueArgs, made once (the options
	// never change): every claim and settle sends them.
	qargs map[string][]string
}

// Store is a set of fair lane queues in one Valkey keyspace (one hash tag):
// the send path, each method acting on jobs (Enqueue with its options
// Dedupe, Coalesce and Unless; Claim, Ack, Extend, Release, Nack, Dead,
// Cancel, NewWaiter). What
// acts on a whole lane or queue (weights, limits, pace, parks and pauses,
// moving and dead-lettering a lane, dead letters, stats) is on its
// Inspector. It is safe for concurrent use; any number of processes may
// share one store if they use the same options.
type Store struct {
	*core
}

// Inspector administers the lanes and queues of a store: weights, lane
// limits and pace, parks and the global pause, moving and dead-lettering a
// lane, the dead-letter set (list, requeue, purge) and stats. It shares its
// store's client, keyspace and options; get one with Store.Inspector or
// NewInspector. It is safe for concurrent use.
type Inspector struct {
	*core
}

// New returns a store on client c. Errors wrap ErrInvalid for bad options.
func New(c valkey.Client, opts ...Option) (*Store, error) {
	o := options{
		tag:         DefaultTag,
		maxPayload:  DefaultMaxPayload,
		queues:      map[string]QueueConfig{},
		maintenance: 16,
		visits:      16,
		floorEpoch:  DefaultFloorEpoch,
	}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.rateStart > o.rate {
		return nil, fmt.Errorf("%w: global rate start %d above the global rate %d", ErrInvalid, o.rateStart, o.rate)
	}
	sc, err := loadScripts()
	if err != nil {
		return nil, err
	}
	cr := &core{c: c, keys: keyspace{tag: o.tag}, opt: o, scripts: sc}
	cr.qargs = make(map[string][]string, len(o.queues))
	for q := range o.queues {
		cr.qargs[q] = cr.makeQueueArgs(q)
	}
	return &Store{core: cr}, nil
}

// NewInspector returns the Inspector of a store on client c with opts, for
// a process that only administers (a dashboard, an admin command): it is
// New(c, opts...).Inspector(). The options must be those of the processes
// that claim (the queue configs and pace rules decide, e.g., where a lane
// goes when it is resumed). Errors as New.
func NewInspector(c valkey.Client, opts ...Option) (*Inspector, error) {
	s, err := New(c, opts...)
	if err != nil {
		return nil, err
	}
	return s.Inspector(), nil
}

// Inspector returns the store's Inspector (same client, keyspace and
// options).
func (s *Store) Inspector() *Inspector { return &Inspector{core: s.core} }

// Tag returns the store's hash tag.
func (s *Store) Tag() string { return s.keys.tag }

func (s *core) queueConfig(q string) QueueConfig {
	cfg := s.opt.queues[q]
	if cfg.LaneLimit == 0 {
		cfg.LaneLimit = DefaultLaneLimit
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 25
	}
	return cfg
}

// queueArgs returns the five queue-config ARGV fields read by common.lua
// (a configured queue's made once, shared: the caller must not change
// them).
func (s *core) queueArgs(q string) []string {
	if a, ok := s.qargs[q]; ok {
		return a
	}
	return s.makeQueueArgs(q)
}

func (s *core) makeQueueArgs(q string) []string {
	cfg := s.queueConfig(q)
	ordered := "0"
	if cfg.Ordered {
		ordered = "1"
	}
	return []string{s.keys.queue(q), ordered, strconv.Itoa(cfg.LaneLimit), strconv.Itoa(cfg.MaxAttempts), ms(s.logTTL())}
}

// logTTL is how long a settled send stays in the send logs: the longest
// window any configured limit uses (per-lane overrides are read by the
// scripts themselves).
func (s *core) logTTL() time.Duration {
	d := s.opt.window
	for _, q := range s.opt.queues {
		if q.Rate > 0 && q.Window > d {
			d = q.Window
		}
	}
	if s.opt.pace.Period > d {
		d = s.opt.pace.Period
	}
	for _, r := range s.opt.paceRules {
		if r.Pace.Period > d {
			d = r.Pace.Period
		}
	}
	return d
}

// header returns KEYS and the leading ARGV of a queue-level script.
func (s *core) header(q string, extra int) ([]string, []string) {
	args := make([]string, 0, 6+extra)
	args = append(args, s.keys.shared())
	args = append(args, s.queueArgs(q)...)
	return []string{s.keys.ring(q)}, args
}

// valkeyExec is one script call of a pipelined batch.
type valkeyExec struct {
	keys, args []string
}

// execMulti runs several calls of one script in one round trip by EVALSHA;
// calls answered NOSCRIPT (nothing ran) are run again one by one through
// Exec, which falls back to EVAL.
func (s *core) execMulti(ctx context.Context, l *valkey.Lua, calls []valkeyExec) []valkey.ValkeyResult {
	if len(calls) == 1 {
		return []valkey.ValkeyResult{l.Exec(ctx, s.c, calls[0].keys, calls[0].args)}
	}
	sha := s.scripts.sha[l]
	cmds := make(valkey.Commands, 0, len(calls))
	for _, c := range calls {
		cmds = append(cmds, s.c.B().Evalsha().Sha1(sha).Numkeys(int64(len(c.keys))).Key(c.keys...).Arg(c.args...).Build())
	}
	out := s.c.DoMulti(ctx, cmds...)
	for i, r := range out {
		if verr, ok := valkey.IsValkeyErr(r.Error()); ok && verr.IsNoScript() {
			out[i] = l.Exec(ctx, s.c, calls[i].keys, calls[i].args)
		}
	}
	return out
}
