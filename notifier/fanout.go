package notifier

import (
	"context"
	"errors"
	"fmt"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
)

// fanout enqueues the copies of one broadcast, batch after batch, on its
// queue, and keeps the broadcast's progress and recorded job ids in step:
// Broadcast's fan-out, after the progress was created.
//
// Between two batches' enqueues one round trip (trip) checks the earlier
// batch for a stop, counts its copies as queued and records the job ids of
// the next batch (before they are enqueued: a stop must find every copy
// that can reach a lane). It runs while the batch in between is being
// enqueued, so the server always has work: a batch's check runs during the
// next batch's enqueue, and a stop found there cancels both.
type fanout struct {
	n       *Notifier
	bc      string // the broadcast id
	queue   string // the copies' queue (broadcastQueue)
	key     string // the progress hash, {T}:n:bc:<bc>
	jobsKey string // the recorded job ids, {T}:n:bc:<bc>:jobs
	stopKey string // set by StopBroadcast, {T}:n:bc:<bc>:stop
	ttlMS   int64  // the recorded ids' time to live, ms (Config.ProgressTTL)
	tally   lanes.Tally
	active  int // copies to enqueue (active chats × parts)
	done    int // copies handed to Enqueue and not refused
}

// newFanout returns the fan-out of broadcast bc: active copies onto queue.
func (n *Notifier) newFanout(bc, queue string, active int) *fanout {
	key := n.keys.progress(bc)
	return &fanout{
		n: n, bc: bc, queue: queue, key: key, jobsKey: n.keys.jobs(bc), stopKey: n.keys.stop(bc),
		ttlMS: n.cfg.ProgressTTL.Milliseconds(), tally: lanes.Tally{Key: key, Field: fieldCancel}, active: active,
	}
}

// run enqueues the copies of a's active chats (encs from copyEncoders),
// Config.BatchSize chats per lanes Enqueue call, in a's order. A goroutine
// encodes the batches (one ahead) while this one enqueues them in order,
// one at a time, so a stop or a store error ends the fan-out within a
// batch; run returns once that goroutine has ended too (after a stop or an
// error it ends at its next batch). Errors: the store's, wrapped; batches
// before the failing one stay enqueued and counted.
func (f *fanout) run(ctx context.Context, a audience, encs []func(int64) []byte) error {
	batches := make(chan []lanes.Item, 1)
	quit, encoded := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(encoded)
		f.n.encodeBatches(a, encs, batches, quit)
	}()
	defer func() {
		close(quit)
		<-encoded
	}()
	return f.enqueueBatches(ctx, batches)
}

// encodeBatches sends the copies of a's active chats on batches,
// Config.BatchSize chats a batch, then closes batches; it stops early once
// quit is closed.
func (n *Notifier) encodeBatches(a audience, encs []func(int64) []byte, batches chan<- []lanes.Item, quit <-chan struct{}) {
	defer close(batches)
	items := make([]lanes.Item, 0, n.cfg.BatchSize*len(encs))
	chats := 0
	for i, chat := range a.targets {
		if a.inactive[i] {
			continue
		}
		items = n.appendCopies(items, chat, encs)
		if chats++; chats%n.cfg.BatchSize == 0 {
			select {
			case batches <- items:
			case <-quit:
				return
			}
			items = make([]lanes.Item, 0, n.cfg.BatchSize*len(encs))
		}
	}
	if len(items) > 0 {
		select {
		case batches <- items:
		case <-quit:
		}
	}
}

// tripped is a trip's outcome: the batch it recorded (nil after the last),
// whether the broadcast was stopped, the trip's error.
type tripped struct {
	next    []lanes.Item
	stopped bool
	err     error
}

// enqueueBatches enqueues batches in order until batches is closed, a stop
// or an error; each batch's enqueue runs beside the trip that checks the
// batch before it and records the batch after it (see fanout).
func (f *fanout) enqueueBatches(ctx context.Context, batches <-chan []lanes.Item) error {
	cur, ok := <-batches
	if !ok {
		return nil
	}
	if _, err := f.trip(ctx, false, 0, cur); err != nil {
		return err
	}
	var prev []lanes.Item // enqueued before cur
	added := 0            // prev's new copies, not yet counted as queued
	for cur != nil {
		ch := f.tripAhead(ctx, batches, prev != nil, added)
		res, err := f.enqueue(ctx, cur)
		t := <-ch
		if err != nil || t.err != nil {
			return f.failed(ctx, res.Added, err, t.err)
		}
		if t.stopped || res.Refused > 0 {
			return f.stop(ctx, res.Added, prev, cur)
		}
		prev, cur, added = cur, t.next, res.Added
	}
	stopped, err := f.trip(ctx, true, added, nil)
	if err != nil || !stopped {
		return err
	}
	return f.stop(ctx, 0, prev)
}

// enqueue enqueues one batch of copies, unless stopped: a chunk that runs
// after StopBroadcast set the stop key adds nothing, so no copy reaches a
// lane after the stop's cancel read the recorded ids. Errors: the store's,
// wrapped.
func (f *fanout) enqueue(ctx context.Context, items []lanes.Item) (lanes.EnqueueResult, error) {
	res, err := f.n.store.Enqueue(ctx, f.queue, items, lanes.Unless(f.stopKey), lanes.CountDead(f.n.deadTally(f.bc)))
	f.done += len(items) - res.Refused
	if err != nil {
		return res, fmt.Errorf("notifier: broadcast %s: %w", f.bc, err)
	}
	return res, nil
}

// tripAhead takes the next batch from batches (nil once the last was
// taken) and runs its trip (the stop check when check is set, added copies
// counted as queued) in a goroutine; its outcome arrives on the channel
// returned, which the caller always reads (joining the goroutine).
func (f *fanout) tripAhead(ctx context.Context, batches <-chan []lanes.Item, check bool, added int) <-chan tripped {
	ch := make(chan tripped, 1)
	go func() {
		next := <-batches
		stopped, err := f.trip(ctx, check, added, next)
		ch <- tripped{next, stopped, err}
	}()
	return ch
}

// queued counts added copies as queued.
func (f *fanout) queued(added int) valkey.Completed {
	return f.n.c.B().Hincrby().Key(f.key).Field(fieldQueued).Increment(int64(added)).Build()
}

// trip is one round trip between two enqueues: the stop check when check
// is set, added copies counted as queued, rec's ids recorded (each part
// only when there is one). It reports whether the broadcast was stopped.
// Errors: the server's, wrapped.
func (f *fanout) trip(ctx context.Context, check bool, added int, rec []lanes.Item) (bool, error) {
	var cmds valkey.Commands
	if check {
		cmds = append(cmds, f.n.c.B().Hexists().Key(f.key).Field(fieldStop).Build())
	}
	if added > 0 {
		cmds = append(cmds, f.queued(added))
	}
	if rec != nil {
		ids := make([]string, len(rec))
		for i, it := range rec {
			ids[i] = string(it.ID)
		}
		cmds = append(cmds, f.n.c.B().Rpush().Key(f.jobsKey).Element(ids...).Build(),
			f.n.c.B().Pexpire().Key(f.jobsKey).Milliseconds(f.ttlMS).Build())
	}
	if len(cmds) == 0 {
		return false, nil
	}
	out := f.n.c.DoMulti(ctx, cmds...)
	if err := f.firstError(out); err != nil {
		return false, err
	}
	if !check {
		return false, nil
	}
	return out[0].AsBool()
}

// failed ends a fan-out that met an error (enqueueErr, already wrapped,
// and/or tripErr): the added copies that reached the lanes stay counted
// as queued.
func (f *fanout) failed(ctx context.Context, added int, enqueueErr, tripErr error) error {
	err := enqueueErr
	if added > 0 {
		err = errors.Join(err, f.n.c.Do(ctx, f.queued(added)).Error())
	}
	return errors.Join(err, tripErr)
}

// stop ends a stopped fan-out: it cancels the enqueued batches whose check
// came too late (StopBroadcast may have read their ids before they reached
// their lanes), counts added copies not yet counted as queued, and counts
// the copies that will not be enqueued as cancelled. Errors: the store's,
// wrapped.
func (f *fanout) stop(ctx context.Context, added int, enqueued ...[]lanes.Item) error {
	var jobIDs []lanes.JobID
	for _, b := range enqueued {
		for _, it := range b {
			jobIDs = append(jobIDs, it.ID)
		}
	}
	if _, err := f.n.store.Cancel(ctx, f.queue, jobIDs, f.tally); err != nil {
		return fmt.Errorf("notifier: broadcast %s: cancel after a stop: %w", f.bc, err)
	}
	var cmds valkey.Commands
	if added > 0 {
		cmds = append(cmds, f.queued(added))
	}
	if rest := f.active - f.done; rest > 0 {
		cmds = append(cmds, f.n.c.B().Hincrby().Key(f.key).Field(fieldCancel).Increment(int64(rest)).Build())
	}
	if len(cmds) == 0 {
		return nil
	}
	return f.firstError(f.n.c.DoMulti(ctx, cmds...))
}

// firstError returns the first error among out, wrapped with the
// broadcast id, or nil.
func (f *fanout) firstError(out []valkey.ValkeyResult) error {
	for _, r := range out {
		if err := r.Error(); err != nil {
			return fmt.Errorf("notifier: broadcast %s: %w", f.bc, err)
		}
	}
	return nil
}
