package notifier

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/lanes"
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
	// "malformed job", "max attempts"), and "lease expired" (a copy whose
	// lease expired MaxAttempts times, lanes.ReasonLeaseExpired).
	Failed map[string]int
	// Cancelled is the messages StopBroadcast removed from their lanes (or
	// that were never enqueued because of the stop), and those in flight
	// at the stop whose send then ended other than delivered (a retry, a
	// failure, an expired lease: dropped by the store, lanes Store.Cancel):
	// never sent.
	Cancelled int
	// Stopped is set once StopBroadcast was called.
	Stopped bool
	// StopFinished is set once a StopBroadcast ran to its end: no copy
	// waits on a lane, a lazy broadcast's copies never made are counted as
	// cancelled, a paid halt is lifted; Remaining is then the copies in
	// flight at the stop, until they settle. Stopped without it: a stop cut
	// short (a deadline, a killed process), which StopBroadcast again
	// finishes; until then Remaining may count copies that wait on their
	// lanes (on a halted paid queue: never sent) or were never made.
	StopFinished bool
	// StoppedAt is when StopBroadcast was first called (zero: not
	// stopped, or stopped before it was recorded).
	StoppedAt time.Time
	// StopCounted is set once a stop finished recording what it finished
	// with (lua/stopdone.lua; unset: not stopped, a stop cut short, or
	// one finished before the record existed): StopSent is the copies
	// sent (Sent) then, and StopInFlight the copies in flight then
	// (Remaining then). No copy waits on a lane after the stop, so every
	// copy delivered later was one of StopInFlight: Sent - StopSent of
	// them were delivered, the rest failed or were cancelled as they
	// settled (the stop's answer cannot know which they will be).
	StopCounted  bool
	StopSent     int
	StopInFlight int
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
	// that finished (StopFinished) it is the copies that were in flight at
	// the stop, until they settle.
	Remaining int

	// Lazy: a lazy broadcast (Filler.Start): its copies are made a step
	// at a time. Its Total is the audience's size at the start (times the
	// parts) while Walking, and the copies made once the walk is over or
	// the broadcast stopped.
	Lazy bool
	// Walking: a lazy broadcast whose walk of the audience is not over
	// (and that was not stopped): more copies are to be made.
	Walking bool
	// Skipped counts the copies a lazy broadcast did not make because
	// the chat was marked inactive (not failures: left out, as in the
	// preview's count).
	Skipped int
	// At is when a lazy broadcast starts (or started).
	At time.Time
	// Rate is a spread lazy broadcast's pace, copies per second (0: as
	// fast as the budget allows).
	Rate float64
	// PaidMax is the most copies a paid lazy broadcast sends paid (0: all).
	PaidMax int
	// Parts is how many messages each chat gets (a text split in parts;
	// 1 when not split, or not recorded: broadcasts before lazy ones).
	Parts int
}

// InChats returns p with its counts in chats rather than messages, as the
// preview counts (a text split in parts is one copy per chat): Total, Sent,
// each Failed reason, Cancelled, Skipped and StopSent divided by Parts
// (whole chats; a chat with parts settled differently, or some not yet,
// counts as remaining), Remaining what is left of Total, StopInFlight the
// chats its messages are at least (rounded up). PaidSent stays in messages
// (each paid message costs its 0.1 Star); Done is p's.
func (p Progress) InChats() Progress {
	k := max(p.Parts, 1)
	if k == 1 {
		return p
	}
	out := p
	out.Total, out.Queued, out.Sent, out.Cancelled, out.Skipped = p.Total/k, p.Queued/k, p.Sent/k, p.Cancelled/k, p.Skipped/k
	out.StopSent, out.StopInFlight = p.StopSent/k, (p.StopInFlight+k-1)/k
	out.Failed = make(map[string]int, len(p.Failed))
	failed := 0
	for r, n := range p.Failed {
		out.Failed[r] = n / k
		failed += n / k
	}
	out.Remaining = max(out.Total-out.Sent-failed-out.Cancelled, 0)
	if p.Done() {
		out.Remaining = 0
	} else {
		out.Remaining = max(out.Remaining, 1) // a part of some chat is still to settle
	}
	return out
}

// StarTenths is the Stars spent so far, in tenths of a Star (one per paid
// copy delivered).
func (p Progress) StarTenths() int { return p.PaidSent }

// Done reports whether nothing remains (and a lazy broadcast's walk is
// over).
func (p Progress) Done() bool { return p.Remaining <= 0 && !p.Walking }

// Scheduled reports whether a lazy broadcast has not started yet at now.
func (p Progress) Scheduled(now time.Time) bool { return p.Lazy && p.At.After(now) }

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
		if p.lazyField(k, v, x) {
			continue
		}
		switch {
		case k == fieldTotal:
			p.Total = x
		case k == fieldQueued:
			p.Queued = x
		case k == fieldSent:
			p.Sent = x
		case k == fieldCancel:
			p.Cancelled = x
		case p.stopField(k, v, x):
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
	if p.Lazy {
		// Walking: Total is the plan (or more, when chats joined). Walked:
		// the copies made. Stopped: lua/stopdone.lua set Total (or counted the
		// copies never made as cancelled).
		p.Walking = m[fieldCursor] != cursorEnd && !p.Stopped
		if p.Queued > p.Total || m[fieldCursor] == cursorEnd && !p.Stopped {
			p.Total = p.Queued
		}
	}
	p.Remaining = p.Total - p.Sent - failed - p.Cancelled
	return p, nil
}

// stopField sets the stop's field k (value v, as a number x) and reports
// whether k is one.
func (p *Progress) stopField(k, v string, x int) bool {
	switch k {
	case fieldStop:
		p.Stopped = true
	case fieldStopOK:
		p.StopFinished = true
	case fieldStopS:
		p.StopSent, p.StopCounted = x, true
	case fieldStopI:
		p.StopInFlight = x
	case fieldStopAt:
		ms, _ := strconv.ParseInt(v, 10, 64)
		p.StoppedAt = time.UnixMilli(ms)
	default:
		return false
	}
	return true
}

// lazyField sets the lazy broadcast's field k (value v, as a number x) and
// reports whether k is one.
func (p *Progress) lazyField(k, v string, x int) bool {
	switch k {
	case fieldLazy:
		p.Lazy = v == "1"
	case fieldSkipped:
		p.Skipped = x
	case fieldAt:
		ms, _ := strconv.ParseInt(v, 10, 64)
		p.At = time.UnixMilli(ms)
	case fieldRate:
		p.Rate, _ = strconv.ParseFloat(v, 64)
	case fieldPaidMax:
		p.PaidMax = x
	case fieldParts:
		p.Parts = x
	case fieldCursor, fieldTpl, fieldPaidQ, fieldClosed:
	default:
		return false
	}
	return true
}

// SentTally is what the worker's ack of a delivered copy of broadcast
// counts in the same atomic call (lanes.Counting): Sent, and PaidSent too
// when paid (sent with allow_paid_broadcast), in the progress hash while it
// lives (its TTL renewed); the copy leaves a lazy broadcast's window.
// Counted with the ack, a copy is counted exactly once, even when the
// worker dies right after acking it. Errors: ErrInvalid for a malformed
// broadcast id.
//
// The last broadcast's two tallies are kept (Notifier.lastSent), so a
// broadcast's copies after its first build no keys, slices or checks: the
// tallies returned share their Fields, which no caller changes.
func (n *Notifier) SentTally(broadcast string, paid bool) (lanes.SettleTally, error) {
	last := n.lastSent.Load()
	if last == nil || last.id != broadcast {
		if !validBroadcastID(broadcast) {
			return lanes.SettleTally{}, invalid(fmt.Sprintf("broadcast id %q", broadcast))
		}
		free := lanes.SettleTally{Key: n.keys.progress(broadcast), Fields: []string{fieldSent}, Untrack: n.keys.out(broadcast),
			TTL: n.cfg.ProgressTTL}
		withPaid := free
		withPaid.Fields = []string{fieldSent, fieldPaidN}
		last = &sentTallies{id: broadcast, free: free, paid: withPaid}
		n.lastSent.Store(last)
	}
	if paid {
		return last.paid, nil
	}
	return last.free, nil
}

// sentTallies are one broadcast's SentTally: a free copy's and a paid one's.
type sentTallies struct {
	id         string
	free, paid lanes.SettleTally
}

// FailedTally is what the worker's dead-lettering of a copy of broadcast
// counts in the same atomic call (lanes.Counting): Failed[reason], once per
// job id (the seen set its copies' dead tally counts in too, see
// deadTally), and the copy leaves a lazy broadcast's window. Errors: ErrInvalid for a malformed broadcast id or
// an empty reason.
func (n *Notifier) FailedTally(broadcast, reason string) (lanes.SettleTally, error) {
	if !validBroadcastID(broadcast) || reason == "" {
		return lanes.SettleTally{}, invalid(fmt.Sprintf("failed tally: broadcast id %q reason %q", broadcast, reason))
	}
	return lanes.SettleTally{Key: n.keys.progress(broadcast), Fields: []string{fieldFailed + reason},
		Once: n.keys.seen(broadcast), Untrack: n.keys.out(broadcast), TTL: n.cfg.ProgressTTL}, nil
}

// deadTally is what each copy of broadcast carries from its enqueue
// (lanes.CountDead) for the dead-letterings no worker settles: a DeadLane
// sweep of its blocked chat's lane (counted under the sweep's code,
// "forbidden") and a lease that expired past MaxAttempts
// (lanes.ReasonLeaseExpired): Failed[code] in the progress hash while it
// lives, once per job id (the seen set FailedTally shares), and the copy
// leaves a lazy broadcast's window, in the dead-lettering script itself.
func (n *Notifier) deadTally(broadcast string) lanes.DeadTally {
	return lanes.DeadTally{Key: n.keys.progress(broadcast), Prefix: fieldFailed, Once: n.keys.seen(broadcast),
		Untrack: n.keys.out(broadcast), TTL: n.cfg.ProgressTTL}
}
