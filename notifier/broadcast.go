package notifier

import (
	"context"
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
	done := 0                                  // copies handled so far (enqueued, or cancelled by a stop)
	// The template's JSON is encoded once per part; each chat only splices
	// in its id. A batch is encoded while the one before it is being
	// flushed (at most one in flight, so batches still land in order, and a
	// stop or a store error ends the fan-out before the next batch).
	encs := make([]func(int64) []byte, len(tmpl))
	for i, j := range tmpl {
		j.Broadcast = bc
		if encs[i], err = j.ChatEncoder(); err != nil {
			return bc, err
		}
	}
	// flush records the batch's job ids (before enqueueing them: a stop
	// must find every copy that can reach a lane), enqueues the batch, and
	// checks whether the broadcast was stopped meanwhile: then it cancels
	// the batch itself (StopBroadcast may have read the ids before they
	// reached their lanes), counts the copies it will not enqueue as
	// cancelled, and reports stopped.
	flush := func(items []lanes.Item) (stopped bool, err error) {
		if len(items) == 0 {
			return false, nil
		}
		ids := make([]string, len(items))
		jobIDs := make([]lanes.JobID, len(items))
		for i, it := range items {
			ids[i], jobIDs[i] = string(it.ID), it.ID
		}
		for _, r := range n.c.DoMulti(ctx,
			n.c.B().Rpush().Key(jobsKey).Element(ids...).Build(),
			n.c.B().Pexpire().Key(jobsKey).Milliseconds(ttl.Milliseconds()).Build()) {
			if err := r.Error(); err != nil {
				return false, fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
		res, err := n.store.EnqueueBatch(ctx, tgjob.QueueNotify, items)
		done += len(ids)
		cmds := valkey.Commands{n.c.B().Hexists().Key(key).Field(fieldStop).Build()}
		if res.Added > 0 {
			cmds = append(cmds, n.c.B().Hincrby().Key(key).Field(fieldQueued).Increment(int64(res.Added)).Build())
		}
		out := n.c.DoMulti(ctx, cmds...)
		for _, r := range out[1:] {
			if e := r.Error(); e != nil && err == nil {
				err = e
			}
		}
		if err != nil {
			return false, fmt.Errorf("notifier: broadcast %s: %w", bc, err)
		}
		if stopped, err = out[0].AsBool(); err != nil || !stopped {
			return false, err
		}
		tally := lanes.Tally{Key: key, Field: fieldCancel}
		if _, err := n.store.Cancel(ctx, tgjob.QueueNotify, jobIDs, tally); err != nil {
			return true, fmt.Errorf("notifier: broadcast %s: cancel after a stop: %w", bc, err)
		}
		if rest := active - done; rest > 0 {
			if err := n.c.Do(ctx, n.c.B().Hincrby().Key(key).Field(fieldCancel).Increment(int64(rest)).Build()).Error(); err != nil {
				return true, fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
		return true, nil
	}
	type flushed struct {
		stopped bool
		err     error
	}
	var inflight chan flushed
	wait := func() (bool, error) {
		if inflight == nil {
			return false, nil
		}
		r := <-inflight
		inflight = nil
		return r.stopped, r.err
	}
	send := func(items []lanes.Item) {
		ch := make(chan flushed, 1)
		inflight = ch
		go func() {
			stopped, err := flush(items)
			ch <- flushed{stopped, err}
		}()
	}
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
			if stopped, err := wait(); err != nil || stopped {
				return bc, err
			}
			send(items)
			items = make([]lanes.Item, 0, n.cfg.BatchSize*len(tmpl))
		}
	}
	if stopped, err := wait(); err != nil || stopped {
		return bc, err
	}
	if _, err := flush(items); err != nil {
		return bc, err
	}
	return bc, nil
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
