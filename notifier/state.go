package notifier

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Progress is a broadcast's state. Counts are messages: one per chat and
// part (a text split in 3 parts sent to 10 chats is 30 messages).
type Progress struct {
	ID string
	// Total is the messages the broadcast planned (after removing duplicate
	// chats).
	Total int
	// Queued is the messages enqueued so far (Total minus skipped chats,
	// once Broadcast returned).
	Queued int
	// Sent is the messages delivered (acked by the worker).
	Sent int
	// Failed counts messages that will not be delivered, by reason:
	// "inactive" (chat skipped at enqueue), and the worker's dead-letter
	// reasons ("forbidden", "chat not found", "too long", "bad request",
	// "malformed job", "max attempts").
	Failed map[string]int
	// Cancelled is the messages StopBroadcast removed from their lanes (or
	// that were never enqueued because of the stop): never sent.
	Cancelled int
	// Stopped is set once StopBroadcast was called.
	Stopped bool
	// Paid: a paid broadcast (copies sent with allow_paid_broadcast).
	Paid bool
	// PaidSent is the copies delivered paid, each 0.1 Telegram Star
	// (StarTenths).
	PaidSent int
	// Halted: the paid part stopped because the bot could not pay (the
	// copies not sent wait on the paid queue, which is halted: see
	// HaltPaid, ContinueFree).
	Halted bool
	// Free: the copies left when the paid part halted continued free
	// (ContinueFree); Moved counts them.
	Free  bool
	Moved int
	// Remaining is Total - Sent - the sum of Failed - Cancelled: messages
	// still in the lanes or in flight (or not yet enqueued). After a stop
	// it is the copies that were in flight at the stop, until they settle.
	Remaining int
}

// StarTenths is the Stars spent so far, in tenths of a Star (one per paid
// copy delivered).
func (p Progress) StarTenths() int { return p.PaidSent }

// Done reports whether nothing remains.
func (p Progress) Done() bool { return p.Remaining <= 0 }

// Progress returns broadcast id's progress. It can be read while the
// broadcast runs. Errors: ErrInvalid for a malformed id, ErrUnknownBroadcast
// when nothing is stored (never created, or expired), the server's error.
func (n *Notifier) Progress(ctx context.Context, id string) (Progress, error) {
	if !validBroadcastID(id) {
		return Progress{}, invalid(fmt.Sprintf("broadcast id %q", id))
	}
	m, err := n.c.Do(ctx, n.c.B().Hgetall().Key(n.keys.progress(id)).Build()).AsStrMap()
	if err != nil {
		return Progress{}, fmt.Errorf("notifier: progress %s: %w", id, err)
	}
	if len(m) == 0 {
		return Progress{}, fmt.Errorf("%w: %s", ErrUnknownBroadcast, id)
	}
	p := Progress{ID: id, Failed: map[string]int{}}
	failed := 0
	for k, v := range m {
		x, _ := strconv.Atoi(v)
		switch {
		case k == fieldTotal:
			p.Total = x
		case k == fieldQueued:
			p.Queued = x
		case k == fieldSent:
			p.Sent = x
		case k == fieldCancel:
			p.Cancelled = x
		case k == fieldStop:
			p.Stopped = true
		case k == fieldPaid:
			p.Paid = v == "1"
		case k == fieldPaidN:
			p.PaidSent = x
		case k == fieldHalt:
			p.Halted = v == "1"
		case k == fieldFree:
			p.Free = v == "1"
		case k == fieldMoved:
			p.Moved = x
		case strings.HasPrefix(k, fieldFailed):
			p.Failed[k[len(fieldFailed):]] = x
			failed += x
		}
	}
	p.Remaining = p.Total - p.Sent - failed - p.Cancelled
	return p, nil
}

func (n *Notifier) record(ctx context.Context, broadcast, field, jobID string, also ...string) error {
	if !validBroadcastID(broadcast) {
		return invalid(fmt.Sprintf("broadcast id %q", broadcast))
	}
	err := n.recordScript.Exec(ctx, n.c,
		[]string{n.keys.progress(broadcast), n.keys.seen(broadcast)},
		append([]string{field, jobID, strconv.FormatInt(n.cfg.ProgressTTL.Milliseconds(), 10)}, also...)).Error()
	if err != nil {
		return fmt.Errorf("notifier: progress %s: %w", broadcast, err)
	}
	return nil
}

// RecordSent counts one delivered message of broadcast (called by the
// worker after a successful Ack, so at most once per job).
func (n *Notifier) RecordSent(ctx context.Context, broadcast string) error {
	return n.record(ctx, broadcast, fieldSent, "")
}

// RecordPaidSent counts one message of broadcast delivered paid (sent with
// allow_paid_broadcast): Sent and PaidSent, in one atomic call.
func (n *Notifier) RecordPaidSent(ctx context.Context, broadcast string) error {
	return n.record(ctx, broadcast, fieldSent, "", fieldPaidN)
}

// RecordFailed counts job of broadcast as failed with reason, at most once
// per job id.
func (n *Notifier) RecordFailed(ctx context.Context, broadcast, jobID, reason string) error {
	if jobID == "" || reason == "" {
		return invalid("record failed: empty job id or reason")
	}
	return n.record(ctx, broadcast, fieldFailed+reason, jobID)
}
