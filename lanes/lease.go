package lanes

import (
	"context"
	"fmt"
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

// Ack settles a delivered job: its lease ends, its lane's in-flight count
// drops, its send counts against its budgets until one window after its
// latest possible arrival (see Lease.Floor) and its payload is deleted. Errors: ErrStaleLease (the lease was
// reclaimed: the job may be held by another claimer now; nothing changed),
// ErrNoJob, ErrInvalid, or the server's error.
func (s *Store) Ack(ctx context.Context, l Lease) error {
	if err := s.checkLease(l); err != nil {
		return err
	}
	keys, args := s.header(l.Queue, 3)
	args = append(args, string(l.ID), l.Token, ms(l.Floor))
	code, err := s.scripts.ack.Exec(ctx, s.c, keys, args).AsInt64()
	if err != nil {
		return fmt.Errorf("lanes: ack %s: %w", l.ID, err)
	}
	if code != 1 {
		return leaseErr("ack", l, code)
	}
	return nil
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
)

func (s *core) settle(ctx context.Context, l Lease, mode string, delay time.Duration, reason string) (Outcome, error) {
	if err := s.checkLease(l); err != nil {
		return "", err
	}
	if delay < 0 {
		return "", fmt.Errorf("%w: %s: negative delay %v", ErrInvalid, mode, delay)
	}
	keys, args := s.header(l.Queue, 6)
	args = append(args, string(l.ID), l.Token, mode, ms(delay), reason, ms(l.Floor))
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
// down): it returns to its lane at its place in mint order. Errors as Ack.
func (s *Store) Release(ctx context.Context, l Lease) error {
	_, err := s.settle(ctx, l, "release", 0, "")
	return err
}

// Nack records a failed attempt (attempts + 1, with reason). Past the
// queue's MaxAttempts the job is dead-lettered; otherwise it is retried after
// delay (server clock). On an ordered queue the job goes back on its lane at
// once and the whole lane is parked for delay, so later jobs cannot overtake
// it; on an unordered queue it waits alone in the delayed set. Errors as Ack.
func (s *Store) Nack(ctx context.Context, l Lease, delay time.Duration, reason string) (Outcome, error) {
	return s.settle(ctx, l, "nack", delay, reason)
}

// Dead moves a claimed job to the dead-letter set at once with reason (a
// permanent error), counting this claim as a failed attempt (attempts + 1:
// a job that failed for good on its first send reads 1 attempt). Errors as
// Ack.
func (s *Store) Dead(ctx context.Context, l Lease, reason string) error {
	_, err := s.settle(ctx, l, "dead", 0, reason)
	return err
}

// DeadUntried is Dead for a claimed job that was never tried (the rest of
// a batch after its chat's 403, a payload that cannot be decoded): its
// attempts stay as they were. Errors as Ack.
func (s *Store) DeadUntried(ctx context.Context, l Lease, reason string) error {
	_, err := s.settle(ctx, l, "dead-untried", 0, reason)
	return err
}
