package notifier

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// BroadcastIDPrefix brands broadcast ids: "bc_" + a 26-character ULID.
const BroadcastIDPrefix = "bc_"

// ValidBroadcastID reports whether id is shaped like a broadcast id
// (BroadcastIDPrefix and a ULID): one that is not never named a broadcast
// (Progress refuses it with ErrInvalid).
func ValidBroadcastID(id string) bool { return validBroadcastID(id) }

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
	tmpl, err := n.jobs(chatIDs[0], msg)
	if err != nil {
		return "", err
	}
	uniq, err := distinctChats(chatIDs)
	if err != nil {
		return "", err
	}
	aud, err := n.resolveAudience(ctx, uniq)
	if err != nil {
		return "", fmt.Errorf("notifier: broadcast: %w", err)
	}
	bc := BroadcastIDPrefix + strings.TrimPrefix(string(n.minter.New()), lanes.JobIDPrefix)
	parts := len(tmpl)
	prev, err := n.startProgress(ctx, bc, msg, len(aud.targets)*parts, aud.skipped*parts, startOpts{})
	if err != nil || prev != "" {
		return prev, err
	}
	encs, err := copyEncoders(tmpl, bc)
	if err != nil {
		return bc, err
	}
	return bc, n.newFanout(bc, broadcastQueue(msg), aud.active()*parts).run(ctx, aud, encs)
}

// broadcastQueue is the queue of msg's copies: tgjob.QueuePaid with
// msg.Paid, else tgjob.QueueNotify.
func broadcastQueue(msg Message) string {
	if msg.Paid {
		return tgjob.QueuePaid
	}
	return tgjob.QueueNotify
}

// distinctChats returns chatIDs without repeats, in their order (the first
// occurrence wins). Errors: ErrInvalid for a chat id 0.
func distinctChats(chatIDs []int64) ([]int64, error) {
	seen := make(map[int64]bool, len(chatIDs))
	uniq := make([]int64, 0, len(chatIDs))
	for _, id := range chatIDs {
		if id == 0 {
			return nil, invalid("broadcast: chat id 0")
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	return uniq, nil
}

// audience is a broadcast's chats as they are sent to: targets[i] is a
// chat after its migration aliases (deduplicated), inactive[i] reports it
// marked inactive (skipped: no copy, counted as failed "inactive"), skipped
// counts the inactive ones.
type audience struct {
	targets  []int64
	inactive []bool
	skipped  int
}

// active is the number of chats that get copies.
func (a audience) active() int { return len(a.targets) - a.skipped }

// resolveAudience resolves chat ids (distinct, none 0) through migration
// aliases and marks the inactive ones (chatstate Store.ResolveMany).
// Errors: the store's.
func (n *Notifier) resolveAudience(ctx context.Context, ids []int64) (audience, error) {
	targets, inactive, err := n.chats.ResolveMany(ctx, ids)
	if err != nil {
		return audience{}, err
	}
	a := audience{targets: targets, inactive: inactive}
	for _, in := range inactive {
		if in {
			a.skipped++
		}
	}
	return a, nil
}

// startOpts is how startProgress begins a broadcast beyond its counts.
type startOpts struct {
	ttl  time.Duration // the record's expiry (0: Config.ProgressTTL)
	fill time.Time     // a lazy broadcast's start: its score among the broadcasts to fill (zero: an eager one, not filled)
}

// startProgress creates broadcast bc's progress hash ({T}:n:bc:<bc>, for
// o.ttl or Config.ProgressTTL) with total copies planned and skipped
// copies counted as failed "inactive" (both copies: chats × parts), and
// the extra field/value pairs (a lazy broadcast's record), and with
// o.fill puts it among the broadcasts to fill ({T}:n:bcs), all in one
// atomic call (lua/start.lua): a failure leaves either all of it or
// nothing. With msg.Key it records the key in the same call and returns
// the id of the broadcast that recorded it first (writing nothing), or ""
// when bc is that one. Errors: the server's, wrapped.
func (n *Notifier) startProgress(ctx context.Context, bc string, msg Message, total, skipped int, o startOpts, extra ...string) (string, error) {
	fields := append([]string{fieldTotal, strconv.Itoa(total), fieldQueued, "0", fieldSent, "0"}, extra...)
	if skipped > 0 {
		fields = append(fields, fieldFailed+reasonSkip, strconv.Itoa(skipped))
	}
	if msg.Paid {
		fields = append(fields, fieldPaid, "1")
	}
	ttl := cmp.Or(o.ttl, n.cfg.ProgressTTL)
	keyTTL, score := "0", ""
	if msg.Key != "" {
		keyTTL = ms(n.cfg.KeyTTL)
	}
	if !o.fill.IsZero() {
		score = strconv.FormatInt(o.fill.UnixMilli(), 10)
	}
	args := append([]string{bc, keyTTL, ms(ttl), score}, fields...)
	prev, err := n.startScript.Exec(ctx, n.c, []string{n.keys.progress(bc), n.keys.onceBC(msg.Key), n.keys.active()}, args).ToString()
	if err != nil {
		return "", fmt.Errorf("notifier: broadcast %s: %w", bc, err)
	}
	return prev, nil
}

// copyEncoders returns one encoder per part of tmpl (Notifier.jobs) for the
// copies of broadcast bc: the template's JSON is encoded once per part and
// each chat only splices in its id (tgjob Job.ChatEncoder). Errors: as
// tgjob Job.Encode.
func copyEncoders(tmpl []tgjob.Job, bc string) ([]func(int64) []byte, error) {
	encs := make([]func(int64) []byte, len(tmpl))
	for i, j := range tmpl {
		j.Broadcast = bc
		enc, err := j.ChatEncoder()
		if err != nil {
			return nil, err
		}
		encs[i] = enc
	}
	return encs, nil
}

// appendCopies appends chat's copies (one per encoder of copyEncoders, in
// part order, each with a new job id) on chat's lane to items.
func (n *Notifier) appendCopies(items []lanes.Item, chat int64, encs []func(int64) []byte) []lanes.Item {
	group := tgjob.Group(chat)
	for _, enc := range encs {
		items = append(items, lanes.Item{Group: group, ID: n.minter.New(), Payload: enc(chat)})
	}
	return items
}

// StopBroadcast stops broadcast id: every copy still waiting on its lane
// is removed (lanes Store.Cancel over the job ids the broadcast recorded,
// {T}:n:bc:<id>:jobs, in chunks: O(copies), no scan) and counted as
// Cancelled in the same atomic call. A copy in flight (its send under way)
// is marked by the same Cancel: delivered, its ack counts it Sent; any
// other end of its send (a retry after a 5xx, a 429 or a transport error,
// a failure for good, a paid copy the bot cannot pay for, its lease
// expiring because its worker died, froze or hung) drops it in the store,
// counted Cancelled, so nothing of the broadcast is sent after the stop
// but the sends already under way (issue 27: "nothing of it is sent after
// the stop"), nothing is counted twice and, once they settle, Sent +
// Failed + Cancelled = Total. A Broadcast still
// fanning out enqueues nothing more (its batches are enqueued with the
// lanes.Unless option on the stop key {T}:n:bc:<id>:stop, set here before
// the recorded ids are read): no copy is left on a lane once StopBroadcast
// returns; the fan-out sees the stop within its next batch, cancels the
// batches it enqueued since and counts the copies it did not enqueue as
// cancelled. A lazy broadcast's window is cancelled the same way and the
// copies it never made are counted as cancelled; a paid halt of the
// broadcast is lifted, and none is set after the stop (HaltPaid of a
// stopped broadcast halts nothing).
//
// The stop is marked Stopped first and StopFinished last (lua/stopdone.lua):
// a call cut short between (a deadline, a killed process, a Valkey fault)
// leaves a broadcast Stopped whose waiting copies may still be on their
// lanes (on a halted paid queue, for good) and whose counts do not add up;
// calling StopBroadcast again finishes it (chaos seed 7: a Stop cut short
// by its deadline, answered "already stopped" on its retry, left 2,113 of
// a halted paid broadcast's copies "in flight" that nothing would send).
// Calling it again cancels and counts nothing more. The first call to
// finish records the copies sent and in flight then (Progress.StopSent,
// StopInFlight, in the same atomic call that marks it finished): every
// copy delivered after it was in flight at it. It returns the progress
// after the stop (Stopped, StopFinished and StopCounted set). Errors:
// ErrInvalid for a malformed id, ErrUnknownBroadcast when nothing is
// stored (never created, or expired), the server's error.
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
		n.c.B().Hsetnx().Key(key).Field(fieldStopAt).Value(strconv.FormatInt(time.Now().UnixMilli(), 10)).Build(),
		n.c.B().Set().Key(n.keys.stop(id)).Value("1").PxMilliseconds(ttl).Build(),
	) {
		if err := r.Error(); err != nil {
			return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
		}
	}
	tally := lanes.Tally{Key: key, Field: fieldCancel}
	for start := int64(0); ; start += recordedChunk {
		jobIDs, err := n.recordedJobs(ctx, id, start)
		if err != nil {
			return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
		}
		if len(jobIDs) == 0 {
			break
		}
		// A paid broadcast's copies are on the paid queue, and on the
		// notify queue once ContinueFree moved them (both are cancelled:
		// an id not on a queue is counted gone there).
		for _, q := range []string{tgjob.QueuePaid, tgjob.QueueNotify} {
			if _, err := n.store.Cancel(ctx, q, jobIDs, tally); err != nil {
				return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
			}
		}
		if len(jobIDs) < recordedChunk {
			break
		}
	}
	// A lazy broadcast's window (its copies made since the stop key was
	// set are none: each step checks it).
	if err := n.cancelOut(ctx, id, tally); err != nil {
		return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
	}
	// A stop ends a halted paid part too: the paid queue runs again for
	// the next paid broadcast.
	if err := n.clearHalt(ctx, id); err != nil {
		return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
	}
	// Last: a lazy broadcast's copies never made counted (once), and the
	// stop marked finished.
	if err := n.stopDoneScript.Exec(ctx, n.c, []string{key}, nil).Error(); err != nil {
		return Progress{}, fmt.Errorf("notifier: stop %s: %w", id, err)
	}
	return n.Progress(ctx, id)
}

// cancelOut cancels the copies of lazy broadcast id still waiting (its
// window, {T}:n:bc:<id>:out, on the paid and the notify queue), counting
// them in tally, and takes it off the broadcasts to fill. Copies in flight
// are left to settle, marked: one not acked is dropped and counted in
// tally then (lanes Store.Cancel). Errors: the store's.
func (n *Notifier) cancelOut(ctx context.Context, id string, tally lanes.Tally) error {
	for {
		raw, err := n.c.Do(ctx, n.c.B().Zrange().Key(n.keys.out(id)).Min("0").Max(strconv.Itoa(recordedChunk-1)).Build()).AsStrSlice()
		if err != nil {
			return err
		}
		if len(raw) == 0 {
			break
		}
		ids := make([]lanes.JobID, len(raw))
		for i, s := range raw {
			ids[i] = lanes.JobID(s)
		}
		for _, q := range []string{tgjob.QueuePaid, tgjob.QueueNotify} {
			if _, err := n.store.Cancel(ctx, q, ids, tally); err != nil {
				return err
			}
		}
		if err := n.c.Do(ctx, n.c.B().Zrem().Key(n.keys.out(id)).Member(raw...).Build()).Error(); err != nil {
			return err
		}
	}
	return n.c.Do(ctx, n.c.B().Zrem().Key(n.keys.active()).Member(id).Build()).Error()
}

// recordedChunk is how many of a broadcast's recorded job ids
// StopBroadcast and ContinueFree read per round trip.
const recordedChunk = 2000

// recordedJobs returns at most recordedChunk of broadcast id's recorded job
// ids ({T}:n:bc:<id>:jobs, in fan-out order: a chat's parts in turn) from
// index start; none past the end. Errors: the server's.
func (n *Notifier) recordedJobs(ctx context.Context, id string, start int64) ([]lanes.JobID, error) {
	raw, err := n.c.Do(ctx, n.c.B().Lrange().Key(n.keys.jobs(id)).Start(start).Stop(start+recordedChunk-1).Build()).AsStrSlice()
	if err != nil {
		return nil, err
	}
	ids := make([]lanes.JobID, len(raw))
	for i, s := range raw {
		ids[i] = lanes.JobID(s)
	}
	return ids, nil
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
