package lanes

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

func (s *core) laneOp(ctx context.Context, queue, group, op, val string) (int64, error) {
	if err := validQueue(queue); err != nil {
		return 0, err
	}
	if err := validGroup(group); err != nil {
		return 0, err
	}
	keys, args := s.header(queue, 3)
	args = append(args, op, group, val)
	v, err := s.scripts.lane.Exec(ctx, s.c, keys, args).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("lanes: %s %q: %w", op, group, err)
	}
	return v, nil
}

// SetWeight sets group's weight w (1..1000; 1 is the default and is stored
// as no entry, the hash going with its last entry) in one write, for the
// group's lane in every queue of the store (one store-wide hash read by
// every queue's claim): each turn of a queue's rotation serves the lane up
// to w jobs, so while the global rate binds a lane of weight w gets about w
// times the share of a lane of weight 1 among that queue's lanes. A new
// weight starts a new turn in every queue configured with WithQueue (in any
// other, the turn in progress is capped at the new weight). Errors:
// ErrInvalid for w outside 1..1000 or a bad group (nothing written).
func (in *Inspector) SetWeight(ctx context.Context, group string, w int) error {
	if err := validWeight(w); err != nil {
		return err
	}
	if err := validGroup(group); err != nil {
		return err
	}
	keys, args := in.header("_", 3+len(in.opt.queues))
	args = append(args, "weight", group, strconv.Itoa(w))
	for q := range in.opt.queues {
		args = append(args, in.keys.queue(q))
	}
	if err := in.scripts.lane.Exec(ctx, in.c, keys, args).Error(); err != nil {
		return fmt.Errorf("lanes: weight %q: %w", group, err)
	}
	return nil
}

// Weight returns group's weight, the same in every queue (1 when never set).
func (in *Inspector) Weight(ctx context.Context, group string) (int, error) {
	if err := validGroup(group); err != nil {
		return 0, err
	}
	v, err := in.c.Do(ctx, in.c.B().Hget().Key(in.keys.weight()).Field(group).Build()).AsInt64()
	if isNil(err) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("lanes: weight %q: %w", group, err)
	}
	return int(v), nil
}

// Weights returns every non-default weight of the store, group -> weight
// (each applies to the group's lane in every queue).
func (in *Inspector) Weights(ctx context.Context) (map[string]int, error) {
	m, err := in.c.Do(ctx, in.c.B().Hgetall().Key(in.keys.weight()).Build()).AsIntMap()
	if err != nil {
		return nil, fmt.Errorf("lanes: weights: %w", err)
	}
	out := make(map[string]int, len(m))
	for g, w := range m {
		out[g] = int(w)
	}
	return out, nil
}

// SetLaneLimit sets lane group's glimit: the most jobs of the lane in
// flight at once (n >= 1), or back to the queue default with n = 0.
func (in *Inspector) SetLaneLimit(ctx context.Context, queue, group string, n int) error {
	if n < 0 {
		return fmt.Errorf("%w: lane limit %d: want >= 0", ErrInvalid, n)
	}
	_, err := in.laneOp(ctx, queue, group, "glimit", strconv.Itoa(n))
	return err
}

// SetLanePace overrides lane group's pace (shared by every queue of the
// store); the zero Pace restores the default and rules.
func (in *Inspector) SetLanePace(ctx context.Context, group string, p Pace) error {
	if err := validPace(p); err != nil {
		return err
	}
	val := ""
	if p.Limit > 0 {
		val = strconv.Itoa(p.Limit) + ":" + ms(p.Period)
	}
	if err := validGroup(group); err != nil {
		return err
	}
	keys, args := in.header("_", 3)
	args = append(args, "pace", group, val)
	if err := in.scripts.lane.Exec(ctx, in.c, keys, args).Error(); err != nil {
		return fmt.Errorf("lanes: pace %q: %w", group, err)
	}
	return nil
}

// Park stops lane group of queue from being served for d from now (server
// clock), e.g. for a 429's retry_after: no job of the lane is claimed before
// then, however long d is (no cap), while every other lane keeps flowing. A
// park is only ever extended, never shortened, by a later Park; d < 0 parks
// until ResumeLane. It returns the end of the park in force, which a shorter
// Park leaves as it was (server clock; zero time for an indefinite park).
// Idle claimers are woken when the park is the queue's earliest, so they
// learn its due time. A lane that is in the ring leaves it lazily: the next
// claim that reaches it drops it in O(1), at the cost of one lane visit; so
// on a 429, Park the lane before releasing the job, and it never rejoins.
func (in *Inspector) Park(ctx context.Context, queue, group string, d time.Duration) (time.Time, error) {
	val := "-1"
	if d >= 0 {
		val = ms(d)
	}
	v, err := in.laneOp(ctx, queue, group, "park", val)
	if err != nil || v < 0 {
		return time.Time{}, err
	}
	return time.UnixMilli(v), nil
}

// ResumeLane ends any park of lane group (a 429 park, a pace park or an
// admin pause); the lane rejoins the ring if it has work.
func (in *Inspector) ResumeLane(ctx context.Context, queue, group string) error {
	_, err := in.laneOp(ctx, queue, group, "resume", "")
	return err
}

// Pause stops every queue of the store for d from now (server clock), e.g.
// for a flood signal that is global; d < 0 pauses until Resume. A pause is
// only extended, never shortened, by a later Pause. It is PauseWhy with why
// "paused".
func (in *Inspector) Pause(ctx context.Context, d time.Duration) error {
	return in.PauseWhy(ctx, d, "paused")
}

// PauseWhy is Pause recording why (e.g. "401 unauthorized"), which Paused
// reads back in every process: the pause that extends the current one
// writes its why, one that does not leaves it. Errors: ErrInvalid for
// 0 <= d < 1 ms or an empty why; the server's, wrapped.
func (in *Inspector) PauseWhy(ctx context.Context, d time.Duration, why string) error {
	val := "-1"
	if d >= 0 {
		if d < time.Millisecond {
			return fmt.Errorf("%w: pause %v: want >= 1ms or < 0", ErrInvalid, d)
		}
		val = ms(d)
	}
	if why == "" {
		return fmt.Errorf("%w: pause without a why", ErrInvalid)
	}
	return in.pauseCall(ctx, val, why)
}

// GlobalPause is the store's global pause as Paused reads it.
type GlobalPause struct {
	// Left is 0 when the store is not paused, -1 when it is paused until
	// Resume, otherwise the pause's remaining time (ms precision, server
	// clock).
	Left time.Duration
	// Why is the why of the pause's last extension (PauseWhy), "" when
	// not paused.
	Why string
}

// Paused reads the global pause (see Pause) by the server's clock, its time
// left and its why in one pipeline. Errors: the server's, wrapped.
func (in *Inspector) Paused(ctx context.Context) (GlobalPause, error) {
	k := in.keys.pause()
	res := in.c.DoMulti(ctx, in.c.B().Pttl().Key(k).Build(), in.c.B().Get().Key(k).Build())
	ttl, err := res[0].AsInt64()
	if err != nil {
		return GlobalPause{}, fmt.Errorf("lanes: read the pause: %w", err)
	}
	why, err := res[1].ToString()
	if err != nil && !isNil(err) {
		return GlobalPause{}, fmt.Errorf("lanes: read the pause: %w", err)
	}
	switch {
	case ttl == -2: // no pause key (it may have expired between the two reads)
		return GlobalPause{}, nil
	case ttl == -1: // paused until Resume
		return GlobalPause{Left: -1, Why: why}, nil
	}
	return GlobalPause{Left: time.Duration(ttl) * time.Millisecond, Why: why}, nil
}

// Resume ends a global pause at once.
func (in *Inspector) Resume(ctx context.Context) error { return in.pauseCall(ctx, "0", "") }

func (s *core) pauseCall(ctx context.Context, val, why string) error {
	longest := s.opt.window
	for _, q := range s.opt.queues {
		longest = max(longest, q.Window)
	}
	err := s.scripts.pause.Exec(ctx, s.c, []string{s.keys.pause()}, []string{s.keys.shared(), val, why, ms(longest)}).Error()
	if err != nil {
		return fmt.Errorf("lanes: pause: %w", err)
	}
	return nil
}

// drainChunk bounds the jobs one drain script call moves.
const drainChunk = 1000

// DeadLane dead-letters every pending job of lane group with reason, in
// chunks of 1,000 jobs per atomic call (e.g. a chat that blocked the bot).
// Jobs in flight are not touched. Each job that carries a DeadTally
// (CountDead at its enqueue) is counted in it by the call that
// dead-letters it, under the code of CountedAs (else reason). It returns
// the ids of exactly the jobs it dead-lettered, in lane order (on an
// error, those of the chunks done), so the caller can account for those
// jobs and no others (DeadLetters with DeadQuery.IDs reads them back).
// Errors: ErrInvalid for a bad queue or group or an empty CountedAs code;
// the server's, wrapped.
func (in *Inspector) DeadLane(ctx context.Context, queue, group, reason string, opts ...DeadLaneOption) ([]JobID, error) {
	var cfg deadLaneConfig
	for _, o := range opts {
		o(&cfg)
	}
	code := reason
	if cfg.set {
		if cfg.code == "" {
			return nil, fmt.Errorf("%w: dead lane %q: CountedAs an empty code", ErrInvalid, group)
		}
		code = cfg.code
	}
	return in.drain(ctx, queue, group, "dead", reason, code)
}

// MoveLane moves every pending job of lane from to lane to, in order, in
// chunks of 1,000 per atomic call, then moves from's glimit in queue, and
// from's weight and pace override (the group's in every queue), to to (e.g.
// a Telegram group upgraded to a supergroup): the first queue moved carries
// the weight and pace, moving the other queues finds them gone. Jobs in
// flight are not touched: release them first. It returns how many jobs moved.
func (in *Inspector) MoveLane(ctx context.Context, queue, from, to string) (int, error) {
	if err := validGroup(to); err != nil {
		return 0, err
	}
	if from == to {
		return 0, fmt.Errorf("%w: move lane %q onto itself", ErrInvalid, from)
	}
	ids, err := in.drain(ctx, queue, from, "move", to, "")
	return len(ids), err
}

// drain runs drain.lua in chunks until the lane is empty and returns the
// ids it moved; code is what a dead-lettered job's dead tally counts it
// under (mode "dead").
func (s *core) drain(ctx context.Context, queue, group, mode, arg, code string) ([]JobID, error) {
	if err := validQueue(queue); err != nil {
		return nil, err
	}
	if err := validGroup(group); err != nil {
		return nil, err
	}
	var ids []JobID
	for {
		keys, args := s.header(queue, 5)
		args = append(args, mode, group, arg, strconv.Itoa(drainChunk), code)
		v, err := s.scripts.drain.Exec(ctx, s.c, keys, args).ToArray()
		if err != nil {
			return ids, fmt.Errorf("lanes: %s lane %q: %w", mode, group, err)
		}
		if len(v) < 2 {
			return ids, fmt.Errorf("lanes: %s lane %q: malformed reply", mode, group)
		}
		moved, err1 := v[0].AsInt64()
		remaining, err2 := v[1].AsInt64()
		if err1 != nil || err2 != nil || int(moved) != len(v)-2 {
			return ids, fmt.Errorf("lanes: %s lane %q: malformed reply", mode, group)
		}
		for _, m := range v[2:] {
			id, err := m.ToString()
			if err != nil {
				return ids, fmt.Errorf("lanes: %s lane %q: malformed reply", mode, group)
			}
			ids = append(ids, JobID(id))
		}
		if remaining == 0 || moved == 0 {
			return ids, nil
		}
	}
}
