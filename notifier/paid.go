package notifier

import (
	"context"
	"fmt"
	"strconv"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Paid broadcasts put their copies on tgjob.QueuePaid (Message.Paid). When
// Telegram answers that the bot cannot pay (its Stars balance is too low),
// the worker halts the paid queue (HaltPaid): it claims nothing more from
// it, so the copies not yet sent stay on their lanes, nothing lost. The
// admin then continues the rest free (ContinueFree: the copies move to the
// notify queue) or stops the broadcast (StopBroadcast, which also lifts the
// halt).

// HaltPaid halts the paid queue because a copy of broadcast could not be
// paid for: PaidHalted returns broadcast from now on (for ProgressTTL, or
// until ContinueFree or StopBroadcast of broadcast), and its Progress shows
// Halted. A later halt for another broadcast replaces it. It reports
// whether it halted: not for a stopped broadcast (StopBroadcast was
// called: a copy in flight at the stop that could not be paid for halts
// nothing; the store drops it when it is given back, see StopBroadcast),
// nothing written (lua/halt.lua). Errors: ErrInvalid for a malformed id;
// the server's error.
func (n *Notifier) HaltPaid(ctx context.Context, broadcast string) (bool, error) {
	if !validBroadcastID(broadcast) {
		return false, invalid(fmt.Sprintf("broadcast id %q", broadcast))
	}
	v, err := n.haltScript.Exec(ctx, n.c, []string{n.keys.paidHalt(), n.keys.progress(broadcast)},
		[]string{"halt", broadcast, ms(n.cfg.ProgressTTL)}).AsInt64()
	if err != nil {
		return false, fmt.Errorf("notifier: halt paid %s: %w", broadcast, err)
	}
	return v == 1, nil
}

// PaidHalted returns the broadcast the paid queue is halted for ("" when it
// is not halted). Errors: the server's.
func (n *Notifier) PaidHalted(ctx context.Context) (string, error) {
	v, err := n.c.Do(ctx, n.c.B().Get().Key(n.keys.paidHalt()).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("notifier: paid halt: %w", err)
	}
	return v, nil
}

// clearHalt lifts the paid queue's halt when it is broadcast's.
func (n *Notifier) clearHalt(ctx context.Context, broadcast string) error {
	return n.haltScript.Exec(ctx, n.c, []string{n.keys.paidHalt(), n.keys.progress(broadcast)},
		[]string{"clear", broadcast, ms(n.cfg.ProgressTTL)}).Error()
}

// PaidInFlight is the number of paid copies being sent now (claimed from
// the paid queue, not yet settled), of every paid broadcast. Once a halt
// is seen, it falls to 0 as those sends settle: a paid broadcast's counts
// are final then. Errors: the store's.
func (n *Notifier) PaidInFlight(ctx context.Context) (int, error) {
	st, err := n.store.Inspector().Stats(ctx, tgjob.QueuePaid, 0)
	if err != nil {
		return 0, fmt.Errorf("notifier: paid in flight: %w", err)
	}
	return st.InFlight, nil
}

// ContinueFree moves the copies of paid broadcast id still waiting on the
// paid queue to the notify queue (sent free, at the bulk budget, without
// allow_paid_broadcast), keeping their job ids, so StopBroadcast still finds
// them; msg must be the message the broadcast was started with (its parts
// are rebuilt for each chat). It then lifts the paid queue's halt. It
// returns how many copies moved (Progress.Moved; Progress.Free is set).
//
// Per chunk of the broadcast's recorded job ids the copies are first
// enqueued on the notify queue (lanes.Unless the stop key: nothing moves
// after a stop), then cancelled on the paid queue: a crash in between
// leaves a copy on both queues (sent twice) rather than on none.
//
// Errors: ErrInvalid for a malformed id, a broadcast that is not paid or
// not halted, or a stopped one; ErrPaidInFlight when paid copies are still
// being sent (nothing moved: try again once they settle);
// ErrUnknownBroadcast; the store's errors (chunks before the failing one
// stay moved; calling again moves the rest).
func (n *Notifier) ContinueFree(ctx context.Context, id string, msg Message) (int, error) {
	p, err := n.Progress(ctx, id)
	if err != nil {
		return 0, err
	}
	switch {
	case !p.Paid:
		return 0, invalid("continue free: broadcast " + id + " is not paid")
	case p.Stopped:
		return 0, invalid("continue free: broadcast " + id + " was stopped")
	case !p.Halted:
		return 0, invalid("continue free: broadcast " + id + " is not halted")
	}
	fl, err := n.PaidInFlight(ctx)
	if err != nil {
		return 0, fmt.Errorf("notifier: continue free %s: %w", id, err)
	}
	if fl > 0 {
		return 0, fmt.Errorf("%w: %d", ErrPaidInFlight, fl)
	}
	if p.Lazy {
		return n.continueLazyFree(ctx, id)
	}
	msg.Class, msg.Paid = Notification, false
	tmpl, err := n.jobs(1, msg)
	if err != nil {
		return 0, err
	}
	encs, err := copyEncoders(tmpl, id)
	if err != nil {
		return 0, err
	}
	moved := 0
	tally := lanes.Tally{Key: n.keys.progress(id), Field: fieldMoved}
	for start := int64(0); ; start += recordedChunk {
		ids, err := n.recordedJobs(ctx, id, start)
		if err != nil {
			return moved, fmt.Errorf("notifier: continue free %s: %w", id, err)
		}
		if len(ids) == 0 {
			break
		}
		groups, err := n.store.Inspector().Waiting(ctx, tgjob.QueuePaid, ids)
		if err != nil {
			return moved, fmt.Errorf("notifier: continue free %s: %w", id, err)
		}
		var items []lanes.Item
		var move []lanes.JobID
		for i, g := range groups {
			if g == "" {
				continue
			}
			chat, err := tgjob.ChatID(g)
			if err != nil {
				return moved, fmt.Errorf("notifier: continue free %s: lane %q: %w", id, g, err)
			}
			// The recorded ids are in fan-out order: a chat's parts in turn.
			part := int((start + int64(i)) % int64(len(encs)))
			items = append(items, lanes.Item{Group: g, ID: ids[i], Payload: encs[part](chat)})
			move = append(move, ids[i])
		}
		if len(items) > 0 {
			c, err := n.moveToFree(ctx, id, items, move, tally)
			moved += c
			if err != nil {
				return moved, err
			}
		}
		if len(ids) < recordedChunk {
			break
		}
	}
	return moved, n.markFree(ctx, id)
}

// markFree records that paid broadcast id continues free and lifts the
// paid queue's halt. Errors: the server's, wrapped.
func (n *Notifier) markFree(ctx context.Context, id string) error {
	key := n.keys.progress(id)
	if err := n.c.Do(ctx, n.c.B().Hset().Key(key).FieldValue().FieldValue(fieldFree, "1").FieldValue(fieldHalt, "0").Build()).Error(); err != nil {
		return fmt.Errorf("notifier: continue free %s: %w", id, err)
	}
	if err := n.clearHalt(ctx, id); err != nil {
		return fmt.Errorf("notifier: continue free %s: %w", id, err)
	}
	return nil
}

// continueLazyFree is ContinueFree of a lazy broadcast: the copies of its
// window still waiting on the paid queue move to the notify queue as they
// are (a copy's payload names only the broadcast, chat and part), chunk by
// chunk in id order; later steps go on the notify queue (Progress.Free).
func (n *Notifier) continueLazyFree(ctx context.Context, id string) (int, error) {
	moved := 0
	tally := lanes.Tally{Key: n.keys.progress(id), Field: fieldMoved}
	after := "-"
	for {
		raw, err := n.c.Do(ctx, n.c.B().Zrange().Key(n.keys.out(id)).Min(after).Max("+").Bylex().Limit(0, recordedChunk).Build()).AsStrSlice()
		if err != nil {
			return moved, fmt.Errorf("notifier: continue free %s: %w", id, err)
		}
		if len(raw) == 0 {
			break
		}
		after = "(" + raw[len(raw)-1]
		ids := make([]lanes.JobID, len(raw))
		for i, s := range raw {
			ids[i] = lanes.JobID(s)
		}
		jobs, err := n.store.Inspector().WaitingJobs(ctx, tgjob.QueuePaid, ids)
		if err != nil {
			return moved, fmt.Errorf("notifier: continue free %s: %w", id, err)
		}
		var items []lanes.Item
		var move []lanes.JobID
		for _, j := range jobs {
			if j.Group != "" {
				items, move = append(items, j), append(move, j.ID)
			}
		}
		if len(items) == 0 {
			continue
		}
		c, err := n.moveToFree(ctx, id, items, move, tally)
		moved += c
		if err != nil {
			return moved, err
		}
	}
	return moved, n.markFree(ctx, id)
}

// moveToFree moves one chunk of paid broadcast id's copies to the notify
// queue: items (the copies as they go there) enqueued there first (unless
// the broadcast was stopped), then move (their ids) cancelled on the paid
// queue and counted in tally, so a crash between leaves a copy on both
// queues rather than on none. It returns how many it cancelled on the paid
// queue. Errors: ErrInvalid for a stopped broadcast; the store's, wrapped.
func (n *Notifier) moveToFree(ctx context.Context, id string, items []lanes.Item, move []lanes.JobID, tally lanes.Tally) (int, error) {
	res, err := n.store.Enqueue(ctx, tgjob.QueueNotify, items, lanes.Unless(n.keys.stop(id)), lanes.CountDead(n.deadTally(id)))
	if err != nil {
		return 0, fmt.Errorf("notifier: continue free %s: %w", id, err)
	}
	if res.Refused > 0 {
		return 0, invalid("continue free: broadcast " + id + " was stopped")
	}
	c, err := n.store.Cancel(ctx, tgjob.QueuePaid, move, tally)
	if err != nil {
		return 0, fmt.Errorf("notifier: continue free %s: %w", id, err)
	}
	return c.Cancelled, nil
}

// StarTenthsPerCopy is the fee of one paid broadcast copy in tenths of a
// Telegram Star (Bot API, sendMessage, allow_paid_broadcast: 0.1 Star).
const StarTenthsPerCopy = 1

// FormatStars renders tenths of a Star as "12.3".
func FormatStars(tenths int) string {
	return strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10)
}
