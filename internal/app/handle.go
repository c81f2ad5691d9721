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

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/valkey-io/valkey-go"

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

// runHandlers runs HANDLERS handler goroutines until ctx ends. Each claims
// recorded updates from the update queue itself (a batch of one lane, in
// update_id order: one chat's updates are handled one at a time, in order,
// and different chats concurrently) and handles them; claims are not
// funnelled through one loop, so claiming scales with the handlers. Idle
// handlers wait for a lanes wake-up (an update recorded) or the claim's
// RetryIn; a handler that got work wakes one more idle handler, so a burst
// wakes them all. When ctx ends the batches in progress finish (each
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
	for range n {
		wg.Go(func() { a.handlerLoop(ctx, log, kick, wakeOne) })
	}
	wg.Wait()
	return nil
}

// handlerLoop is one handler goroutine of runHandlers. The jobs of the
// updates it finished are acked by its next claim, in the same atomic call
// (intake ClaimAndAck): one round trip and one script per update fewer
// than an ack of its own. Each finished update is marked handled
// (MarkHandled) before its ack is sent, so an ack that never arrives
// only makes the update be claimed again and skipped as handled. When a
// claim fails, its acks may or may not have applied: they are settled on
// their own (settleAcks), as are the acks still pending when the handler
// stops or backs off.
func (a *App) handlerLoop(ctx context.Context, log *slog.Logger, kick <-chan struct{}, wakeOne func()) {
	var acks []intake.Claimed
	defer func() { a.settleAcks(ctx, acks) }()
	errWait := time.Duration(0)
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		c, err := a.inbox.ClaimAndAck(cctx, a.cfg.HandlerLease, handlerBatch, acks)
		cancel()
		if err != nil {
			a.settleAcks(ctx, acks)
			acks = nil
			errWait = intake.NextBackoff(errWait)
			log.Warn("claiming updates failed; retrying", slog.Any("err", err), durationAttr("retry_in", errWait))
			_ = intake.SleepCtx(ctx, errWait)
			continue
		}
		a.ackedOnClaim(acks, c.Acked)
		acks = nil
		if len(c.Updates) > 0 {
			wakeOne()
			finished, backoff := a.handleBatch(ctx, c.Updates, c.Errs)
			acks = finished
			if !backoff {
				errWait = 0
				continue
			}
			// An infrastructure failure: settle what is known before
			// waiting, so no finished update's lease runs out meanwhile.
			a.settleAcks(ctx, acks)
			acks = nil
			errWait = intake.NextBackoff(errWait)
			_ = intake.SleepCtx(ctx, errWait)
			continue
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
		case <-kick:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
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

// settleAcks acks the jobs of finished updates one by one (intake Ack),
// each try with a fresh context, retrying the ones that failed until each
// is acked or its lease is provably lost, or for at most a lease's length
// (the leases have lapsed by then: the updates are claimed again and
// skipped as handled).
func (a *App) settleAcks(ctx context.Context, acks []intake.Claimed) {
	start, wait := time.Now(), time.Duration(0)
	for len(acks) > 0 {
		var left []intake.Claimed
		var last error
		for _, u := range acks {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err := a.inbox.Ack(sctx, u)
			cancel()
			switch {
			case err == nil:
			case errors.Is(err, lanes.ErrStaleLease):
				a.log.Warn("update's lease was lost before its ack; another handler takes it over (a no-op: it is marked handled)",
					slog.Int64("update_id", u.ID), slog.Any("err", err))
			default:
				left, last = append(left, u), err
			}
		}
		acks = left
		if len(acks) == 0 {
			return
		}
		if time.Since(start) > a.cfg.HandlerLease {
			a.log.Error("updates not acked within their lease; each is claimed again and skipped as handled",
				slog.Int("updates", len(acks)), slog.Any("err", last))
			return
		}
		wait = intake.NextBackoff(wait)
		a.log.Warn("acking handled updates failed; retrying", slog.Int("updates", len(acks)), slog.Any("err", last), durationAttr("retry_in", wait))
		time.Sleep(wait)
	}
}

// handleBatch handles one lane's claimed updates in order and returns the
// ones it finished (marked handled; their jobs are still to be acked, see
// handlerLoop). A failure stops
// the batch: the failed update is retried later (or dead-lettered) and the
// rest are released, so the lane keeps its order. The batch's leases are
// extended while it runs (see batchLeases), and an update whose lease is
// lost or has less than half a lease left is not started: it and the rest
// are released, so no other handler can be running the chat's next
// updates while this one still works through them.
func (a *App) handleBatch(ctx context.Context, ups []intake.Claimed, errs []error) (finished []intake.Claimed, backoff bool) {
	release := func(rest []intake.Claimed) {
		for _, r := range rest {
			a.settle(ctx, r, "release", func(ctx context.Context) error { return a.inbox.Release(ctx, r) })
		}
	}
	leases := a.keepLeases(ctx, ups)
	defer leases.stop()
	for i, u := range ups {
		if ctx.Err() != nil {
			release(ups[i:]) // stopping: the updates not started go back
			return finished, false
		}
		if !leases.startable(i, a.cfg.HandlerLease/2) {
			a.log.Warn("update's lease lapses before it could be handled; released with the rest of its batch",
				slog.Int64("update_id", u.ID), slog.String("lane", u.Lane), slog.Int("released", len(ups)-i))
			release(ups[i:])
			return finished, false
		}
		done, backoff := a.handleClaimed(ctx, u, errs[i])
		if !done {
			leases.settled(i + 1)
			release(ups[i+1:])
			return finished, backoff
		}
		leases.finished(i)
		finished = append(finished, u)
	}
	return finished, false
}

// batchLeases keeps the leases of a claimed batch alive while it is
// handled: every HandlerLease/3 it extends (lanes Store.Extend) the lease
// of each update not yet settled, and of each finished one (its ack waits
// for the handler's next claim), by another HandlerLease, as the worker
// does for a slow send. It tracks each lease's deadline on the local clock
// (the time an Extend was sent plus its length: never later than the
// server's), and marks a lease lost when Extend fails.
type batchLeases struct {
	mu       sync.Mutex
	next     int         // the first update not yet settled (updates before it are not extended unless finished)
	done     []bool      // finished: extended until the batch ends (its ack rides on the next claim)
	deadline []time.Time // local-clock lower bound of each lease's end
	lost     []bool      // Extend failed: the lease may be held elsewhere
	cancel   context.CancelFunc
	stopped  chan struct{}
}

// keepLeases starts extending ups' leases until stop.
func (a *App) keepLeases(ctx context.Context, ups []intake.Claimed) *batchLeases {
	claimed := time.Now()
	b := &batchLeases{deadline: make([]time.Time, len(ups)), lost: make([]bool, len(ups)), done: make([]bool, len(ups)), stopped: make(chan struct{})}
	for i := range ups {
		// The claim was sent before now, so now + lease overestimates by
		// the claim's round trip at most; Extend corrects it at lease/3.
		b.deadline[i] = claimed.Add(a.cfg.HandlerLease)
	}
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.cancel = cancel
	go func() {
		defer close(b.stopped)
		every := a.cfg.HandlerLease / 3
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-kctx.Done():
				return
			case <-t.C:
			}
			b.mu.Lock()
			from := b.next
			b.mu.Unlock()
			for i := range ups {
				b.mu.Lock()
				skip := i < from && !b.done[i]
				b.mu.Unlock()
				if skip {
					continue
				}
				sent := time.Now()
				ectx, ecancel := context.WithTimeout(kctx, every)
				_, err := a.inbox.Store().Extend(ectx, ups[i].Job.Lease, a.cfg.HandlerLease)
				ecancel()
				if kctx.Err() != nil {
					return
				}
				b.mu.Lock()
				if i >= b.next || b.done[i] { // not settled meanwhile
					if err != nil {
						// A lost lease stops the batch at i (startable);
						// another error leaves the deadline as it was, so
						// the batch stops when too little of it is left.
						b.lost[i] = errors.Is(err, lanes.ErrStaleLease)
						a.log.Warn("extending an update's lease failed", slog.Int64("update_id", ups[i].ID), slog.Any("err", err))
					} else {
						b.deadline[i] = sent.Add(a.cfg.HandlerLease)
					}
				}
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// startable reports whether update i may be started: its lease is held
// with at least left to run (an update's handling is bounded by
// HandlerLease/2). It marks the updates before i settled.
func (b *batchLeases) startable(i int, left time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next = i
	return !b.lost[i] && time.Until(b.deadline[i]) >= left
}

// settled marks the updates before next settled: their leases are no
// longer extended.
func (b *batchLeases) settled(next int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next = next
}

// finished marks update i finished: its lease is extended until stop
// (its ack is sent with the handler's next claim).
func (b *batchLeases) finished(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done[i] = true
}

// stop ends the extensions and waits for the extender to return.
func (b *batchLeases) stop() {
	b.cancel()
	<-b.stopped
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
// until it succeeds, each try with a fresh context: u's fate is known, so
// it is not dropped after one failed try. It stops when u's lease is
// provably lost (lanes.ErrStaleLease: another handler has it, and the
// lane's handled mark makes a second run a no-op) or after a lease's
// length of failures (the lease has lapsed by then). It reports whether
// the settlement applied.
func (a *App) settle(ctx context.Context, u intake.Claimed, what string, f func(context.Context) error) bool {
	start, wait := time.Now(), time.Duration(0)
	for {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := f(sctx)
		cancel()
		switch {
		case err == nil:
			return true
		case errors.Is(err, lanes.ErrStaleLease):
			a.log.Warn("update's lease was lost before it settled; another handler takes it over", slog.String("settle", what),
				slog.Int64("update_id", u.ID), slog.Any("err", err))
			return false
		case time.Since(start) > a.cfg.HandlerLease:
			a.log.Error("update not settled within its lease; it is handled again (a no-op if it was handled)", slog.String("settle", what),
				slog.Int64("update_id", u.ID), slog.Any("err", err))
			return false
		}
		wait = intake.NextBackoff(wait)
		a.log.Warn("settling an update failed; retrying", slog.String("settle", what), slog.Int64("update_id", u.ID),
			slog.Any("err", err), durationAttr("retry_in", wait))
		time.Sleep(wait)
	}
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
// first, then the commands and callback queries (registerHandlers), onOther
// for the rest; every one under update.Recover (outermost) and
// chatMiddleware.
func (a *App) newMux() *update.Mux {
	m := update.NewMux()
	m.Use(update.Recover(a.onPanic), a.chatMiddleware)
	for _, h := range a.opt.handlers {
		m.RouteFunc(h.match, h.h)
	}
	a.registerHandlers(m)
	m.Default(update.HandlerFunc(a.onOther))
	return m
}

// newBot builds the go-telegram/bot client used for getMe, setMyCommands
// and answerCallbackQuery; it never polls (Start is not called), never
// dispatches updates (a.mux does) and never sends chat messages (those go
// through the notifier).
func (a *App) newBot() (*bot.Bot, error) {
	opts := []bot.Option{
		bot.WithSkipGetMe(),
		bot.WithServerURL(a.cfg.APIURL),
		bot.WithNotAsyncHandlers(),
		bot.WithErrorsHandler(func(err error) {
			a.log.Error("telegram client error", slog.Any("err", a.redactor.Error(err)))
		}),
		bot.WithDebugHandler(func(format string, args ...any) {
			a.log.Debug(a.redactor.String(fmt.Sprintf(format, args...)))
		}),
	}
	b, err := bot.New(a.cfg.Token, opts...)
	if err != nil {
		return nil, fmt.Errorf("app: telegram client: %w", err)
	}
	return b, nil
}
