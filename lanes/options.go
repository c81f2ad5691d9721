package lanes

import (
	"fmt"
	"strings"
	"time"
)

// Limits on input, checked before anything is written.
const (
	// MaxGroupBytes is the longest group (lane) id, in bytes.
	MaxGroupBytes = 256
	// MaxWeight is the highest lane weight; weights are 1..MaxWeight, default 1.
	MaxWeight = 1000
	// DefaultMaxPayload is the default payload limit, in bytes (64 KiB).
	DefaultMaxPayload = 64 << 10
	// MaxClaim is the most jobs one claim may ask for.
	MaxClaim = 1000
	// MaxQueueNameBytes is the longest queue name.
	MaxQueueNameBytes = 64
)

// DefaultLaneLimit is a lane's in-flight cap (QueueConfig.LaneLimit) when
// its queue sets none: 1,000,000, in effect no cap (LaneStats.Limit
// reports it for such a lane).
const DefaultLaneLimit = 1_000_000

// QueueConfig says how one queue serves its lanes. All processes sharing a
// store must use the same configs.
type QueueConfig struct {
	// Ordered: a lane with jobs in flight is not served again until they are
	// settled (acked, released, nacked, dead-lettered or expired). This keeps
	// one lane's jobs in order with any number of workers.
	Ordered bool
	// LaneLimit (glimit) is the default max jobs of one lane in flight; 0
	// means DefaultLaneLimit. Override per lane with Inspector.SetLaneLimit.
	LaneLimit int
	// MaxAttempts: after this many failed attempts (Nack, or an expired
	// lease) a job is dead-lettered; 0 means 25.
	MaxAttempts int
	// MaxDepth bounds each lane of the queue: an Enqueue item whose lane
	// already holds MaxDepth pending jobs (waiting, not in flight) is
	// refused, counted in EnqueueResult.Full, and Enqueue returns
	// ErrLaneFull (wrapped) with the result; the other items of the call,
	// on other lanes, are enqueued (with Dedupe the call is atomic: a full
	// lane refuses every item and the key is not set). Coalesce replaces
	// by key and is never refused. 0 means unbounded. A queue that carries
	// fan-outs (one job per lane per broadcast) must not be bounded below
	// the broadcasts that may be queued at once.
	MaxDepth int
	// Rate and Window are the queue's own budget: at most Rate jobs of this
	// queue claimed in any Window (a sliding window on the server clock,
	// counted like WithGlobalRate: a send counts from its claim until one
	// Window after its latest possible arrival, see Lease.Floor), shared by
	// every claimer, in addition to the
	// store's global rate and the lanes' paces. Rate 0 means none. So two
	// queues can have budgets of their own (codemojex: replies and bulk
	// notifications) while a lane's pace stays shared by both.
	Rate   int
	Window time.Duration
	// MinShare, in percent (0..100) of the store's global budget
	// (WithGlobalRate, at its learned rate), is what this queue is
	// guaranteed of that budget while it has ready lanes: a claim serves
	// an earlier queue of its Queues only from what is left of the budget
	// after this queue's share not yet used in the last window (its
	// claims of the last global window, kept in "<queue prefix>share"). So
	// under strict priority a later queue is never starved while the
	// earlier ones could use the whole budget (codemojex: bulk
	// notifications behind replies when both share one budget); with no
	// ready lane of its own it reserves nothing, and an earlier queue
	// takes the whole budget as before. 0 means none (strict priority).
	// It has no effect without a global rate.
	MinShare int
	// OutsideGlobal: the queue's jobs are neither counted in nor held by
	// the store's global rate (WithGlobalRate); its own budget (Rate) and
	// the lanes' paces still hold them. codemojex: paid broadcast copies,
	// which Telegram sends "ignoring broadcasting limits" (Bot API,
	// allow_paid_broadcast). A queue with a MinShare cannot be outside.
	OutsideGlobal bool
}

// Pace limits how fast one lane is served: at most Limit jobs in any Period
// (a sliding window on the server clock). The zero value means unpaced.
// Pace state is shared by every queue of a store, so a chat's replies and
// notifications draw on one budget.
type Pace struct {
	Limit  int
	Period time.Duration
}

// PaceRule applies a Pace to every group starting with Prefix (the first
// matching rule wins; a per-lane override set with SetLanePace wins over all).
type PaceRule struct {
	Prefix string
	Pace   Pace
}

type options struct {
	tag         string
	maxPayload  int
	queues      map[string]QueueConfig
	rate        int
	window      time.Duration
	rateStart   int
	pace        Pace
	paceRules   []PaceRule
	maintenance int
	visits      int
	unpaced     bool
	floorEpoch  time.Duration
	learn       LearnConfig
}

// Option configures a Store.
type Option func(*options) error

// DefaultTag is the hash tag of a Store made without WithTag, and the
// Valkey hash tag of every key of the program (lanes, notifier, chatstate,
// gamestore, the app): the one place it is written (docs/keys.md).
const DefaultTag = "cm"

// TagRule says which hash tags ValidTag (and WithTag) takes, in words an
// error can quote.
const TagRule = "1-64 characters of A-Z a-z 0-9 . _ - (no braces: the tag is what Valkey Cluster hashes)"

// ValidTag reports whether tag is a hash tag WithTag takes: 1..64
// characters of [A-Za-z0-9._-] (TagRule). Every key is "{" + tag + "}:...",
// so a tag without braces puts all of them in the slot CLUSTER KEYSLOT
// gives the tag.
func ValidTag(tag string) bool {
	return len(tag) >= 1 && len(tag) <= 64 && nameBytes(tag, "._-")
}

// WithTag sets the hash tag every key carries (default DefaultTag).
// Errors (from New): ErrInvalid unless ValidTag(tag).
func WithTag(tag string) Option {
	return func(o *options) error {
		if !ValidTag(tag) {
			return fmt.Errorf("%w: tag %q: want %s", ErrInvalid, tag, TagRule)
		}
		o.tag = tag
		return nil
	}
}

// WithMaxPayload sets the payload limit in bytes (default 64 KiB).
func WithMaxPayload(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("%w: max payload %d: want >= 1 byte", ErrInvalid, n)
		}
		o.maxPayload = n
		return nil
	}
}

// WithQueue sets the config of one queue (queues without one get the zero
// QueueConfig: unordered, no lane limit, 25 attempts).
func WithQueue(name string, cfg QueueConfig) Option {
	return func(o *options) error {
		if err := validQueue(name); err != nil {
			return err
		}
		if cfg.LaneLimit < 0 || cfg.MaxAttempts < 0 || cfg.MaxDepth < 0 {
			return fmt.Errorf("%w: queue %q: LaneLimit, MaxAttempts and MaxDepth must be >= 0", ErrInvalid, name)
		}
		if cfg.Rate < 0 || cfg.Window < 0 || (cfg.Rate > 0 && cfg.Window < time.Millisecond) {
			return fmt.Errorf("%w: queue %q: rate %d per %v: want rate >= 0 and window >= 1ms", ErrInvalid, name, cfg.Rate, cfg.Window)
		}
		if cfg.MinShare < 0 || cfg.MinShare > 100 {
			return fmt.Errorf("%w: queue %q: min share %d%%: want 0..100", ErrInvalid, name, cfg.MinShare)
		}
		if cfg.MinShare > 0 && cfg.OutsideGlobal {
			return fmt.Errorf("%w: queue %q: a min share of the global budget for a queue outside it", ErrInvalid, name)
		}
		o.queues[name] = cfg
		return nil
	}
}

// WithGlobalRate caps how many jobs all claimers of the store together may
// claim in any window (a sliding window on the server clock), e.g. 30 per
// second for a Telegram bot. limit 0 means no cap.
func WithGlobalRate(limit int, window time.Duration) Option {
	return func(o *options) error {
		if limit < 0 || window < 0 || (limit > 0 && window < time.Millisecond) {
			return fmt.Errorf("%w: global rate %d per %v: want limit >= 0 and window >= 1ms", ErrInvalid, limit, window)
		}
		o.rate, o.window = limit, window
		return nil
	}
}

// WithGlobalRateStart makes the global rate (WithGlobalRate's limit, then
// a ceiling) a probed one: it claims at start until it learns more. When a
// claim finds the budget spent while a queue it holds has ready lanes
// (demand above it), the claim raises it, at most once per
// LearnConfig.Probe since its last change and never above the limit, by a
// step that starts at 1 and doubles at each raise (30, 31, 33, 37, 45, 61,
// 93...); the rate before the raise is kept. A 429 answered to a send while
// it runs above that rate (Store.RevertProbe) takes it back there and
// holds it at most there for LearnConfig.Hold (doubled for each failed
// probe in a row, at most 16 times); LowerBudget halves it as any budget.
// So a receiver whose limit is unknown is sent to at a rate known to be
// safe, and more only while there is more to send and it takes it
// (codemojex: replies and bulk messages start within Telegram's 30/s
// however it counts replies). The state lives in Valkey with the other
// learned rates. start 0 means not probed (the default); start must be at
// most the limit. Errors (from New): ErrInvalid for a negative start, or
// one above the limit.
func WithGlobalRateStart(start int) Option {
	return func(o *options) error {
		if start < 0 {
			return fmt.Errorf("%w: global rate start %d: want >= 0", ErrInvalid, start)
		}
		o.rateStart = start
		return nil
	}
}

// WithLanePace sets the default pace of every lane, and rules by group
// prefix (e.g. groups starting with "-" at 20 per minute).
func WithLanePace(def Pace, rules ...PaceRule) Option {
	return func(o *options) error {
		if err := validPace(def); err != nil {
			return err
		}
		for _, r := range rules {
			if err := validPace(r.Pace); err != nil {
				return err
			}
		}
		o.pace, o.paceRules = def, append([]PaceRule(nil), rules...)
		return nil
	}
}

// WithoutSendLimits makes the store's claims ignore every pace and the
// global pause, for a store whose jobs are not sends (codemojex's update
// queue): lane pace overrides (Inspector.SetLanePace) and the global pause
// (Inspector.Pause) are kept per hash tag, so a store sharing its tag with
// a paced one (to share its weights) would otherwise be paced and paused
// with it. Combine it with no WithGlobalRate and no WithLanePace.
func WithoutSendLimits() Option {
	return func(o *options) error {
		o.unpaced = true
		return nil
	}
}

// WithBudgets sets per-call bounds of a claim: maintenance (expired leases,
// due retries and due parked lanes handled per queue, default 16) and visits
// (lanes visited per queue, default 16). Both bound a claim's cost whatever
// the number of lanes.
func WithBudgets(maintenance, visits int) Option {
	return func(o *options) error {
		if maintenance < 1 || visits < 1 {
			return fmt.Errorf("%w: budgets must be >= 1", ErrInvalid)
		}
		o.maintenance, o.visits = maintenance, visits
		return nil
	}
}

// WithFloorEpoch sets the epoch of the shared round-trip floor (ShareFloor,
// default DefaultFloorEpoch): a floor published counts for the rest of its
// epoch and the next, so a claimer that stops publishing stops counting
// between one and two epochs after its last call. 100 ms..1 h; every
// claimer of the store must use the same epoch.
func WithFloorEpoch(d time.Duration) Option {
	return func(o *options) error {
		if d < 100*time.Millisecond || d > time.Hour {
			return fmt.Errorf("%w: floor epoch %v: want 100ms..1h", ErrInvalid, d)
		}
		o.floorEpoch = d.Truncate(time.Millisecond)
		return nil
	}
}

func validPace(p Pace) error {
	if p.Limit < 0 || p.Period < 0 || (p.Limit > 0 && p.Period < time.Millisecond) {
		return fmt.Errorf("%w: pace %d per %v: want limit >= 0 and period >= 1ms", ErrInvalid, p.Limit, p.Period)
	}
	return nil
}

func validQueue(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty queue name", ErrInvalid)
	}
	if len(name) > MaxQueueNameBytes || !nameBytes(name, "._-") {
		return fmt.Errorf("%w: queue %q: want 1-%d characters of [A-Za-z0-9._-]", ErrInvalid, name, MaxQueueNameBytes)
	}
	return nil
}

// validQueueAndIDs checks queue (validQueue) and every id of ids
// (JobID.Validate), in that order. Errors: ErrInvalid, the first found.
func validQueueAndIDs(queue string, ids []JobID) error {
	if err := validQueue(queue); err != nil {
		return err
	}
	for _, id := range ids {
		if err := id.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func validGroup(g string) error {
	if g == "" {
		return fmt.Errorf("%w: empty group", ErrInvalid)
	}
	if len(g) > MaxGroupBytes {
		return fmt.Errorf("%w: group of %d bytes: at most %d", ErrInvalid, len(g), MaxGroupBytes)
	}
	return nil
}

func validWeight(w int) error {
	if w < 1 || w > MaxWeight {
		return fmt.Errorf("%w: weight %d: want an integer 1..%d", ErrInvalid, w, MaxWeight)
	}
	return nil
}

// nameBytes reports whether s is made of ASCII letters, digits and the
// bytes of extra only: the character class of queue names and claimer ids
// ([A-Za-z0-9] + extra), checked on every claim, ack and settle without a
// regexp (a regexp match was 8% of a worker's CPU per delivered message).
func nameBytes(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte(extra, c) >= 0 {
			continue
		}
		return false
	}
	return true
}
