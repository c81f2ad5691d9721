package lanes

import (
	"context"
	"fmt"
	"slices"
)

// PauseQueue stops every claim from serving queue until ResumeQueue (an
// operator's pause, kept in Valkey, so every claimer stops at its next
// claim): jobs are still enqueued, leases in flight still settle or expire,
// and the other queues are served as before (a claim asking for several
// queues serves the next). why (not empty, e.g. "paused by the console")
// is what PausedQueues reads back; pausing a paused queue replaces it. It
// reports whether the queue was not paused before. Errors: ErrInvalid for
// a bad queue name or an empty why; the server's, wrapped.
func (in *Inspector) PauseQueue(ctx context.Context, queue, why string) (bool, error) {
	if err := validQueue(queue); err != nil {
		return false, err
	}
	if why == "" {
		return false, fmt.Errorf("%w: pause of queue %q without a why", ErrInvalid, queue)
	}
	n, err := in.scripts.qpause.Exec(ctx, in.c, []string{in.keys.qpause(), in.keys.ring(queue)},
		[]string{in.keys.shared(), "pause", queue, why}).AsInt64()
	if err != nil {
		return false, fmt.Errorf("lanes: pause queue %q: %w", queue, err)
	}
	return n == 1, nil
}

// ResumeQueue ends queue's PauseQueue and wakes idle claimers; it reports
// whether the queue was paused. Errors: ErrInvalid for a bad queue name;
// the server's, wrapped.
func (in *Inspector) ResumeQueue(ctx context.Context, queue string) (bool, error) {
	if err := validQueue(queue); err != nil {
		return false, err
	}
	n, err := in.scripts.qpause.Exec(ctx, in.c, []string{in.keys.qpause(), in.keys.ring(queue)},
		[]string{in.keys.shared(), "resume", queue}).AsInt64()
	if err != nil {
		return false, fmt.Errorf("lanes: resume queue %q: %w", queue, err)
	}
	return n == 1, nil
}

// PausedQueues returns the paused queues (PauseQueue) and why each was
// paused. Errors: the server's, wrapped.
func (in *Inspector) PausedQueues(ctx context.Context) (map[string]string, error) {
	m, err := in.c.Do(ctx, in.c.B().Hgetall().Key(in.keys.qpause()).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("lanes: paused queues: %w", err)
	}
	return m, nil
}

// PauseGroup parks group's lane in every queue of the store until
// ResumeGroup (Park with a negative duration): none of its jobs is claimed,
// whatever queue, while every other lane keeps flowing; a 429's later,
// finite park cannot shorten it. Errors: ErrInvalid for a bad group; the
// server's, wrapped (the queues before the failing one are paused).
func (in *Inspector) PauseGroup(ctx context.Context, group string) error {
	for _, q := range in.queueNames() {
		if _, err := in.Park(ctx, q, group, -1); err != nil {
			return err
		}
	}
	return nil
}

// ResumeGroup ends any park of group's lane in every queue of the store
// (ResumeLane each: a PauseGroup, a 429's, a pace's); the lane rejoins
// each ring where it has work. Errors: as ResumeLane.
func (in *Inspector) ResumeGroup(ctx context.Context, group string) error {
	for _, q := range in.queueNames() {
		if err := in.ResumeLane(ctx, q, group); err != nil {
			return err
		}
	}
	return nil
}

// PausedGroups returns at most max lanes of queue parked until resumed
// (PauseGroup, or Park with a negative duration), in byte order. Errors:
// ErrInvalid for a bad queue name; the server's, wrapped.
func (in *Inspector) PausedGroups(ctx context.Context, queue string, max int) ([]string, error) {
	if err := validQueue(queue); err != nil {
		return nil, err
	}
	gs, err := in.c.Do(ctx, in.c.B().Zrangebyscore().Key(in.keys.queueKey(queue, "parked")).Min("+inf").Max("+inf").
		Limit(0, int64(max)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("lanes: paused groups of %q: %w", queue, err)
	}
	slices.Sort(gs)
	return gs, nil
}

// queueNames are the store's queues (WithQueue), sorted.
func (in *Inspector) queueNames() []string {
	names := make([]string, 0, len(in.opt.queues))
	for q := range in.opt.queues {
		names = append(names, q)
	}
	slices.Sort(names)
	return names
}
