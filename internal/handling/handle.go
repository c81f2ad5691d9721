package handling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// handleBatch handles one lane's claimed updates in order and returns the
// ones it finished (marked handled; their jobs are still to be acked, see
// loop). A failure stops the batch: the failed update is retried later (or
// dead-lettered) and the rest are released, so the lane keeps its order.
// It runs under the runner (consumer.RunBatch): the batch's leases are kept
// alive while it runs (each finished update's too: its ack waits for the
// handler's next claim), and an update whose lease is lost or has less
// than half a lease left is not started: it and the rest are released, so
// no other handler can be running the chat's next updates while this one
// still works through them.
func (h *Handler) handleBatch(ctx context.Context, ups []intake.Claimed, errs []error) (finished []intake.Claimed, backoff bool) {
	leases := make([]lanes.Lease, len(ups))
	for i := range ups {
		leases[i] = ups[i].Job.Lease
	}
	b := &batch{h: h, ctx: ctx, ups: ups, errs: errs}
	// The claim was sent before now, so now + lease overestimates by the
	// claim's round trip at most; the keeper's Extend corrects it at lease/3.
	consumer.RunBatch(ctx, consumer.Batch{Leases: leases, Claimed: time.Now(), Length: h.cfg.Lease,
		Extender: h.inbox.Store(), Left: h.cfg.Lease / 2, Log: h.log}, b)
	return b.finished, b.backoff
}

// batch is one batch of updates being handled (consumer.Jobs).
type batch struct {
	h        *Handler
	ctx      context.Context
	ups      []intake.Claimed
	errs     []error
	finished []intake.Claimed
	backoff  bool
}

// Handle handles update i: finished (its ack waits for the next claim:
// Held), or settled otherwise and the batch stops.
func (b *batch) Handle(i int) consumer.Verdict {
	done, backoff := b.h.handleClaimed(b.ctx, b.ups[i], b.errs[i])
	if !done {
		b.backoff = backoff
		return consumer.Stop
	}
	b.finished = append(b.finished, b.ups[i])
	return consumer.Held
}

// Rest releases the updates from on.
func (b *batch) Rest(from int, why consumer.Why) {
	if why == consumer.StopLease {
		b.h.log.Warn("update's lease lapses before it could be handled; released with the rest of its batch",
			slog.Int64("update_id", b.ups[from].ID), slog.String("lane", b.ups[from].Lane), slog.Int("released", len(b.ups)-from))
	}
	for _, r := range b.ups[from:] {
		b.h.settle(b.ctx, r, "release", func(ctx context.Context) error { return b.h.inbox.Release(ctx, r) })
	}
}

// handleClaimed handles u (decodeErr: Claim's decoding error of it) and
// settles it: finished when handled (or handled before: marked handled,
// its job acked by the handler's next claim), retried after a failure,
// dead-lettered when it can never succeed or failed too often.
// It reports whether u was finished, and whether the handler should back
// off (an infrastructure failure).
func (h *Handler) handleClaimed(ctx context.Context, u intake.Claimed, decodeErr error) (finished, backoff bool) {
	if decodeErr != nil {
		h.log.Error("update queue: malformed job; dead-lettered", slog.String("job", string(u.Job.ID)), slog.Any("err", decodeErr))
		h.m.Handled.WithLabelValues("malformed").Inc()
		h.deadLetter(ctx, u, decodeErr.Error())
		return false, false
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(h.cfg.Drain, h.cfg.Lease/2))
	t0 := time.Now()
	result, keys, err := h.handleOne(hctx, u)
	cancel()
	h.m.latency.Observe(time.Since(t0).Seconds())
	if err == nil {
		h.m.Handled.WithLabelValues(result).Inc()
		h.m.wait.Observe(time.Since(u.Recorded).Seconds())
		// Its job is acked by the handler's next claim (loop), and
		// only once it is marked handled: an ack without the mark would
		// leave its recorded time behind, and a record of it again (a
		// webhook resend) would run it again. Unmarked, its lease lapses and
		// it is claimed again (its replies are queued once: lanes.Dedupe).
		forget := make([]string, len(keys))
		for i, k := range keys {
			forget[i] = h.cfg.Notifier.KeyName(k)
		}
		if !h.settle(ctx, u, "finish", func(ctx context.Context) error { return h.inbox.MarkHandled(ctx, u, forget...) }) {
			return false, true
		}
		return true, false
	}
	if errors.Is(err, errPermanent) {
		h.log.Error("update cannot be handled; dead-lettered", slog.Int64("update_id", u.ID), slog.Any("err", err))
		h.m.Handled.WithLabelValues("malformed").Inc()
		h.deadLetter(ctx, u, err.Error())
		return false, false
	}
	if errors.Is(err, lanes.ErrLaneFull) {
		// Backpressure: a chat's reply lane is full, so the update waits
		// (no attempt used) rather than lose a reply; its replies already
		// queued are not queued twice when it is handled again (their
		// keys), nor is its game move played twice (gameui's journal).
		h.m.Handled.WithLabelValues("lane_full").Inc()
		h.m.refused.Inc()
		h.log.Warn("update waits: a chat's reply lane is full (REPLY_LANE_DEPTH); handled again later", slog.Int64("update_id", u.ID),
			slog.String("lane", u.Lane), durationAttr("retry_in", laneFullWait), slog.Any("err", err))
		h.settle(ctx, u, "postpone", func(ctx context.Context) error { return h.inbox.Postpone(ctx, u, laneFullWait) })
		return false, false
	}
	h.m.Handled.WithLabelValues(result).Inc()
	if result != "panic" {
		// An infrastructure failure (Valkey, the notifier): not the
		// update's fault, so it uses no attempt; it goes back to its lane
		// and this handler backs off before claiming again.
		h.log.Warn("update not handled; released for a retry", slog.Int64("update_id", u.ID), slog.String("lane", u.Lane), slog.Any("err", err))
		h.settle(ctx, u, "release", func(ctx context.Context) error { return h.inbox.Release(ctx, u) })
		return false, true
	}
	delay := min(retryBase<<min(u.Job.Attempts, 10), retryMax)
	var dead bool
	h.settle(ctx, u, "retry", func(ctx context.Context) error {
		var err2 error
		dead, err2 = h.inbox.Retry(ctx, u, delay, err.Error())
		return err2
	})
	if dead {
		h.m.dead.Inc()
		h.log.Error("update failed too often; dead-lettered (see /dlq)", slog.Int64("update_id", u.ID),
			slog.String("lane", u.Lane), slog.Int("attempts", u.Job.Attempts+1), slog.Any("err", err))
	} else {
		h.log.Warn("update failed; will retry", slog.Int64("update_id", u.ID), slog.String("lane", u.Lane),
			slog.Int("attempt", u.Job.Attempts+1), durationAttr("retry_in", delay), slog.Any("err", err))
	}
	return false, false
}

// deadLetter dead-letters u with reason (settled) and counts it.
func (h *Handler) deadLetter(ctx context.Context, u intake.Claimed, reason string) {
	h.settle(ctx, u, "dead-letter", func(ctx context.Context) error { return h.inbox.Dead(ctx, u, reason) })
	h.m.dead.Inc()
}

// settle runs one settlement of u (finish, retry, release, dead-letter)
// with the handlers' settler until it succeeds, each try with a fresh
// context: u's fate is known, so it is not dropped after one failed try.
// Stopping does not cut it. It stops when u's lease is provably lost
// (lanes.ErrStaleLease: another handler has it, and the lane's handled mark
// makes a second run a no-op) or after a lease's length of failures (the
// lease has lapsed by then). It reports whether the settlement applied.
func (h *Handler) settle(ctx context.Context, u intake.Claimed, what string, f func(context.Context) error) bool {
	err := h.settler().Settle(context.WithoutCancel(ctx), what, f, slog.Int64("update_id", u.ID))
	switch {
	case err == nil:
		return true
	case errors.Is(err, lanes.ErrStaleLease):
		h.log.Warn("update's lease was lost before it settled; another handler takes it over", slog.String("settle", what),
			slog.Int64("update_id", u.ID), slog.Any("err", err))
	default:
		h.log.Error("update not settled within its lease; it is handled again (a no-op if it was handled)", slog.String("settle", what),
			slog.Int64("update_id", u.ID), slog.Any("err", err))
	}
	return false
}

// errPermanent marks an update that can never be handled (it does not
// decode): dead-lettered at once.
var errPermanent = errors.New("permanent")

// handleOne runs update u through the mux (Config.Mux, synchronously) and
// enqueues the replies of its Outcome, then runs its hooks, unless u's
// lane's handled mark says it was handled before. It returns the result
// label (ok, duplicate, panic, retry), the notifier keys the update used
// (for MarkHandled's forget list), and an error when u must be tried
// again (a panic, an infrastructure failure) or never (errPermanent).
// Nothing is settled here.
func (h *Handler) handleOne(ctx context.Context, u intake.Claimed) (string, []string, error) {
	done, err := h.inbox.Handled(ctx, u)
	if err != nil {
		return "retry", nil, err
	}
	if done {
		h.m.duplicates.Inc()
		h.log.Info("update already handled; skipped", slog.Int64("update_id", u.ID))
		return "duplicate", nil, nil
	}
	var upd models.Update
	if err := json.Unmarshal(u.JSON, &upd); err != nil {
		return "malformed", nil, fmt.Errorf("%w: update %d does not decode: %v", errPermanent, u.ID, err)
	}
	req := &update.Request{Update: &upd, ID: u.ID, Epoch: u.Epoch}
	out := h.cfg.Mux.Handle(ctx, req)
	if _, ok := errors.AsType[*update.PanicError](out.Err); ok {
		return "panic", nil, out.Err
	}
	if out.Err != nil {
		return "retry", nil, fmt.Errorf("update %d: %w", u.ID, out.Err)
	}
	for i, o := range out.Replies {
		// Keyed by update and reply index: handled again after a crash
		// between here and Finish, the update does not enqueue a reply
		// twice, even one already sent and acked.
		_, err := h.cfg.Notifier.Notify(ctx, o.ChatID, notifier.Message{Text: o.Text, Class: notifier.Reply, ReplyTo: o.ReplyTo,
			Key: out.Key(req, strconv.Itoa(i))})
		if errors.Is(err, notifier.ErrInvalid) {
			h.log.Error("reply rejected by the notifier; dropped", slog.Int64("update_id", u.ID), slog.Any("err", err))
			continue
		}
		if err != nil {
			return "retry", nil, fmt.Errorf("update %d: reply: %w", u.ID, err)
		}
	}
	for _, f := range slices.Clone(out.After) {
		if err := f(ctx, &out); err != nil {
			return "retry", nil, fmt.Errorf("update %d: %w", u.ID, err)
		}
	}
	return "ok", out.Keys, nil
}
