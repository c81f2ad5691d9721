package lanes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

// DeadLetter is a job in the dead-letter set.
type DeadLetter struct {
	ID      JobID
	Group   string
	Payload []byte
	// Attempts is how many claims of it failed (Nack, an expired lease, and
	// Dead's own); 0 for a job dead-lettered unclaimed (DeadLane).
	Attempts int
	Reason   string
	// At is when it was dead-lettered (server clock).
	At time.Time
}

func isNil(err error) bool { return valkey.IsValkeyNil(err) }

// DeadQuery selects the dead letters DeadLetters reads: either the given
// IDs or the Newest n.
type DeadQuery struct {
	// IDs, when not empty, are read in the order given, 1,000 per round
	// trip; ids that are not dead letters (never were, requeued, purged)
	// are left out. Newest is then ignored.
	IDs []JobID
	// Newest, when IDs is empty, lists up to this many dead letters, newest
	// first (>= 1).
	Newest int
	// Skip, with Newest, leaves out the Skip newest first (a page: Skip 20,
	// Newest 20 is the second page of 20). The set is ranked by time, so a
	// page costs O(log n + Newest) whatever Skip is (>= 0).
	Skip int
}

// DeadLetters reads dead letters of queue: those named by q.IDs (e.g. the
// ids DeadLane returned), or else the q.Newest newest, newest first.
// Errors: ErrInvalid for a bad queue or id, or for no IDs and Newest < 1;
// the server's error (with the dead letters read so far).
func (in *Inspector) DeadLetters(ctx context.Context, queue string, q DeadQuery) ([]DeadLetter, error) {
	if len(q.IDs) > 0 {
		return in.deadByID(ctx, queue, q.IDs)
	}
	return in.deadNewest(ctx, queue, q.Skip, q.Newest)
}

// deadNewest lists up to n dead letters of queue, newest first, after the
// skip newest.
func (s *core) deadNewest(ctx context.Context, queue string, skip, n int) ([]DeadLetter, error) {
	if err := validQueue(queue); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: dead letters: n %d: want >= 1", ErrInvalid, n)
	}
	if skip < 0 {
		return nil, fmt.Errorf("%w: dead letters: skip %d: want >= 0", ErrInvalid, skip)
	}
	// By rank (ZRANGE start stop REV): O(log n + shown), however deep the page.
	ids, err := s.c.Do(ctx, s.c.B().Zrange().Key(s.keys.queueKey(queue, "dead")).Min(strconv.Itoa(skip)).Max(strconv.Itoa(skip+n-1)).Rev().Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("lanes: dead letters: %w", err)
	}
	jobIDs := make([]JobID, len(ids))
	for i, id := range ids {
		jobIDs[i] = JobID(id)
	}
	return s.loadDead(ctx, queue, jobIDs)
}

// deadByID reads the dead letters of queue with the given ids, in the order
// given, 1,000 per round trip; ids that are not dead letters are left out.
func (s *core) deadByID(ctx context.Context, queue string, ids []JobID) ([]DeadLetter, error) {
	if err := validQueueAndIDs(queue, ids); err != nil {
		return nil, err
	}
	const chunk = 1000
	var out []DeadLetter
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		scores, err := s.c.Do(ctx, s.c.B().Zmscore().Key(s.keys.queueKey(queue, "dead")).Member(jobStrings(part)...).Build()).ToArray()
		if err != nil {
			return out, fmt.Errorf("lanes: dead letters: %w", err)
		}
		dead := make([]JobID, 0, len(part))
		for i, sc := range scores {
			if !sc.IsNil() {
				dead = append(dead, part[i])
			}
		}
		dls, err := s.loadDead(ctx, queue, dead)
		out = append(out, dls...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func jobStrings(ids []JobID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// loadDead reads the job hashes of dead letters ids in one round trip;
// a hash gone meanwhile (purged) is left out.
func (s *core) loadDead(ctx context.Context, queue string, ids []JobID) ([]DeadLetter, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make(valkey.Commands, 0, len(ids))
	for _, id := range ids {
		cmds = append(cmds, s.c.B().Hmget().Key(s.keys.job(queue, id)).Field("g", "p", "a", "r", "d").Build())
	}
	out := make([]DeadLetter, 0, len(ids))
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		v, err := r.ToArray()
		if err != nil {
			return out, fmt.Errorf("lanes: dead letters: %w", err)
		}
		if v[0].IsNil() {
			continue
		}
		str := func(j int) string { s, _ := v[j].ToString(); return s }
		att, _ := strconv.Atoi(str(2))
		at, _ := strconv.ParseInt(str(4), 10, 64)
		out = append(out, DeadLetter{
			ID: ids[i], Group: str(0), Payload: []byte(str(1)),
			Attempts: att, Reason: str(3), At: time.UnixMilli(at),
		})
	}
	return out, nil
}

// RequeueDead puts dead letters back on their lanes with attempts reset to
// 0; ids not in the dead-letter set are skipped. It returns how many were
// requeued.
func (in *Inspector) RequeueDead(ctx context.Context, queue string, ids ...JobID) (int, error) {
	if err := validQueue(queue); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	keys, args := in.header(queue, len(ids))
	for _, id := range ids {
		if err := id.Validate(); err != nil {
			return 0, err
		}
		args = append(args, string(id))
	}
	n, err := in.scripts.requeue.Exec(ctx, in.c, keys, args).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("lanes: requeue dead: %w", err)
	}
	return int(n), nil
}

// PurgeDead deletes dead letters older than age (by their dead-letter
// time on the server clock), at most n per call, and returns how many it
// deleted.
func (in *Inspector) PurgeDead(ctx context.Context, queue string, age time.Duration, n int) (int, error) {
	if err := validQueue(queue); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("%w: purge dead: n %d: want >= 1", ErrInvalid, n)
	}
	now, err := in.serverTime(ctx)
	if err != nil {
		return 0, err
	}
	cut := strconv.FormatInt(now.Add(-age).UnixMilli(), 10)
	deadKey := in.keys.queueKey(queue, "dead")
	ids, err := in.c.Do(ctx, in.c.B().Zrange().Key(deadKey).Min("-inf").Max(cut).Byscore().Limit(0, int64(n)).Build()).AsStrSlice()
	if err != nil {
		return 0, fmt.Errorf("lanes: purge dead: %w", err)
	}
	jobIDs := make([]JobID, len(ids))
	for i, id := range ids {
		jobIDs[i] = JobID(id)
	}
	return in.deleteDead(ctx, queue, jobIDs)
}

// DeleteDead deletes the dead letters of queue with the given ids (their
// jobs are gone for good); ids that are not dead letters (requeued or
// purged meanwhile, never dead) are skipped. It returns how many it
// deleted. Errors: ErrInvalid for a bad queue or id (nothing deleted); the
// server's error, with the count deleted so far.
func (in *Inspector) DeleteDead(ctx context.Context, queue string, ids ...JobID) (int, error) {
	if err := validQueueAndIDs(queue, ids); err != nil {
		return 0, err
	}
	return in.deleteDead(ctx, queue, ids)
}

func (in *Inspector) deleteDead(ctx context.Context, queue string, ids []JobID) (int, error) {
	deadKey := in.keys.queueKey(queue, "dead")
	deleted := 0
	for _, id := range ids {
		// ZREM first: a concurrent RequeueDead wins and keeps the job.
		removed, err := in.c.Do(ctx, in.c.B().Zrem().Key(deadKey).Member(string(id)).Build()).AsInt64()
		if err != nil {
			return deleted, fmt.Errorf("lanes: purge dead: %w", err)
		}
		if removed == 1 {
			if err := in.c.Do(ctx, in.c.B().Del().Key(in.keys.job(queue, id)).Build()).Error(); err != nil {
				return deleted, fmt.Errorf("lanes: purge dead: %w", err)
			}
			deleted++
		}
	}
	return deleted, nil
}

// serverTime returns the server's clock (TIME), the clock every lease, park
// and pace uses.
func (s *core) serverTime(ctx context.Context) (time.Time, error) {
	v, err := s.c.Do(ctx, s.c.B().Time().Build()).AsStrSlice()
	if err != nil {
		return time.Time{}, fmt.Errorf("lanes: time: %w", err)
	}
	if len(v) != 2 {
		return time.Time{}, errors.New("lanes: time: malformed reply")
	}
	sec, err1 := strconv.ParseInt(v[0], 10, 64)
	usec, err2 := strconv.ParseInt(v[1], 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, errors.New("lanes: time: malformed reply")
	}
	return time.Unix(sec, usec*1000), nil
}
