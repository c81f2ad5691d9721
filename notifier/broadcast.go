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
// (msg.Class is ignored: a broadcast is always a Notification), in batches of
// Config.BatchSize chats per EnqueueBatch. Chat ids are resolved through
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
	jobsKey := n.keys.jobs(bc)
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
	// fan-out before the next batch.
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
	// One round trip between two batches' enqueues: the stop check and the
	// queued count of the batch just enqueued, and the record of the next
	// batch's job ids (before they are enqueued: a stop must find every
	// copy that can reach a lane).
	var (
		prev   []lanes.Item // enqueued, not yet checked for a stop
		added  int          // prev's new copies, not yet counted as queued
		done   int          // copies handled so far (enqueued, or cancelled by a stop)
		ttlMS  = ttl.Milliseconds()
		cancel = lanes.Tally{Key: key, Field: fieldCancel}
	)
	// between runs that round trip; it reports whether prev's check found
	// the broadcast stopped, and then cancels prev itself (StopBroadcast
	// may have read the ids before they reached their lanes) and counts
	// the copies that will not be enqueued as cancelled.
	between := func(next []lanes.Item) (stopped bool, err error) {
		var cmds valkey.Commands
		if prev != nil {
			cmds = append(cmds, n.c.B().Hexists().Key(key).Field(fieldStop).Build())
			if added > 0 {
				cmds = append(cmds, n.c.B().Hincrby().Key(key).Field(fieldQueued).Increment(int64(added)).Build())
			}
		}
		if next != nil {
			ids := make([]string, len(next))
			for i, it := range next {
				ids[i] = string(it.ID)
			}
			cmds = append(cmds, n.c.B().Rpush().Key(jobsKey).Element(ids...).Build(),
				n.c.B().Pexpire().Key(jobsKey).Milliseconds(ttlMS).Build())
		}
		out := n.c.DoMulti(ctx, cmds...)
		for _, r := range out {
			if err := r.Error(); err != nil {
				return false, fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
		if prev == nil {
			return false, nil
		}
		if stopped, err = out[0].AsBool(); err != nil || !stopped {
			return false, err
		}
		jobIDs := make([]lanes.JobID, len(prev))
		for i, it := range prev {
			jobIDs[i] = it.ID
		}
		if _, err := n.store.Cancel(ctx, tgjob.QueueNotify, jobIDs, cancel); err != nil {
			return true, fmt.Errorf("notifier: broadcast %s: cancel after a stop: %w", bc, err)
		}
		if rest := active - done; rest > 0 {
			if err := n.c.Do(ctx, n.c.B().Hincrby().Key(key).Field(fieldCancel).Increment(int64(rest)).Build()).Error(); err != nil {
				return true, fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
		return true, nil
	}
	for {
		next, ok := <-batches
		if !ok {
			next = nil
		}
		if prev == nil && next == nil {
			return bc, nil
		}
		if stopped, err := between(next); err != nil || stopped || next == nil {
			return bc, err
		}
		res, err := n.store.EnqueueBatch(ctx, tgjob.QueueNotify, next)
		done += len(next)
		prev, added = next, res.Added
		if err != nil {
			if added > 0 { // the chunks before the failing one stay counted
				err = errors.Join(err, n.c.Do(ctx, n.c.B().Hincrby().Key(key).Field(fieldQueued).Increment(int64(added)).Build()).Error())
			}
			return bc, fmt.Errorf("notifier: broadcast %s: %w", bc, err)
		}
	}
}

// StopBroadcast stops broadcast id: every copy still waiting on its lane
// is removed (lanes Store.Cancel over the job ids the broadcast recorded,
// {T}:n:bc:<id>:jobs, in chunks: O(copies), no scan) and counted as
// Cancelled in the same atomic call; copies in flight are delivered or
// fail as usual and are counted then, so nothing is counted twice and,
// once they settle, Sent + Failed + Cancelled = Total. A Broadcast still
// fanning out sees the stop after its current batch, cancels that batch and
// counts the copies it did not enqueue as cancelled. Calling it again
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
	ok, err := n.c.Do(ctx, n.c.B().Exists().Key(key).Build()).AsBool()
	if err != nil {
		return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
	}
	if !ok {
		return Progress{}, fmt.Errorf("%w: %s", ErrUnknownBroadcast, id)
	}
	if err := n.c.Do(ctx, n.c.B().Hset().Key(key).FieldValue().FieldValue(fieldStop, "1").Build()).Error(); err != nil {
		return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
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
		if _, err := n.store.Cancel(ctx, tgjob.QueueNotify, jobIDs, tally); err != nil {
			return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
		}
		if len(ids) < chunk {
			break
		}
	}
	return n.Progress(ctx, id)
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
