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
	ID       JobID
	Group    string
	Payload  []byte
	Attempts int
	Reason   string
	// At is when it was dead-lettered (server clock).
	At time.Time
}

func isNil(err error) bool { return valkey.IsValkeyNil(err) }

// DeadLetters lists up to n dead letters of queue, newest first.
func (s *Store) DeadLetters(ctx context.Context, queue string, n int) ([]DeadLetter, error) {
	if err := validQueue(queue); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: dead letters: n %d: want >= 1", ErrInvalid, n)
	}
	ids, err := s.c.Do(ctx, s.c.B().Zrange().Key(s.keys.queueKey(queue, "dead")).Min("+inf").Max("-inf").Byscore().Rev().Limit(0, int64(n)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("lanes: dead letters: %w", err)
	}
	cmds := make(valkey.Commands, 0, len(ids))
	for _, id := range ids {
		cmds = append(cmds, s.c.B().Hmget().Key(s.keys.job(queue, JobID(id))).Field("g", "p", "a", "r", "d").Build())
	}
	out := make([]DeadLetter, 0, len(ids))
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		v, err := r.ToArray()
		if err != nil {
			return nil, fmt.Errorf("lanes: dead letters: %w", err)
		}
		str := func(j int) string { s, _ := v[j].ToString(); return s }
		att, _ := strconv.Atoi(str(2))
		at, _ := strconv.ParseInt(str(4), 10, 64)
		out = append(out, DeadLetter{
			ID: JobID(ids[i]), Group: str(0), Payload: []byte(str(1)),
			Attempts: att, Reason: str(3), At: time.UnixMilli(at),
		})
	}
	return out, nil
}

// RequeueDead puts dead letters back on their lanes with attempts reset to
// 0; ids not in the dead-letter set are skipped. It returns how many were
// requeued.
func (s *Store) RequeueDead(ctx context.Context, queue string, ids ...JobID) (int, error) {
	if err := validQueue(queue); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	keys, args := s.header(queue, len(ids))
	for _, id := range ids {
		if err := id.Validate(); err != nil {
			return 0, err
		}
		args = append(args, string(id))
	}
	n, err := s.scripts.requeue.Exec(ctx, s.c, keys, args).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("lanes: requeue dead: %w", err)
	}
	return int(n), nil
}

// PurgeDead deletes dead letters older than age (by their dead-letter
// time on the server clock), at most n per call, and returns how many it
// deleted.
func (s *Store) PurgeDead(ctx context.Context, queue string, age time.Duration, n int) (int, error) {
	if err := validQueue(queue); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("%w: purge dead: n %d: want >= 1", ErrInvalid, n)
	}
	now, err := s.ServerTime(ctx)
	if err != nil {
		return 0, err
	}
	cut := strconv.FormatInt(now.Add(-age).UnixMilli(), 10)
	deadKey := s.keys.queueKey(queue, "dead")
	ids, err := s.c.Do(ctx, s.c.B().Zrange().Key(deadKey).Min("-inf").Max(cut).Byscore().Limit(0, int64(n)).Build()).AsStrSlice()
	if err != nil {
		return 0, fmt.Errorf("lanes: purge dead: %w", err)
	}
	deleted := 0
	for _, id := range ids {
		// ZREM first: a concurrent RequeueDead wins and keeps the job.
		removed, err := s.c.Do(ctx, s.c.B().Zrem().Key(deadKey).Member(id).Build()).AsInt64()
		if err != nil {
			return deleted, fmt.Errorf("lanes: purge dead: %w", err)
		}
		if removed == 1 {
			if err := s.c.Do(ctx, s.c.B().Del().Key(s.keys.job(queue, JobID(id))).Build()).Error(); err != nil {
				return deleted, fmt.Errorf("lanes: purge dead: %w", err)
			}
			deleted++
		}
	}
	return deleted, nil
}

// ServerTime returns the server's clock (TIME), the clock every lease, park
// and pace uses.
func (s *Store) ServerTime(ctx context.Context) (time.Time, error) {
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
