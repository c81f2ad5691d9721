package lanes

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ReasonLeaseExpired is the reason of a job dead-lettered because its lease
// expired for the MaxAttempts-th time (reclaimed inside a claim), and the
// code its DeadTally counts it under.
const ReasonLeaseExpired = "lease expired"

// DeadTally is a count a job carries from its enqueue (CountDead) for the
// dead-letterings no caller settles with a SettleTally of its own: a
// DeadLane sweep, which takes a lane's waiting jobs of any producer, and a
// lease that expired past MaxAttempts, reclaimed inside some claimer's
// Claim. The dead-lettering script counts the job in the same atomic call,
// so no crash between the two leaves it dead but uncounted. Every key is a
// full key name under the store's hash tag, owned by the caller; no field
// may hold a newline.
type DeadTally struct {
	// Key is a hash: its field Prefix + code is incremented by 1 while it
	// exists (a hash that expired is not brought back). code is
	// ReasonLeaseExpired for a lease that expired past MaxAttempts, and
	// the sweep's (DeadLane's CountedAs, else its reason) for a sweep.
	Key, Prefix string
	// Once, when not "", is a set the job's id joins: a job already in it
	// is not counted again (the same set as a SettleTally's Once, so each
	// path counts a job at most once between them).
	Once string
	// Untrack, when not "", is a sorted set the job's id leaves (ZREM),
	// even when the hash expired.
	Untrack string
	// TTL > 0 renews the expiry of Key and Once to TTL (whole ms) on a
	// count.
	TTL time.Duration
}

// CountDead makes each job of the Enqueue call carry t (stored in its hash,
// field y, about the length of t's keys): a DeadLane sweep or a lease
// expired past MaxAttempts that dead-letters the job counts it in t in the
// same script. A caller's own dead-lettering (Dead, DeadUntried, a Nack
// past MaxAttempts) counts only its Counting option's SettleTally. It
// combines with Dedupe, Unless and AtCursor; not with Coalesce.
func CountDead(t DeadTally) EnqueueOption {
	return func(c *enqueueConfig) { c.dead = &t }
}

// validDeadTally checks t (see DeadTally). Errors: ErrInvalid.
func (s *core) validDeadTally(t DeadTally) error {
	if err := s.validTagged("dead tally key", t.Key); err != nil {
		return err
	}
	for what, k := range map[string]string{"dead tally once set": t.Once, "dead tally untrack set": t.Untrack} {
		if k != "" {
			if err := s.validTagged(what, k); err != nil {
				return err
			}
		}
	}
	for _, v := range []string{t.Key, t.Prefix, t.Once, t.Untrack} {
		if strings.Contains(v, "\n") {
			return fmt.Errorf("%w: dead tally %q: a newline", ErrInvalid, v)
		}
	}
	if t.TTL < 0 {
		return fmt.Errorf("%w: dead tally ttl %v: want >= 0", ErrInvalid, t.TTL)
	}
	return nil
}

// encode is t as stored in a job's field y and read by common.lua
// stored_tally: "<ttl ms>\n<prefix>\n<key>\n<once>\n<untrack>", where a
// once or untrack set named key + a suffix is written "+" + the suffix
// (a full key starts with "{": a broadcast copy's sets, "<key>:seen" and
// "<key>:out", cost 11 bytes rather than 87).
func (t DeadTally) encode() string {
	rel := func(k string) string {
		if k != "" && strings.HasPrefix(k, t.Key) {
			return "+" + k[len(t.Key):]
		}
		return k
	}
	return strconv.FormatInt(t.TTL.Milliseconds(), 10) + "\n" + t.Prefix + "\n" + t.Key + "\n" + rel(t.Once) + "\n" + rel(t.Untrack)
}

// DeadLaneOption changes how DeadLane counts the jobs it sweeps.
type DeadLaneOption func(*deadLaneConfig)

type deadLaneConfig struct {
	code string
	set  bool // CountedAs was given
}

// CountedAs makes DeadLane count each swept job that carries a DeadTally
// under code (field Prefix + code) instead of its reason: e.g. "forbidden"
// for a reason "forbidden: bot was blocked by the user". An empty code is
// refused (ErrInvalid).
func CountedAs(code string) DeadLaneOption {
	return func(c *deadLaneConfig) { c.code, c.set = code, true }
}
