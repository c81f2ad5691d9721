package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// Handling defaults.
const (
	// handlerBatch is the most updates of one lane a handler claims at
	// once (a lane of weight w is served up to w per turn of the ring).
	handlerBatch = 16
	// retryBase is the first wait before a failed update is tried again
	// (doubled per attempt, at most retryMax); its lane waits with it.
	retryBase = 100 * time.Millisecond
	retryMax  = 5 * time.Second
)

// runHandlers runs HANDLERS handler loops (consumer.Run, one claim loop
// each) until ctx ends. Each claims recorded updates from the update queue
// itself (a batch of one lane, in update_id order: one chat's updates are
// handled one at a time, in order, and different chats concurrently) and
// handles them; claims are not funnelled through one loop, so claiming
// scales with the handlers. Idle handlers wait for a lanes wake-up (an
// update recorded) or the claim's RetryIn; a handler that got work wakes
// one more idle handler, so a burst wakes them all. A failed claim, or a
// batch that met an infrastructure failure, backs its handler off
// (intake.ErrorBackoff). When ctx ends the batches in progress finish (each
// update within the drain timeout) and the updates not started are
// released. Any number of processes may run it.
func (a *App) runHandlers(ctx context.Context) error {
	log := a.log.With(slog.String("component", "handler"))
	waiter, err := a.inbox.Store().NewWaiter(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("handlers: %w", err)
	}
	n := a.cfg.HandlerCount()
	kick := make(chan struct{}, n)
	wakeOne := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if waiter.Wait(ctx, time.Second) {
				wakeOne()
			}
		}
	})
	log.Info("handlers started", slog.Int("handlers", n), durationAttr("lease", a.cfg.HandlerLease))
	consumer.Run(ctx, consumer.Config{Loops: n, Backoff: intake.ErrorBackoff(), Log: log},
		func(int) consumer.Source[intake.Claims] { return &handlerLoop{a: a, kick: kick, wakeOne: wakeOne} })
	wg.Wait()
	return nil
}

// handlerLoop is the claim policy of one handler loop of runHandlers. The
// jobs of the updates it finished are acked by its next claim, in the same
// atomic call (intake ClaimAndAck): one round trip and one script per
// update fewer than an ack of its own. Each finished update is marked
// handled (MarkHandled) before its ack is sent, so an ack that never
// arrives only makes the update be claimed again and skipped as handled.
// When a claim fails, its acks may or may not have applied: they are
// settled on their own (settleAcks), as are the acks still pending when the
// handler stops or backs off.
type handlerLoop struct {
	a       *App
	kick    <-chan struct{}
	wakeOne func()
	acks    []intake.Claimed // finished updates whose acks ride on the next claim
}

// Claim claims a batch of updates, acking the last batch's finished ones;
// with nothing claimable it waits for a wake-up or RetryIn (at most 1 s).
// It returns consumer.ErrStopped once ctx ended, after settling the acks
// left.
func (h *handlerLoop) Claim(ctx context.Context) (intake.Claims, error) {
	a := h.a
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		c, err := a.inbox.ClaimAndAck(cctx, a.cfg.HandlerLease, handlerBatch, h.acks)
		cancel()
		if err != nil {
			a.settleAcks(ctx, h.acks)
			h.acks = nil
			return c, fmt.Errorf("claiming updates: %w", err)
		}
		a.ackedOnClaim(h.acks, c.Acked)
		h.acks = nil
		if len(c.Updates) > 0 {
			h.wakeOne()
			return c, nil
		}
		if c.RetryIn == 0 {
			continue
		}
		retryIn := c.RetryIn
		if retryIn < 0 || retryIn > time.Second {
			retryIn = time.Second
		}
		t := time.NewTimer(retryIn)
		select {
		case <-h.kick:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	a.settleAcks(ctx, h.acks)
	h.acks = nil
	return intake.Claims{}, consumer.ErrStopped
}

// Handle handles a claimed batch; its finished updates are acked by the
// next claim, or settled at once before a back-off (an infrastructure
// failure: no finished update's lease may run out meanwhile).
func (h *handlerLoop) Handle(ctx context.Context, c intake.Claims) bool {
	finished, backoff := h.a.handleBatch(ctx, c.Updates, c.Errs)
	if backoff {
		h.a.settleAcks(ctx, finished)
		return true
	}
	h.acks = finished
	return false
}

// ackedOnClaim logs the acks a claim carried that did not apply: a lost
// lease (the update was claimed again elsewhere after its lease ran out,
// and is skipped there as handled) or a job already gone.
func (a *App) ackedOnClaim(acks []intake.Claimed, acked []error) {
	for i, err := range acked {
		if err != nil && i < len(acks) && !errors.Is(err, lanes.ErrNoJob) {
			a.log.Warn("update's lease was lost before its ack; another handler takes it over (a no-op: it is marked handled)",
				slog.Int64("update_id", acks[i].ID), slog.Any("err", err))
		}
	}
}

// settler is the handlers' settle policy (consumer.Settler): each try
// bounded by 5 s, retried with intake.ErrorBackoff for at most a lease's
// length (the lease has lapsed by then: the update is claimed again and
// skipped as handled).
func (a *App) settler() consumer.Settler {
	return consumer.Settler{Try: 5 * time.Second, For: a.cfg.HandlerLease, Backoff: intake.ErrorBackoff(), Log: a.log}
}

// settleAcks acks the jobs of finished updates one by one (intake Ack),
// each try with a fresh context, retrying the ones that failed together
// until each is acked or its lease is provably lost, or for at most a
// lease's length (the leases have lapsed by then: the updates are claimed
// again and skipped as handled). Stopping does not cut it.
func (a *App) settleAcks(ctx context.Context, acks []intake.Claimed) {
	if len(acks) == 0 {
		return
	}
	errs := a.settler().SettleAll(context.WithoutCancel(ctx), "ack", len(acks),
		func(ctx context.Context, i int) error { return a.inbox.Ack(ctx, acks[i]) },
		func(i int) []slog.Attr { return []slog.Attr{slog.Int64("update_id", acks[i].ID)} })
	failed := 0
	var last error
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, lanes.ErrStaleLease):
			a.log.Warn("update's lease was lost before its ack; another handler takes it over (a no-op: it is marked handled)",
				slog.Int64("update_id", acks[i].ID), slog.Any("err", err))
		default:
			failed, last = failed+1, err
		}
	}
	if failed > 0 {
		a.log.Error("updates not acked within their lease; each is claimed again and skipped as handled",
			slog.Int("updates", failed), slog.Any("err", last))
	}
}

// handleBatch handles one lane's claimed updates in order and returns the
// ones it finished (marked handled; their jobs are still to be acked, see
// handlerLoop). A failure stops the batch: the failed update is retried
// later (or dead-lettered) and the rest are released, so the lane keeps
// its order. It runs under the runner (consumer.RunBatch): the batch's
// leases are kept alive while it runs (each finished update's too: its ack
// waits for the handler's next claim), and an update whose lease is lost
// or has less than half a lease left is not started: it and the rest are
// released, so no other handler can be running the chat's next updates
// while this one still works through them.
func (a *App) handleBatch(ctx context.Context, ups []intake.Claimed, errs []error) (finished []intake.Claimed, backoff bool) {
	leases := make([]lanes.Lease, len(ups))
	for i := range ups {
		leases[i] = ups[i].Job.Lease
	}
	b := &updateBatch{a: a, ctx: ctx, ups: ups, errs: errs}
	// The claim was sent before now, so now + lease overestimates by the
	// claim's round trip at most; the keeper's Extend corrects it at lease/3.
	consumer.RunBatch(ctx, consumer.Batch{Leases: leases, Claimed: time.Now(), Length: a.cfg.HandlerLease,
		Extender: a.inbox.Store(), Left: a.cfg.HandlerLease / 2, Log: a.log}, b)
	return b.finished, b.backoff
}

// updateBatch is one batch of updates being handled (consumer.Jobs).
type updateBatch struct {
	a        *App
	ctx      context.Context
	ups      []intake.Claimed
	errs     []error
	finished []intake.Claimed
	backoff  bool
}

// Handle handles update i: finished (its ack waits for the next claim:
// Held), or settled otherwise and the batch stops.
func (b *updateBatch) Handle(i int) consumer.Verdict {
	done, backoff := b.a.handleClaimed(b.ctx, b.ups[i], b.errs[i])
	if !done {
		b.backoff = backoff
		return consumer.Stop
	}
	b.finished = append(b.finished, b.ups[i])
	return consumer.Held
}

// Rest releases the updates from on.
func (b *updateBatch) Rest(from int, why consumer.Why) {
	if why == consumer.StopLease {
		b.a.log.Warn("update's lease lapses before it could be handled; released with the rest of its batch",
			slog.Int64("update_id", b.ups[from].ID), slog.String("lane", b.ups[from].Lane), slog.Int("released", len(b.ups)-from))
	}
	for _, r := range b.ups[from:] {
		b.a.settle(b.ctx, r, "release", func(ctx context.Context) error { return b.a.inbox.Release(ctx, r) })
	}
}

// handleClaimed handles u (decodeErr: Claim's decoding error of it) and
// settles it: finished when handled (or handled before: marked handled,
// its job acked by the handler's next claim), retried after a failure,
// dead-lettered when it can never succeed or failed too often.
// It reports whether u was finished, and whether the handler should back
// off (an infrastructure failure).
func (a *App) handleClaimed(ctx context.Context, u intake.Claimed, decodeErr error) (finished, backoff bool) {
	if decodeErr != nil {
		a.log.Error("update queue: malformed job; dead-lettered", slog.String("job", string(u.Job.ID)), slog.Any("err", decodeErr))
		a.m.handled.WithLabelValues("malformed").Inc()
		a.deadLetter(ctx, u, decodeErr.Error())
		return false, false
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(a.opt.drain, a.cfg.HandlerLease/2))
	t0 := time.Now()
	result, keys, err := a.handleOne(hctx, u)
	cancel()
	a.m.latency.Observe(time.Since(t0).Seconds())
	if err == nil {
		a.m.handled.WithLabelValues(result).Inc()
		a.m.wait.Observe(time.Since(u.Recorded).Seconds())
		// Its job is acked by the handler's next claim (handlerLoop), and
		// only once it is marked handled: an ack without the mark would
		// leave its recorded time behind, and a record of it again (a
		// webhook resend) would run it again. Unmarked, its lease lapses and
		// it is claimed again (its replies are queued once: lanes.Dedupe).
		forget := make([]string, len(keys))
		for i, k := range keys {
			forget[i] = a.notifier.KeyName(k)
		}
		if !a.settle(ctx, u, "finish", func(ctx context.Context) error { return a.inbox.MarkHandled(ctx, u, forget...) }) {
			return false, true
		}
		return true, false
	}
	if errors.Is(err, errPermanent) {
		a.log.Error("update cannot be handled; dead-lettered", slog.Int64("update_id", u.ID), slog.Any("err", err))
		a.m.handled.WithLabelValues("malformed").Inc()
		a.deadLetter(ctx, u, err.Error())
		return false, false
	}
	a.m.handled.WithLabelValues(result).Inc()
	if result != "panic" {
		// An infrastructure failure (Valkey, the notifier): not the
		// update's fault, so it uses no attempt; it goes back to its lane
		// and this handler backs off before claiming again.
		a.log.Warn("update not handled; released for a retry", slog.Int64("update_id", u.ID), slog.String("lane", u.Lane), slog.Any("err", err))
		a.settle(ctx, u, "release", func(ctx context.Context) error { return a.inbox.Release(ctx, u) })
		return false, true
	}
	delay := min(retryBase<<min(u.Job.Attempts, 10), retryMax)
	var dead bool
	a.settle(ctx, u, "retry", func(ctx context.Context) error {
		var err2 error
		dead, err2 = a.inbox.Retry(ctx, u, delay, err.Error())
		return err2
	})
	if dead {
		a.m.dead.Inc()
		a.log.Error("update failed too often; dead-lettered (see /dlq)", slog.Int64("update_id", u.ID),
			slog.String("lane", u.Lane), slog.Int("attempts", u.Job.Attempts+1), slog.Any("err", err))
	} else {
		a.log.Warn("update failed; will retry", slog.Int64("update_id", u.ID), slog.String("lane", u.Lane),
			slog.Int("attempt", u.Job.Attempts+1), durationAttr("retry_in", delay), slog.Any("err", err))
	}
	return false, false
}

func (a *App) deadLetter(ctx context.Context, u intake.Claimed, reason string) {
	a.settle(ctx, u, "dead-letter", func(ctx context.Context) error { return a.inbox.Dead(ctx, u, reason) })
	a.m.dead.Inc()
}

// settle runs one settlement of u (finish, retry, release, dead-letter)
// with the handlers' settler until it succeeds, each try with a fresh
// context: u's fate is known, so it is not dropped after one failed try.
// Stopping does not cut it. It stops when u's lease is provably lost
// (lanes.ErrStaleLease: another handler has it, and the lane's handled mark
// makes a second run a no-op) or after a lease's length of failures (the
// lease has lapsed by then). It reports whether the settlement applied.
func (a *App) settle(ctx context.Context, u intake.Claimed, what string, f func(context.Context) error) bool {
	err := a.settler().Settle(context.WithoutCancel(ctx), what, f, slog.Int64("update_id", u.ID))
	switch {
	case err == nil:
		return true
	case errors.Is(err, lanes.ErrStaleLease):
		a.log.Warn("update's lease was lost before it settled; another handler takes it over", slog.String("settle", what),
			slog.Int64("update_id", u.ID), slog.Any("err", err))
	default:
		a.log.Error("update not settled within its lease; it is handled again (a no-op if it was handled)", slog.String("settle", what),
			slog.Int64("update_id", u.ID), slog.Any("err", err))
	}
	return false
}

// errPermanent marks an update that can never be handled (it does not
// decode): dead-lettered at once.
var errPermanent = errors.New("permanent")

// handleOne runs update u through the handler mux (a.mux, synchronously)
// and enqueues the replies of its Outcome, then runs its hooks, unless u's
// lane's handled mark says it was handled before. It returns the result
// label (ok, duplicate, panic, retry), the notifier keys the update used
// (for MarkHandled's forget list), and an error when u must be tried
// again (a panic, an infrastructure failure) or never (errPermanent).
// Nothing is settled here.
func (a *App) handleOne(ctx context.Context, u intake.Claimed) (string, []string, error) {
	done, err := a.inbox.Handled(ctx, u)
	if err != nil {
		return "retry", nil, err
	}
	if done {
		a.m.duplicates.Inc()
		a.log.Info("update already handled; skipped", slog.Int64("update_id", u.ID))
		return "duplicate", nil, nil
	}
	var upd models.Update
	if err := json.Unmarshal(u.JSON, &upd); err != nil {
		return "malformed", nil, fmt.Errorf("%w: update %d does not decode: %v", errPermanent, u.ID, err)
	}
	req := &update.Request{Update: &upd, ID: u.ID, Epoch: u.Epoch}
	out := a.mux.Handle(ctx, req)
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
		_, err := a.notifier.Notify(ctx, o.ChatID, notifier.Message{Text: o.Text, Class: notifier.Reply, ReplyTo: o.ReplyTo,
			Key: out.Key(req, strconv.Itoa(i))})
		if errors.Is(err, notifier.ErrInvalid) {
			a.log.Error("reply rejected by the notifier; dropped", slog.Int64("update_id", u.ID), slog.Any("err", err))
			continue
		}
		if errors.Is(err, lanes.ErrLaneFull) {
			a.floods.refused.Inc()
			a.log.Warn("reply dropped: the chat's reply lane is full (REPLY_LANE_DEPTH)", slog.Int64("update_id", u.ID),
				slog.Int64("chat", o.ChatID))
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

// chatOf returns the chat an update comes from (0 when none).
func chatOf(u *models.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		return u.CallbackQuery.Message.Message.Chat.ID
	case u.MyChatMember != nil:
		return u.MyChatMember.Chat.ID
	case u.ChatMember != nil:
		return u.ChatMember.Chat.ID
	}
	return 0
}

// onPanic logs a handler's panic and counts it (update.Recover): the
// update is retried a few times and then dead-lettered with the panic as
// its reason (a poison update must not block its chat), and the process
// goes on.
func (a *App) onPanic(_ context.Context, r *update.Request, p *update.PanicError) {
	a.m.panics.Inc()
	a.log.Error("handler panicked; the update is retried, then dead-lettered", slog.Int64("update_id", r.Update.ID),
		slog.String("panic", fmt.Sprint(p.Value)), slog.String("stack", string(p.Stack)))
}

// chatMiddleware records the chat as known (the broadcast audience) and
// how it is named (the chat directory: sent only when this process has not
// recorded that name yet, written only when it changed),
// and marks it active in the notifier (a chat that blocked the bot and talks to
// it again gets notifications again) before any handler runs: the SADD
// and the name's EVAL ride in MarkActive's pipeline, one round trip for all (a migrated
// chat's alias target takes more). A failure is the update's Outcome (an
// infrastructure error: retried); the handler does not run.
func (a *App) chatMiddleware(next update.Handler) update.Handler {
	return update.HandlerFunc(func(ctx context.Context, r *update.Request) update.Outcome {
		u := r.Update
		if chat := chatOf(u); chat != 0 {
			also := []valkey.Completed{a.audience.AddCmd(chat)}
			id, n, ok := nameOf(u)
			rec, named := valkey.Completed{}, false
			if ok && id == chat {
				rec, named = a.chatDir.Record(chat, n)
			}
			if named {
				also = append(also, rec)
			}
			if err := a.notifier.Chats().MarkActiveWith(ctx, chat, also...); err != nil {
				return update.Failed(fmt.Errorf("record chat %d: %w", chat, err))
			}
			if named {
				a.chatDir.Recorded(chat, n)
			}
		}
		return next.Handle(ctx, r)
	})
}

// newMux builds the update handlers' mux: the extra handlers (WithHandler)
// first, then the commands and callback queries (registerHandlers), the
// game UI's Other for the rest; every one under update.Recover (outermost) and
// chatMiddleware.
func (a *App) newMux() *update.Mux {
	m := update.NewMux()
	m.Use(update.Recover(a.onPanic), a.chatMiddleware)
	for _, h := range a.opt.handlers {
		m.RouteFunc(h.match, h.h)
	}
	a.registerHandlers(m)
	m.Default(update.HandlerFunc(a.ui.Other))
	return m
}
