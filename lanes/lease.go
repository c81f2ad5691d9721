package lanes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

func (s *core) checkLease(l Lease) error {
	if err := validQueue(l.Queue); err != nil {
		return err
	}
	if err := l.ID.Validate(); err != nil {
		return err
	}
	if l.Token == "" {
		return fmt.Errorf("%w: empty lease token", ErrInvalid)
	}
	if l.Floor < 0 || l.Floor > MaxFloor {
		return fmt.Errorf("%w: lease floor %v: want 0..%v", ErrInvalid, l.Floor, MaxFloor)
	}
	return nil
}

func leaseErr(op string, l Lease, code int64) error {
	switch code {
	case -1:
		return fmt.Errorf("lanes: %s %s: %w", op, l.ID, ErrStaleLease)
	case -2:
		return fmt.Errorf("lanes: %s %s: %w", op, l.ID, ErrNoJob)
	}
	return fmt.Errorf("lanes: %s %s: unexpected reply %d", op, l.ID, code)
}

// SettleTally names a count the settling of a job keeps in the caller's
// own keys in the same atomic call (the Counting option of Ack, Nack, Dead
// and DeadUntried), so the count never drifts from the settling, even when
// the settling process dies right after it: e.g. a fan-out's progress
// ("sent", "failed"), which a separate write after the ack would miss.
// Every key is a full key name under the store's hash tag ("{tag}:" + a
// name), owned by the caller.
type SettleTally struct {
	// Key is a hash; each of Fields is incremented by 1 while it exists (a
	// hash that expired is not brought back).
	Key    string
	Fields []string
	// Once, when not "", is a set the job's id joins: a job already in it
	// is not counted again (another path counted it).
	Once string
	// Untrack, when not "", is a sorted set the job's id leaves (ZREM):
	// e.g. the Track set of the Cursor that enqueued it.
	Untrack string
	// TTL > 0 renews the expiry of Key and Once to TTL (whole ms).
	TTL time.Duration
}

// SettleOption changes how Ack, Nack, Dead and DeadUntried settle a job.
type SettleOption func(*settleConfig)

type settleConfig struct{ tally SettleTally }

// Counting applies t when the call settles the job: an Ack that lands, or a
// Nack, Dead or DeadUntried that dead-letters it (a Nack that retries counts
// nothing; nor does a call that drops a job Cancel named while it was in
// flight: that Cancel's Tally counts it, see Cancelled). A retried call whose first try landed unseen finds no job
// (ErrNoJob) and counts nothing more, so t counts each job once.
func Counting(t SettleTally) SettleOption {
	return func(c *settleConfig) { c.tally = t }
}

func (s *core) validTally(t SettleTally) error {
	if t.Key == "" {
		if len(t.Fields) > 0 || t.Once != "" {
			return fmt.Errorf("%w: settle tally fields %q once %q without a key", ErrInvalid, t.Fields, t.Once)
		}
	} else {
		if err := s.validTagged("settle tally key", t.Key); err != nil {
			return err
		}
		if len(t.Fields) == 0 || slices.Contains(t.Fields, "") {
			return fmt.Errorf("%w: settle tally %q fields %q: want one or more non-empty fields", ErrInvalid, t.Key, t.Fields)
		}
	}
	if t.TTL < 0 {
		return fmt.Errorf("%w: settle tally ttl %v: want >= 0", ErrInvalid, t.TTL)
	}
	if t.Once != "" {
		if err := s.validTagged("settle tally once set", t.Once); err != nil {
			return err
		}
	}
	if t.Untrack != "" {
		if err := s.validTagged("settle tally untrack set", t.Untrack); err != nil {
			return err
		}
	}
	return nil
}

// tallyArgs appends the tally of opts to a settling script's keys and args
// (see common.lua apply_tally). Errors: ErrInvalid (validTally).
func (s *core) tallyArgs(keys, args []string, opts []SettleOption) ([]string, []string, error) {
	var cfg settleConfig
	for _, o := range opts {
		o(&cfg)
	}
	t := cfg.tally
	if err := s.validTally(t); err != nil {
		return nil, nil, err
	}
	flag := func(key string) string {
		if key == "" {
			return ""
		}
		keys = append(keys, key)
		return "1"
	}
	args = append(args, flag(t.Key), flag(t.Once), flag(t.Untrack), ms(t.TTL))
	return keys, append(args, t.Fields...), nil
}

// Ack settles a delivered job: its lease ends, its lane's in-flight count
// drops, its send counts against its budgets until one window after its
// latest possible arrival (see Lease.Floor) and its payload is deleted.
// With Counting, the tally is kept in the same call. Errors: ErrStaleLease
// (the lease was reclaimed: the job may be held by another claimer now;
// nothing changed: AckLost settles what is known of a job delivered all
// the same), ErrNoJob, ErrInvalid, or the server's error.
func (s *Store) Ack(ctx context.Context, l Lease, opts ...SettleOption) error {
	if err := s.checkLease(l); err != nil {
		return err
	}
	keys, args := s.header(l.Queue, 8)
	args = append(args, string(l.ID), l.Token, ms(l.Floor))
	keys, args, err := s.tallyArgs(keys, args, opts)
	if err != nil {
		return err
	}
	code, err := s.scripts.ack.Exec(ctx, s.c, keys, args).AsInt64()
	if err != nil {
		return fmt.Errorf("lanes: ack %s: %w", l.ID, err)
	}
	if code != 1 {
		return leaseErr("ack", l, code)
	}
	return nil
}

// Acking is one ack of AckAll: a lease of a delivered job and the tally
// its ack keeps (Ack's Counting option; the zero SettleTally: none).
type Acking struct {
	Lease Lease
	Tally SettleTally
}

// AckAll acks several delivered jobs (of any queues of the store) in one
// atomic call, each exactly as Ack would with Counting(a.Tally), what they
// share done once per call (the server's time, the budgets' send logs'
// expiries, each queue's due time, the wake-ups): at most MaxClaim acks.
// It returns one error per ack, in order (nil: acked; ErrStaleLease or
// ErrNoJob as Ack returns them, nothing changed for that ack), and the
// call's error: ErrInvalid for a bad lease or tally (nothing applied), or
// the server's (the acks may or may not have been applied: ack them again,
// which answers ErrNoJob for one already acked).
func (s *Store) AckAll(ctx context.Context, acks []Acking) ([]error, error) {
	if len(acks) == 0 {
		return nil, nil
	}
	if len(acks) > MaxClaim {
		return nil, fmt.Errorf("%w: ack all: %d acks: want at most %d", ErrInvalid, len(acks), MaxClaim)
	}
	var queues []string
	// The acks' distinct tallies (a batch's acks mostly share one), each
	// sent once; an ack names its own by index (0: none).
	var tallies []SettleTally
	tallyOf := make([]int, len(acks))
	keys := []string{s.keys.ring(acks[0].Lease.Queue)}
	args := []string{s.keys.shared(), ""}
	for i, a := range acks {
		if err := s.checkLease(a.Lease); err != nil {
			return nil, err
		}
		if err := s.validTally(a.Tally); err != nil {
			return nil, err
		}
		if !slices.Contains(queues, a.Lease.Queue) {
			queues = append(queues, a.Lease.Queue)
			args = append(args, s.queueArgs(a.Lease.Queue)...)
		}
		if a.Tally.Key == "" && a.Tally.Untrack == "" {
			continue // none (a tally without a key counts nothing: its once set is unused)
		}
		n := slices.IndexFunc(tallies, func(t SettleTally) bool { return sameTally(t, a.Tally) })
		if n < 0 {
			n = len(tallies)
			tallies = append(tallies, a.Tally)
		}
		tallyOf[i] = n + 1
	}
	args[1] = strconv.Itoa(len(queues))
	args = append(args, strconv.Itoa(len(tallies)))
	for _, t := range tallies {
		flag := func(key string) string {
			if key == "" {
				return ""
			}
			keys = append(keys, key)
			return "1"
		}
		args = append(args, flag(t.Key), flag(t.Once), flag(t.Untrack), ms(t.TTL), strconv.Itoa(len(t.Fields)))
		args = append(args, t.Fields...)
	}
	args = append(args, strconv.Itoa(len(acks)))
	for i, a := range acks {
		l := a.Lease
		args = append(args, strconv.Itoa(slices.Index(queues, l.Queue)+1), string(l.ID), l.Token, ms(l.Floor), strconv.Itoa(tallyOf[i]))
	}
	codes, err := s.scripts.acks.Exec(ctx, s.c, keys, args).AsIntSlice()
	if err != nil {
		return nil, fmt.Errorf("lanes: ack all: %w", err)
	}
	if len(codes) != len(acks) {
		return nil, fmt.Errorf("lanes: ack all: %d codes for %d acks", len(codes), len(acks))
	}
	errs := make([]error, len(acks))
	for i, code := range codes {
		if code != 1 {
			errs[i] = leaseErr("ack", acks[i].Lease, code)
		}
	}
	return errs, nil
}

// sameTally says whether a and b count an ack alike: the same keys, TTL
// (in whole ms, as sent) and fields in the same order.
func sameTally(a, b SettleTally) bool {
	return a.Key == b.Key && a.Once == b.Once && a.Untrack == b.Untrack && ms(a.TTL) == ms(b.TTL) && slices.Equal(a.Fields, b.Fields)
}

// Extend renews a live lease for d from now (server clock), for a send that
// is still running, and returns the new deadline. Errors as Ack.
func (s *Store) Extend(ctx context.Context, l Lease, d time.Duration) (time.Time, error) {
	if err := s.checkLease(l); err != nil {
		return time.Time{}, err
	}
	if d < time.Millisecond {
		return time.Time{}, fmt.Errorf("%w: extend: lease %v: want >= 1ms", ErrInvalid, d)
	}
	keys, args := s.header(l.Queue, 3)
	args = append(args, string(l.ID), l.Token, ms(d))
	v, err := s.scripts.extend.Exec(ctx, s.c, keys, args).AsInt64()
	if err != nil {
		return time.Time{}, fmt.Errorf("lanes: extend %s: %w", l.ID, err)
	}
	if v < 0 {
		return time.Time{}, leaseErr("extend", l, v)
	}
	return time.UnixMilli(v), nil
}

// Outcome says where a settled job went.
type Outcome string

// Outcomes of Release, Nack and Dead.
const (
	// Queued: back on its lane now, at its place in mint order.
	Queued Outcome = "queued"
	// Delayed: back after a delay (its lane parked, on an ordered queue).
	Delayed Outcome = "delayed"
	// DeadLettered: in the dead-letter set, with its reason.
	DeadLettered Outcome = "dead"
	// Cancelled: dropped, whatever the call asked: Cancel named it while it
	// was in flight, so it is neither queued again nor dead-lettered, and
	// it is counted in that Cancel's Tally (not in the call's Counting).
	Cancelled Outcome = "cancelled"
	// Delivered: dropped, whatever the call asked: AckLost marked it
	// delivered while this lease held it (its work was done under an
	// earlier lease since lost), so it is neither queued again nor
	// dead-lettered, and it is counted in that AckLost's tally (not in the
	// call's Counting nor in a Cancel's Tally).
	Delivered Outcome = "delivered"
)

func (s *core) settle(ctx context.Context, l Lease, mode string, delay time.Duration, reason string, opts []SettleOption) (Outcome, error) {
	if err := s.checkLease(l); err != nil {
		return "", err
	}
	if delay < 0 {
		return "", fmt.Errorf("%w: %s: negative delay %v", ErrInvalid, mode, delay)
	}
	keys, args := s.header(l.Queue, 10)
	args = append(args, string(l.ID), l.Token, mode, ms(delay), reason, ms(l.Floor))
	keys, args, err := s.tallyArgs(keys, args, opts)
	if err != nil {
		return "", err
	}
	arr, err := s.scripts.settle.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return "", fmt.Errorf("lanes: %s %s: %w", mode, l.ID, err)
	}
	code, err := arr[0].AsInt64()
	if err != nil {
		return "", fmt.Errorf("lanes: %s %s: malformed reply: %w", mode, l.ID, err)
	}
	if code != 1 {
		return "", leaseErr(mode, l, code)
	}
	out, err := arr[1].ToString()
	if err != nil {
		return "", fmt.Errorf("lanes: %s %s: malformed reply: %w", mode, l.ID, err)
	}
	return Outcome(out), nil
}

// Release gives a claimed job back without using an attempt (e.g. the chat
// answered 429 and its lane is being parked, or the worker is shutting
// down): it returns to its lane at its place in mint order. A job Cancel
// named while it was in flight is dropped instead (as by Nack, Postpone,
// Dead and DeadUntried, and at its lease's expiry: see Cancel), and so is
// one AckLost marked delivered meanwhile (LostMarked), counted in that
// call's tally. Errors as Ack.
func (s *Store) Release(ctx context.Context, l Lease) error {
	_, err := s.settle(ctx, l, "release", 0, "", nil)
	return err
}

// Nack records a failed attempt (attempts + 1, with reason). Past the
// queue's MaxAttempts the job is dead-lettered; otherwise it is retried after
// delay (server clock). On an ordered queue the job goes back on its lane at
// once and the whole lane is parked for delay, so later jobs cannot overtake
// it; on an unordered queue it waits alone in the delayed set. Counting
// applies only when it dead-letters the job. Errors as Ack.
func (s *Store) Nack(ctx context.Context, l Lease, delay time.Duration, reason string, opts ...SettleOption) (Outcome, error) {
	return s.settle(ctx, l, "nack", delay, reason, opts)
}

// Postpone gives a claimed job back without using an attempt, claimable
// again after delay (server clock): on an ordered queue it goes back on its
// lane at once and the whole lane is parked for delay, so later jobs cannot
// overtake it; on an unordered queue it waits alone in the delayed set. For
// a job that cannot go on now for a reason outside it, which time clears
// (codemojex: an update whose chat's reply lane is full waits for it to
// drain), where Release would hand it out again at once and Nack would
// spend its attempts. Errors: ErrInvalid for a delay under 1 ms; else as
// Ack.
func (s *Store) Postpone(ctx context.Context, l Lease, delay time.Duration) error {
	if delay < time.Millisecond {
		return fmt.Errorf("%w: postpone %s: delay %v: want >= 1ms", ErrInvalid, l.ID, delay)
	}
	_, err := s.settle(ctx, l, "postpone", delay, "", nil)
	return err
}

// Dead moves a claimed job to the dead-letter set at once with reason (a
// permanent error), counting this claim as a failed attempt (attempts + 1:
// a job that failed for good on its first send reads 1 attempt), with
// Counting's tally kept in the same call. Errors as Ack.
func (s *Store) Dead(ctx context.Context, l Lease, reason string, opts ...SettleOption) error {
	_, err := s.settle(ctx, l, "dead", 0, reason, opts)
	return err
}

// DeadUntried is Dead for a claimed job that was never tried (the rest of
// a batch after its chat's 403, a payload that cannot be decoded): its
// attempts stay as they were. Errors as Ack.
func (s *Store) DeadUntried(ctx context.Context, l Lease, reason string, opts ...SettleOption) error {
	_, err := s.settle(ctx, l, "dead-untried", 0, reason, opts)
	return err
}
