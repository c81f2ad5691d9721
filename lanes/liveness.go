package lanes

import (
	"context"
	"fmt"
	"time"
)

// A claimer that dies (kill -9, a crash, a host gone) leaves its jobs
// under leases that, left alone, are reclaimed only when they expire: as
// long as the lease, which must cover the slowest send. A claimer that
// names itself (ClaimRequest.Claimer) and beats its heart (Heartbeat) more
// often than its time to live lets any process recover its leases within
// that time to live of its last beat (RecoverDead), however long the
// leases: a live claimer's slow job stays covered by its lease, a dead
// one's goes back to its lane in seconds.

// validClaimer reports whether c is a claimer id: 1..MaxClaimerBytes of
// [A-Za-z0-9._:/-].
func validClaimer(c string) bool {
	return c != "" && len(c) <= MaxClaimerBytes && nameBytes(c, "._:/-")
}

// Heartbeat records that claimer, which claims from queues, is alive now
// (server clock), in each queue's {T}:q:Q:claimers. Call it at least
// every ttl/5 of the ttl given to RecoverDead (consumer.KeepAlive: every
// ttl/10): RecoverDead counts a dead claimer's sends in flight from its
// last beat + ttl/5. Errors: ErrInvalid for a bad claimer id or queue, or
// no queue; the server's.
func (s *Store) Heartbeat(ctx context.Context, claimer string, queues ...string) error {
	if !validClaimer(claimer) {
		return fmt.Errorf("%w: heartbeat: claimer %q: want 1..%d of [A-Za-z0-9._:/-]", ErrInvalid, claimer, MaxClaimerBytes)
	}
	keys, args, err := s.livenessCall("heartbeat", queues, "beat", claimer)
	if err != nil {
		return err
	}
	if err := s.scripts.recover.Exec(ctx, s.c, keys, args).Error(); err != nil {
		return fmt.Errorf("lanes: heartbeat: %w", err)
	}
	return nil
}

// RecoverDead recovers the leases, in queues, of every claimer of those
// queues whose last heartbeat there is older than ttl (at most 16 a queue
// a call): each such lease ends now, so the next claim's maintenance puts
// its job back on its lane as an expired lease would be (one attempt
// counted; the job dead-lettered at its queue's MaxAttempts), idle claimers
// are woken, and the claimer is forgotten in that queue (a claimer that
// beats again later is known again). Its send in flight is counted in the
// send logs (the global rate, the lane's pace) at the claimer's last beat
// + ttl/5, when it had stopped (it beats at least that often, see
// Heartbeat), not at the reclaim, so the lane's pace does not hold the
// job back a further period after the recovery. A claimer silent for less
// than ttl (slow, or frozen briefly) keeps its leases; its late settle of
// a recovered lease is refused (ErrStaleLease) once the job was reclaimed.
// It returns how many leases it
// recovered. O(1) a queue while no claimer is dead. Errors: ErrInvalid for
// a bad queue, no queue, or a ttl under 1 ms; the server's.
func (s *Store) RecoverDead(ctx context.Context, ttl time.Duration, queues ...string) (int, error) {
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("%w: recover: ttl %v: want >= 1ms", ErrInvalid, ttl)
	}
	keys, args, err := s.livenessCall("recover", queues, "recover", ms(ttl))
	if err != nil {
		return 0, err
	}
	n, err := s.scripts.recover.Exec(ctx, s.c, keys, args).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("lanes: recover: %w", err)
	}
	return int(n), nil
}

// livenessCall is recover.lua's KEYS and ARGV for mode and its argument
// over queues (checked: 1..8 valid names).
func (s *Store) livenessCall(what string, queues []string, mode, arg string) ([]string, []string, error) {
	if len(queues) == 0 || len(queues) > 8 {
		return nil, nil, fmt.Errorf("%w: %s: want 1..8 queues, got %d", ErrInvalid, what, len(queues))
	}
	args := []string{mode, arg, s.keys.shared()}
	for _, q := range queues {
		if err := validQueue(q); err != nil {
			return nil, nil, err
		}
		args = append(args, s.keys.queue(q))
	}
	return []string{s.keys.queueKey(queues[0], "claimers")}, args, nil
}
