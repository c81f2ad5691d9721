package notifier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// BroadcastIDPrefix brands broadcast ids: "bc_" + a 26-character ULID.
const BroadcastIDPrefix = "bc_"

func validBroadcastID(id string) bool {
	rest, ok := strings.CutPrefix(id, BroadcastIDPrefix)
	if !ok {
		return false
	}
	return lanes.JobID(lanes.JobIDPrefix+rest).Validate() == nil
}

// Broadcast enqueues msg to every chat of chatIDs on the notification queue
// (with msg.Paid, on the paid queue tgjob.QueuePaid: Progress.Paid; msg.Class
// is ignored: a broadcast is always a Notification), in batches of
// Config.BatchSize chats per lanes Enqueue call. Chat ids are resolved through
// migration aliases and deduplicated (first occurrence wins); chats marked
// inactive are skipped and counted as failed "inactive". It returns the
// broadcast id, whose Progress can be read while the worker delivers.
//
// With msg.Key, a repeated Broadcast returns the first one's id and fans out
// nothing (see Message.Key); a first call cut short (a crash, a store
// error) is not resumed by the repeat.
//
// Errors: ErrInvalid / ErrEmptyText (no chat, a chat id 0, a bad message;
// nothing written); the store's errors. On a store error the id is returned
// too: batches before the failing one stay enqueued and counted.
func (n *Notifier) Broadcast(ctx context.Context, chatIDs []int64, msg Message) (string, error) {
	if len(chatIDs) == 0 {
		return "", invalid("broadcast to no chat")
	}
	msg.Class = Notification
	queue := tgjob.QueueNotify
	if msg.Paid {
		queue = tgjob.QueuePaid
	}
	tmpl, err := n.jobs(chatIDs[0], msg)
	if err != nil {
		return "", err
	}
	seen := make(map[int64]bool, len(chatIDs))
	uniq := make([]int64, 0, len(chatIDs))
	for _, id := range chatIDs {
		if id == 0 {
			return "", invalid("broadcast: chat id 0")
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	targets, inactive, err := n.chats.ResolveMany(ctx, uniq)
	if err != nil {
		return "", fmt.Errorf("notifier: broadcast: %w", err)
	}
	bc := BroadcastIDPrefix + strings.TrimPrefix(string(n.minter.New()), lanes.JobIDPrefix)
	parts := len(tmpl)
	skipped := 0
	for _, in := range inactive {
		if in {
			skipped++
		}
	}
	key := n.keys.progress(bc)
	ttl := n.cfg.ProgressTTL
	fields := []string{fieldTotal, strconv.Itoa(len(targets) * parts), fieldQueued, "0", fieldSent, "0"}
	if skipped > 0 {
		fields = append(fields, fieldFailed+reasonSkip, strconv.Itoa(skipped*parts))
	}
	if msg.Paid {
		fields = append(fields, fieldPaid, "1")
	}
	if msg.Key != "" {
		// Record the key and create the progress in one atomic call: a
		// broadcast repeated with the key finds the first one's id.
		args := append([]string{bc, ms(n.cfg.KeyTTL), ms(ttl)}, fields...)
		prev, err := n.startScript.Exec(ctx, n.c, []string{key, n.keys.onceBC(msg.Key)}, args).ToString()
		if err != nil {
			return "", fmt.Errorf("notifier: broadcast %s: %w", bc, err)
		}
		if prev != "" {
			return prev, nil
		}
	} else {
		init := n.c.B().Hset().Key(key).FieldValue()
		for i := 0; i < len(fields); i += 2 {
			init = init.FieldValue(fields[i], fields[i+1])
		}
		for _, r := range n.c.DoMulti(ctx, init.Build(), n.c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build()) {
			if err := r.Error(); err != nil {
				return "", fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
	}
	jobsKey, stopKey := n.keys.jobs(bc), n.keys.stop(bc)
	active := (len(targets) - skipped) * parts // copies to enqueue
	// The template's JSON is encoded once per part; each chat only splices
	// in its id.
	encs := make([]func(int64) []byte, len(tmpl))
	for i, j := range tmpl {
		j.Broadcast = bc
		if encs[i], err = j.ChatEncoder(); err != nil {
			return bc, err
		}
	}
	// A goroutine encodes the batches (one ahead) while this one enqueues
	// them in order, one at a time, so a stop or a store error ends the
	// fan-out within a batch.
	batches := make(chan []lanes.Item, 1)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		defer close(batches)
		items := make([]lanes.Item, 0, n.cfg.BatchSize*len(tmpl))
		chats := 0
		for i, chat := range targets {
			if inactive[i] {
				continue
			}
			group := tgjob.Group(chat)
			for _, enc := range encs {
				items = append(items, lanes.Item{Group: group, ID: n.minter.New(), Payload: enc(chat)})
			}
			if chats++; chats%n.cfg.BatchSize == 0 {
				select {
				case batches <- items:
				case <-quit:
					return
				}
				items = make([]lanes.Item, 0, n.cfg.BatchSize*len(tmpl))
			}
		}
		if len(items) > 0 {
			select {
			case batches <- items:
			case <-quit:
			}
		}
	}()
	// Between two batches' enqueues one round trip checks the earlier batch
	// for a stop, counts its copies as queued and records the job ids of
	// the next batch (before they are enqueued: a stop must find every
	// copy that can reach a lane). It runs while the batch in between is
	// being enqueued, so the server always has work: a batch's check runs
	// during the next batch's enqueue, and a stop found there cancels both.
	var (
		done   int // copies handed to Enqueue
		ttlMS  = ttl.Milliseconds()
		tally  = lanes.Tally{Key: key, Field: fieldCancel}
		queued = func(added int) valkey.Completed {
			return n.c.B().Hincrby().Key(key).Field(fieldQueued).Increment(int64(added)).Build()
		}
	)
	// trip is that round trip: the stop check when check is set, queued
	// copies counted, rec's ids recorded (each part only when there is
	// one). It reports whether the broadcast was stopped.
	trip := func(check bool, added int, rec []lanes.Item) (bool, error) {
		var cmds valkey.Commands
		if check {
			cmds = append(cmds, n.c.B().Hexists().Key(key).Field(fieldStop).Build())
		}
		if added > 0 {
			cmds = append(cmds, queued(added))
		}
		if rec != nil {
			ids := make([]string, len(rec))
			for i, it := range rec {
				ids[i] = string(it.ID)
			}
			cmds = append(cmds, n.c.B().Rpush().Key(jobsKey).Element(ids...).Build(),
				n.c.B().Pexpire().Key(jobsKey).Milliseconds(ttlMS).Build())
		}
		if len(cmds) == 0 {
			return false, nil
		}
		out := n.c.DoMulti(ctx, cmds...)
		for _, r := range out {
			if err := r.Error(); err != nil {
				return false, fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
		if !check {
			return false, nil
		}
		return out[0].AsBool()
	}
	// stop ends a stopped fan-out: it cancels the enqueued batches whose
	// check came too late (StopBroadcast may have read their ids before
	// they reached their lanes), counts added copies not yet counted as
	// queued, and counts the copies that will not be enqueued as
	// cancelled.
	stop := func(added int, enqueued ...[]lanes.Item) error {
		var jobIDs []lanes.JobID
		for _, b := range enqueued {
			for _, it := range b {
				jobIDs = append(jobIDs, it.ID)
			}
		}
		if _, err := n.store.Cancel(ctx, queue, jobIDs, tally); err != nil {
			return fmt.Errorf("notifier: broadcast %s: cancel after a stop: %w", bc, err)
		}
		var cmds valkey.Commands
		if added > 0 {
			cmds = append(cmds, queued(added))
		}
		if rest := active - done; rest > 0 {
			cmds = append(cmds, n.c.B().Hincrby().Key(key).Field(fieldCancel).Increment(int64(rest)).Build())
		}
		if len(cmds) == 0 {
			return nil
		}
		for _, r := range n.c.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
		return nil
	}
	cur, ok := <-batches
	if !ok {
		return bc, nil
	}
	if _, err := trip(false, 0, cur); err != nil {
		return bc, err
	}
	type tripped struct {
		next    []lanes.Item
		stopped bool
		err     error
	}
	var prev []lanes.Item // enqueued before cur
	added := 0            // prev's new copies, not yet counted as queued
	for cur != nil {
		ch := make(chan tripped, 1)
		go func(check bool, added int) {
			next := <-batches // nil once the last batch was taken
			stopped, err := trip(check, added, next)
			ch <- tripped{next, stopped, err}
		}(prev != nil, added)
		// Unless stopped: a chunk that runs after StopBroadcast set the
		// stop key adds nothing, so no copy reaches a lane after the stop's
		// cancel read the recorded ids.
		res, err := n.store.Enqueue(ctx, queue, cur, lanes.Unless(stopKey))
		done += len(cur) - res.Refused
		t := <-ch
		if err != nil || t.err != nil {
			if err != nil {
				err = fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
			if res.Added > 0 { // what reached the lanes stays counted
				err = errors.Join(err, n.c.Do(ctx, queued(res.Added)).Error())
			}
			return bc, errors.Join(err, t.err)
		}
		if t.stopped || res.Refused > 0 {
			return bc, stop(res.Added, prev, cur)
		}
		prev, cur, added = cur, t.next, res.Added
	}
	stopped, err := trip(true, added, nil)
	if err != nil || !stopped {
		return bc, err
	}
	return bc, stop(0, prev)
}

// StopBroadcast stops broadcast id: every copy still waiting on its lane
// is removed (lanes Store.Cancel over the job ids the broadcast recorded,
// {T}:n:bc:<id>:jobs, in chunks: O(copies), no scan) and counted as
// Cancelled in the same atomic call; copies in flight are delivered or
// fail as usual and are counted then, so nothing is counted twice and,
// once they settle, Sent + Failed + Cancelled = Total. A Broadcast still
// fanning out enqueues nothing more (its batches are enqueued with the
// lanes.Unless option on the stop key {T}:n:bc:<id>:stop, set here before
// the recorded ids are read): no copy is left on a lane once StopBroadcast
// returns; the fan-out sees the stop within its next batch, cancels the
// batches it enqueued since and counts the copies it did not enqueue as
// cancelled. Calling it again
// cancels nothing more. It returns the progress after the stop (Stopped
// set). Errors: ErrInvalid for a malformed id, ErrUnknownBroadcast when
// nothing is stored (never created, or expired), the server's error.
func (n *Notifier) StopBroadcast(ctx context.Context, id string) (Progress, error) {
	if !validBroadcastID(id) {
		return Progress{}, invalid(fmt.Sprintf("broadcast id %q", id))
	}
	key := n.keys.progress(id)
	// HSET only an existing progress hash: an expired broadcast is not
	// resurrected.
	ttl, err := n.c.Do(ctx, n.c.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil {
		return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
	}
	if ttl == -2 {
		return Progress{}, fmt.Errorf("%w: %s", ErrUnknownBroadcast, id)
	}
	if ttl < 1 {
		ttl = n.cfg.ProgressTTL.Milliseconds()
	}
	// The stop field (read by Progress and by the fan-out between batches)
	// and the stop key (every later fan-out chunk refuses to enqueue) are
	// both set before the recorded ids are read below: a copy not among
	// them never reaches a lane.
	for _, r := range n.c.DoMulti(ctx,
		n.c.B().Hset().Key(key).FieldValue().FieldValue(fieldStop, "1").Build(),
		n.c.B().Set().Key(n.keys.stop(id)).Value("1").PxMilliseconds(ttl).Build(),
	) {
		if err := r.Error(); err != nil {
			return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
		}
	}
	tally := lanes.Tally{Key: key, Field: fieldCancel}
	const chunk = 2000
	for start := int64(0); ; start += chunk {
		ids, err := n.c.Do(ctx, n.c.B().Lrange().Key(n.keys.jobs(id)).Start(start).Stop(start+chunk-1).Build()).AsStrSlice()
		if err != nil {
			return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
		}
		if len(ids) == 0 {
			break
		}
		jobIDs := make([]lanes.JobID, len(ids))
		for i, s := range ids {
			jobIDs[i] = lanes.JobID(s)
		}
		// A paid broadcast's copies are on the paid queue, and on the
		// notify queue once ContinueFree moved them (both are cancelled:
		// an id not on a queue is counted gone there).
		for _, q := range []string{tgjob.QueuePaid, tgjob.QueueNotify} {
			if _, err := n.store.Cancel(ctx, q, jobIDs, tally); err != nil {
				return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
			}
		}
		if len(ids) < chunk {
			break
		}
	}
	// A stop ends a halted paid part too: the paid queue runs again for
	// the next paid broadcast.
	if err := n.clearHalt(ctx, id); err != nil {
		return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
	}
	return n.Progress(ctx, id)
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
