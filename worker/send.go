package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/chatstate"
	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/tgapi"
)

// call makes the Bot API call of job p in chat (sendMessage, or
// editMessageText for an edit) with parseMode; a call that got an answer
// adds its round trip to the round-trip floor (floor.go). It returns the
// HTTP status (0 when no reply came), the message id of the reply (0 when none),
// whether the outcome is unknown (the request was written but no response
// came: Telegram may have delivered it) and the error (a *tgapi.Error, its
// texts redacted).
func (w *Worker) call(ctx context.Context, chat int64, p tgjob.Job, parseMode string) (int, int, bool, error) {
	// SendTimeout bounds the call: the client's own (tgapi.Config.Timeout,
	// a deadline of the connection's, no context and timer of its own).
	w.m.sendsInFlight.Inc()
	defer w.m.sendsInFlight.Dec()
	t0 := time.Now()
	method := "sendMessage"
	var (
		id  int
		err error
	)
	var markup models.ReplyMarkup
	if p.Markup != "" {
		markup = json.RawMessage(p.Markup)
	}
	if p.IsEdit() {
		method = "editMessageText"
		id, err = w.api.EditMessageTextID(ctx, &bot.EditMessageTextParams{
			ChatID: chat, MessageID: p.MessageID, Text: p.Text, ParseMode: models.ParseMode(parseMode), ReplyMarkup: markup,
		})
	} else {
		params := &bot.SendMessageParams{ChatID: chat, Text: p.Text, ParseMode: models.ParseMode(parseMode), DisableNotification: p.Silent, ReplyMarkup: markup,
			AllowPaidBroadcast: p.Paid}
		if p.ReplyTo != 0 {
			params.ReplyParameters = &models.ReplyParameters{MessageID: p.ReplyTo, AllowSendingWithoutReply: true}
		}
		id, err = w.api.SendMessageID(ctx, params)
	}
	rtt := time.Since(t0)
	w.m.latencyBy.get(method).Observe(rtt.Seconds())
	status, unknown := http.StatusOK, false
	if err != nil {
		id, status = 0, tgapi.Status(err)
		if e := tgapi.AsError(err); e != nil {
			unknown = e.OutcomeUnknown()
		}
	}
	if status != 0 {
		w.floor.observe(rtt, time.Now())
	}
	return status, id, unknown, err
}

// answered sets the round-trip floor on job's lease for its settle
// (lanes.Lease.Floor) after a send answered with HTTP status: the smaller
// of this process's floor and the store's (floor.go; 0 when the store's
// was not read for floorShareStale). No answer (status 0) leaves the floor
// 0: the request may have reached Telegram at any time until the settle,
// so lanes counts it from the settle.
func (w *Worker) answered(job *lanes.Job, status int) {
	job.Floor = 0
	if status != 0 {
		now := time.Now()
		job.Floor = w.shared.settle(w.floor.get(now), now)
		w.m.rttFloor.Set(job.Floor.Seconds())
	}
}

// next says how a batch goes on after one job.
type next struct {
	stop bool
	// deadRest dead-letters the rest of the batch with this reason (code
	// deadCode) instead of releasing it.
	deadRest, deadCode string
	// after runs once the rest of the batch is settled.
	after func(ctx context.Context)
}

// runBatch sends a claimed batch (heads of one lane, in order, claimed at
// claimed) one by one under kept leases (consumer.RunBatch: renewed every
// Lease/3). On a failure the rest of the batch goes back to its lane
// (Release: no attempt used), so later messages never overtake an earlier
// one; on shutdown (runCtx done), or when a job's lease is lost or has run
// out on the local clock, the jobs not started are released. Sends use
// workCtx (cut ShutdownGrace after runCtx ends); settling and lease
// renewals use drain (see settle), which ends at the shutdown's drain
// deadline. It returns how many jobs it sent (the rest were released or
// dead-lettered unsent).
func (w *Worker) runBatch(runCtx, workCtx, drain context.Context, claimed time.Time, jobs []lanes.Job) int {
	leases := make([]lanes.Lease, len(jobs))
	for i := range jobs {
		leases[i] = jobs[i].Lease
	}
	return consumer.RunBatch(runCtx, consumer.Batch{Leases: leases, Claimed: claimed, Length: w.cfg.Lease, Extender: w.store,
		Keep: drain, Log: w.log}, &sendBatch{w: w, workCtx: workCtx, drain: drain, jobs: jobs})
}

// sendBatch is one batch being sent (consumer.Jobs).
type sendBatch struct {
	w              *Worker
	workCtx, drain context.Context
	jobs           []lanes.Job
	nx             next // of the job that stopped the batch
}

// Handle sends job i and settles it.
func (b *sendBatch) Handle(i int) consumer.Verdict {
	nx := b.w.process(b.workCtx, b.drain, b.jobs[i])
	b.w.settled(1)
	if !nx.stop {
		return consumer.Done
	}
	b.nx = nx
	return consumer.Stop
}

// Rest releases jobs from on (dead-letters them after a 403: next.deadRest),
// then runs the stopping job's after.
func (b *sendBatch) Rest(from int, why consumer.Why) {
	w, nx := b.w, b.nx
	if why != consumer.StopHandled {
		nx = next{}
	}
	for j := from; j < len(b.jobs); j++ {
		if nx.deadRest != "" {
			w.deadUntried(b.drain, b.jobs[j], decodeQuiet(b.jobs[j].Payload), nx.deadCode, nx.deadRest)
		} else {
			w.release(b.drain, b.jobs[j])
		}
		w.settled(1)
	}
	if nx.after != nil {
		sctx, cancel := settleCtx(b.drain)
		nx.after(sctx)
		cancel()
	}
}

// expand turns a lazy broadcast's copy p into its message
// (notifier.Notifier.ExpandCopy; CachedCopy once its template was read, no
// context made). A copy whose broadcast is gone or whose
// part is not in the template is dead-lettered as malformed; a store error
// releases the batch from here (tried again later). A non-nil next ends the
// job there.
func (w *Worker) expand(drain context.Context, job lanes.Job, p tgjob.Job) (tgjob.Job, *next) {
	full, ok, err := w.n.CachedCopy(p)
	if !ok { // the broadcast's first copy in this process: its template read
		sctx, cancel := settleCtx(drain)
		full, err = w.n.ExpandCopy(sctx, p)
		cancel()
	}
	if err == nil {
		return full, nil
	}
	if errors.Is(err, notifier.ErrUnknownBroadcast) || errors.Is(err, notifier.ErrInvalid) {
		w.log.Warn("malformed job", slog.String("job", string(job.ID)), slog.String("lane", job.Group), slog.Any("err", err))
		w.deadUntried(drain, job, p, ReasonMalformed, ReasonMalformed)
		return p, &next{}
	}
	w.log.Warn("broadcast copy: template", slog.String("job", string(job.ID)), slog.Any("err", w.redactor.Error(err)))
	w.release(drain, job)
	return p, &next{stop: true}
}

func decodeQuiet(p []byte) tgjob.Job {
	j, _ := tgjob.Decode(p)
	return j
}

// process sends one job (a message or an edit) with workCtx and settles it
// by the error table with drain (see settle).
func (w *Worker) process(workCtx, drain context.Context, job lanes.Job) next {
	p, err := tgjob.Decode(job.Payload)
	chat, cerr := tgjob.ChatID(job.Group)
	if err != nil || cerr != nil {
		w.log.Warn("malformed job", slog.String("job", string(job.ID)), slog.String("lane", job.Group),
			slog.Any("err", w.redactor.Error(errors.Join(err, cerr))))
		w.deadUntried(drain, job, p, ReasonMalformed, ReasonMalformed)
		return next{}
	}
	if p.IsCopy() {
		var nx *next
		if p, nx = w.expand(drain, job, p); nx != nil {
			return *nx
		}
	}
	// Only the paid queue's copies are sent with allow_paid_broadcast.
	p.Paid = job.Queue == tgjob.QueuePaid && !p.IsEdit()
	if p.IsEdit() && p.Ref != "" {
		var (
			nx   *next
			gone bool
		)
		if p, gone, nx = w.resolveRef(drain, job, p); nx != nil {
			return *nx
		}
		if gone {
			return w.sendFresh(workCtx, drain, job, chat, p)
		}
	}
	status, msgID, unknown, err := w.call(workCtx, chat, p, p.ParseMode)
	w.answered(&job, status)
	// The outcome is known from here: settling gets contexts of its own
	// (the send may have used up any deadline set before it), see settle.
	if err == nil {
		w.delivered(drain, job, p, msgID)
		return next{}
	}
	sctx, cancel := settleCtx(drain)
	defer cancel()
	d := classify(err, w.cfg.DefaultRetryAfter)
	if d.act == actPlain {
		// Telegram could not parse the markup: resend once as plain text.
		w.log.Info("markup rejected, resending as plain text", slog.Int64("chat", chat), slog.String("job", string(job.ID)))
		status, msgID, unknown, err = w.call(workCtx, chat, p, "")
		w.answered(&job, status)
		if err == nil {
			w.delivered(drain, job, p, msgID)
			return next{}
		}
		d = classify(err, w.cfg.DefaultRetryAfter)
		if d.act == actPlain {
			d = decision{act: actDead, reason: ReasonParse}
		}
	}
	if d.act == actDone {
		// An edit that changes nothing: the message shows the text already.
		w.delivered(drain, job, p, 0)
		return next{}
	}
	if p.IsEdit() && p.Fresh && (d.reason == ReasonEditNotFound || d.reason == ReasonCantEdit) {
		// The message is gone or too old to edit: send it afresh.
		return w.sendFresh(workCtx, drain, job, chat, p)
	}
	return w.failed(workCtx, drain, sctx, job, chat, p, status, unknown, err, d)
}

// failed settles job p after its send failed with err (HTTP status; unknown:
// written but unanswered; decision d) by the error table.
func (w *Worker) failed(workCtx, drain, sctx context.Context, job lanes.Job, chat int64, p tgjob.Job, status int, unknown bool, err error, d decision) next {
	rerr := w.redactor.Error(err)
	if workCtx.Err() != nil && d.act == actRetry {
		// Shutdown cut the send: not the message's fault.
		w.release(drain, job)
		return next{stop: true}
	}
	f := failure{drain: drain, sctx: sctx, job: job, chat: chat, p: p, rerr: rerr,
		attrs: []any{slog.Int64("chat", chat), slog.String("job", string(job.ID)), slog.String("queue", job.Queue), slog.Any("err", rerr)}}
	if d.act == actCannotPay && (!p.Paid || p.Broadcast == "") {
		d = decision{act: actDead, reason: ReasonBadRequest} // not a paid copy: an ordinary 400
	}
	if unknown && d.act == actRetry {
		// Written, no answer: Telegram may have delivered it. Sent again
		// at most once (a duplicate is better than a lost reply, two are
		// not), then dead-lettered.
		w.m.unknown.Inc()
		again, merr := w.unknownAgain(drain, job)
		if merr == nil && again {
			reason := ReasonUnknownOutcome + ": no answer twice, maybe delivered; not sent again: " + rerr.Error()
			w.dead(drain, job, p, ReasonUnknownOutcome, reason)
			return next{stop: true}
		}
		w.log.Warn("send outcome unknown (request written, no answer); retrying once", f.attrs...)
	}
	switch d.act {
	case actPark:
		return w.parkChat(f, d.retryAfter)
	case actForbidden:
		return w.forbidChat(f)
	case actDead:
		w.dead(drain, job, p, d.reason, deadReason(d.reason, rerr))
		return next{stop: true}
	case actMigrate:
		return w.holdMigrated(f, d.migrateTo)
	case actCannotPay:
		return w.haltPaid(f)
	case actPauseAll:
		w.release(drain, job)
		w.pauseAll(sctx, w.cfg.UnauthorizedPause, WhyUnauthorized)
		return next{stop: true}
	default:
		return w.retryLater(f, status)
	}
}

// failure is a failed send being settled by failed's rows: the drain and
// settle contexts, the job, its chat and payload, the send's error
// (redacted) and the log attributes (chat, job, queue, err).
type failure struct {
	drain, sctx context.Context
	job         lanes.Job
	chat        int64
	p           tgjob.Job
	rerr        error
	attrs       []any
}

// parkChat is the 429 row: park the chat's lanes in every queue for
// retryAfter, then release the job; 429s from several chats at once pause
// the whole store (floodDetector).
func (w *Worker) parkChat(f failure, retryAfter time.Duration) next {
	w.m.tooMany.WithLabelValues(f.job.Queue).Inc()
	// Judged by when the send was claimed: before the lease is released.
	w.revertProbe(f.sctx, f.job.Lease)
	// Park before Release, so no claimer serves the lane in between.
	var until time.Time
	for _, q := range tgjob.AllQueues() {
		perr := w.settle(f.drain, f.job, "park", func(ctx context.Context) error {
			u, err := w.inspector.Park(ctx, q, f.job.Group, retryAfter)
			until = u
			return err
		})
		if perr != nil {
			w.log.Error("park failed", append(f.attrs, slog.Any("park_err", w.redactor.Error(perr)))...)
		}
	}
	w.release(f.drain, f.job)
	w.log.Info("429: chat parked", append(f.attrs, slog.String("retry_after", retryAfter.String()), slog.Time("until", until))...)

	if sig, global := w.flood.note(f.chat, f.job.Queue, retryAfter, time.Now(), w.cfg.GlobalFloodWindow, w.cfg.GlobalFloodChats); global {
		// Lower first: whether a budget binds is judged by its sends since
		// the last pause ended (lanes LowerBudget), not this one.
		w.lowerBudgets(f.sctx, sig.queues, WhyFlood)
		w.pauseAll(f.sctx, sig.pause, WhyFlood)
	}
	return next{stop: true}
}

// forbidChat is the 403 row: mark the chat inactive, dead-letter its lanes
// in every queue and the job, and the rest of the batch after it.
func (w *Worker) forbidChat(f failure) next {
	// Mark and drain the chat while this lease still holds its lane
	// (an ordered lane with a job in flight is not served), so no
	// sender sends the next message in between.
	reason := deadReason(ReasonForbidden, f.rerr)
	if merr := w.chats.MarkInactive(f.sctx, f.chat); merr != nil {
		w.log.Error("mark inactive failed", append(f.attrs, slog.Any("mark_err", w.redactor.Error(merr)))...)
	}
	for _, q := range tgjob.AllQueues() {
		// A broadcast copy swept is counted failed "forbidden" in its
		// progress by the sweep's own script (its dead tally, from its
		// enqueue: notifier's lanes.CountDead).
		ids, derr := w.inspector.DeadLane(f.sctx, q, f.job.Group, reason, lanes.CountedAs(ReasonForbidden))
		if derr != nil {
			w.log.Error("dead lane failed", append(f.attrs, slog.Any("lane_err", w.redactor.Error(derr)))...)
		}
		if len(ids) > 0 {
			w.m.dead.WithLabelValues(ReasonForbidden).Add(float64(len(ids)))
		}
	}
	w.dead(f.drain, f.job, f.p, ReasonForbidden, reason)
	w.log.Warn("403: chat inactive, its messages dead-lettered", f.attrs...)
	return next{stop: true, deadRest: reason, deadCode: ReasonForbidden}
}

// holdMigrated is the migrate_to_chat_id row: hold the old lane, release
// the job, and move the lane to chat to once the batch is settled.
func (w *Worker) holdMigrated(f failure, to int64) next {
	// Hold the old lane (both queues) so nobody claims it between the
	// release and the move; the move is done once the rest of the
	// batch is released too, then the hold is lifted.
	for _, q := range tgjob.AllQueues() {
		perr := w.settle(f.drain, f.job, "park", func(ctx context.Context) error {
			_, err := w.inspector.Park(ctx, q, f.job.Group, migrateHold)
			return err
		})
		if perr != nil {
			w.log.Error("park failed", append(f.attrs, slog.Any("park_err", w.redactor.Error(perr)))...)
		}
	}
	w.release(f.drain, f.job)
	group, chat := f.job.Group, f.chat
	return next{stop: true, after: func(ctx context.Context) { w.migrate(ctx, group, chat, to) }}
}

// haltPaid is the cannot-pay row of a paid copy: halt the paid queue and
// give the copy back.
func (w *Worker) haltPaid(f failure) next {
	// The bot cannot pay for paid copies: halt the paid queue and pause
	// it in lanes (every claimer skips it from its next claim; see
	// paidHalt) and give the copy back, unsent and without using an
	// attempt; the admin continues free or stops.
	halted, herr := w.n.HaltPaid(f.sctx, f.p.Broadcast)
	if herr != nil {
		w.log.Error("halt paid queue failed", append(f.attrs, slog.Any("halt_err", w.redactor.Error(herr)))...)
	}
	if !halted && herr == nil {
		// Its broadcast was stopped (while this copy was in flight):
		// nothing to halt; the release drops the copy (lanes Store.Cancel
		// marked it), counted cancelled.
		w.release(f.drain, f.job)
		w.log.Info("paid broadcast stopped: the copy the bot cannot pay for is dropped, nothing halted", append(f.attrs, slog.String("broadcast", f.p.Broadcast))...)
		return next{stop: true}
	}
	w.m.paidHalts.Inc()
	w.paid.halt(f.sctx, w, f.p.Broadcast)
	w.release(f.drain, f.job)
	w.log.Warn("paid broadcast: the bot cannot pay; paid queue halted", append(f.attrs, slog.String("broadcast", f.p.Broadcast))...)
	return next{stop: true}
}

// retryLater is the transient row: nack with backoff (dead-lettered by
// the store past MaxAttempts). status is the send's HTTP status (logged).
func (w *Worker) retryLater(f failure, status int) next {
	delay := w.backoff(f.job.Attempts)
	var out lanes.Outcome
	count := counting(w.progressTally(f.p, ReasonMaxAttempts)) // applied only if dead-lettered
	nerr := w.settle(f.drain, f.job, "nack", func(ctx context.Context) error {
		var err error
		out, err = w.store.Nack(ctx, f.job.Lease, delay, "transient: "+f.rerr.Error(), count...)
		return err
	})
	if nerr != nil {
		w.log.Error("nack failed", append(f.attrs, slog.Any("nack_err", w.redactor.Error(nerr)))...)
		return next{stop: true}
	}
	switch out {
	case lanes.DeadLettered:
		w.m.dead.WithLabelValues(ReasonMaxAttempts).Inc()
		w.log.Warn("dead-lettered after max attempts", append(f.attrs, slog.Int("attempts", f.job.Attempts+1))...)
	case lanes.Cancelled:
		// Its broadcast was stopped while it was in flight: dropped by
		// the store and counted cancelled there (lanes Store.Cancel).
		w.log.Info("transient failure of a cancelled message: dropped, not retried", append(f.attrs, slog.Int("status", status))...)
	case lanes.Delivered:
		// An earlier claimer delivered it under a lease it lost (lanes
		// Store.AckLost): dropped by the store and counted sent there.
		w.log.Info("transient failure of a message delivered already: dropped, not retried", append(f.attrs, slog.Int("status", status))...)
	default:
		w.m.retried.Inc()
		w.log.Info("transient failure, retrying", append(f.attrs, slog.Int("status", status), slog.String("delay", delay.String()))...)
	}
	return next{stop: true}
}

// migrate moves a migrated group's lanes (jobs in order, limits) and its
// weight and pace (the chat's, in every queue: the first MoveLane carries
// them) to the new chat and records the alias, so later messages go there too. The
// alias is written first, so new messages stop landing on the old lane
// before it is drained; one that slips in is moved by its own 400.
func (w *Worker) migrate(ctx context.Context, oldGroup string, from, to int64) {
	attrs := []any{slog.Int64("from", from), slog.Int64("to", to)}
	if err := w.chats.SetAlias(ctx, from, to); err != nil {
		w.log.Error("record alias failed", append(attrs, slog.Any("err", w.redactor.Error(err)))...)
	}
	for _, q := range tgjob.AllQueues() {
		n, err := w.inspector.MoveLane(ctx, q, oldGroup, tgjob.Group(to))
		if err != nil {
			w.log.Error("move lane failed", append(attrs, slog.String("queue", q), slog.Any("err", w.redactor.Error(err)))...)
			continue
		}
		w.log.Info("group migrated, lane moved", append(attrs, slog.String("queue", q), slog.Int("jobs", n))...)
		if err := w.inspector.ResumeLane(ctx, q, oldGroup); err != nil {
			w.log.Error("resume old lane failed", append(attrs, slog.String("queue", q), slog.Any("err", w.redactor.Error(err)))...)
		}
	}
}

// migrateHold parks a migrated group's old lane while its jobs are moved;
// it is lifted right after the move (the time only matters if the worker
// dies in between).
const migrateHold = 30 * time.Second

func (w *Worker) pauseAll(ctx context.Context, d time.Duration, why string) {
	if err := w.inspector.PauseWhy(ctx, d, why); err != nil {
		w.log.Error("global pause failed", slog.Any("err", w.redactor.Error(err)))
		return
	}
	w.m.globalPauses.Inc()
	w.state.paused(PauseState{At: time.Now(), For: d, Why: why})
	w.log.Warn("global pause", slog.String("why", why), slog.String("for", d.String()))
}

// revertProbe takes the probed global budget back to the rate before the
// raise l's send was claimed at, when it was claimed at one (lanes
// RevertProbe: a 429 while the bot probes for more is the probe's answer,
// one 429 is enough), and does nothing otherwise (one script call). Counted in
// codemojex_worker_budget_decreases_total{queue,reason="429 while
// probing"}.
func (w *Worker) revertProbe(ctx context.Context, l lanes.Lease) {
	queue := l.Queue
	reverted, rate, err := w.store.RevertProbe(ctx, l, WhyProbe)
	if err != nil {
		w.log.Error("revert probe failed", slog.String("queue", queue), slog.Any("err", w.redactor.Error(err)))
		return
	}
	if reverted {
		w.m.decreases.WithLabelValues(queue, WhyProbe).Inc()
		w.log.Warn("budget probe taken back", slog.String("queue", queue), slog.String("why", WhyProbe), slog.Int("rate", rate))
	}
}

// lowerBudgets halves the budget of each of queues that binds at once
// (lanes LowerBudget: every process claims at the learned rate from its next
// claim; it climbs back while Telegram stops pushing back) after a global
// flood signal: Telegram's bot-wide limit is below what the budget let
// through. A decrease another process (or this one) made within the
// store's cooldown counts once. Counted in
// codemojex_worker_budget_decreases_total{queue,reason}.
func (w *Worker) lowerBudgets(ctx context.Context, queues []string, why string) {
	for _, q := range queues {
		o, err := w.store.LowerBudgetOutcome(ctx, q, why)
		if err != nil {
			w.log.Error("lower budget failed", slog.String("queue", q), slog.Any("err", w.redactor.Error(err)))
			continue
		}
		switch {
		case o.Lowered:
			w.m.decreases.WithLabelValues(q, why).Inc()
			w.log.Warn("budget lowered", slog.String("queue", q), slog.String("why", why), slog.Int("rate", o.Rate))
		case o.Released:
			w.log.Warn("budget at its floor: a burst of 429s there shows no limit, so its hold is released and it climbs again",
				slog.String("queue", q), slog.String("why", why), slog.Int("rate", o.Rate))
		case o.Forgiven:
			w.log.Info("budget kept: a clean epoch proved its rate, so the burst of 429s is no limit at it",
				slog.String("queue", q), slog.String("why", why), slog.Int("rate", o.Rate))
		}
	}
}

// delivered settles a job Telegram accepted: it records the message id of
// a send that asks for it (tgjob.Job.Track: a message edited later, for
// chatstate.Store.SentMessageID), acks the job and counts it (see
// settleDelivered).
func (w *Worker) delivered(ctx context.Context, job lanes.Job, p tgjob.Job, msgID int) {
	var record func(ctx context.Context) error
	if !p.IsEdit() && p.Track && msgID > 0 {
		record = func(ctx context.Context) error { return w.chats.RecordMessageID(ctx, job.ID, msgID) }
	}
	w.settleDelivered(ctx, job, p, record)
}

// settleDelivered acks delivered job, with record (nil: none) written
// before the ack when the store takes it at once. The ack is what stops a
// second delivery, so a failing record never holds it back: record gets
// one try first, then the ack is retried (settle) until it lands, and only
// then is a failed record retried. Record goes first when it can because
// the lane's next job becomes claimable at the ack, and on an ordered lane
// it may be an edit naming this send by Ref (notifier.EditLatest), which
// needs the id already recorded. The id is recorded even when the ack
// failed: the message was delivered either way.
func (w *Worker) settleDelivered(ctx context.Context, job lanes.Job, p tgjob.Job, record func(ctx context.Context) error) {
	recorded := record == nil
	if !recorded {
		tctx, cancel := context.WithTimeout(ctx, settleTry)
		recorded = record(tctx) == nil
		cancel()
	}
	// A broadcast copy is counted in its progress by the ack itself: a
	// worker killed right after the ack leaves no copy uncounted.
	count := w.progressTally(p, "")
	aerr := w.settle(ctx, job, "ack", func(ctx context.Context) error { return w.ackJob(ctx, job.Lease, count) })
	if errors.Is(aerr, lanes.ErrStaleLease) {
		aerr = w.ackLost(ctx, job, count)
	}
	if aerr != nil {
		// Delivered, but the job was settled elsewhere (lanes.ErrNoJob:
		// acked by a claimer that took it, or cancelled), or the store
		// stayed unreachable for SettleFor or until the drain deadline:
		// then the job is sent again once its lease expires (at-least-once)
		// and counted by that send's ack.
		w.log.Warn("ack failed after delivery", slog.String("job", string(job.ID)), slog.Any("err", w.redactor.Error(aerr)))
	}
	if !recorded {
		if err := w.settle(ctx, job, "record message id", record); err != nil {
			w.log.Warn("record message id failed", slog.String("job", string(job.ID)), slog.Any("err", w.redactor.Error(err)))
		}
	}
	if aerr != nil {
		return
	}
	if p.IsEdit() {
		w.m.editedBy.get(job.Queue).Inc()
		return
	}
	w.m.sentBy.get(job.Queue).Inc()
	if p.Paid {
		w.m.paidSent.Inc()
	}
}

// ackLost settles delivered job, whose ack proved its lease lost
// (lanes.ErrStaleLease: it expired and was reclaimed, its claimer was
// found dead, another claimer holds it), by what is known: the message
// was delivered (lanes Store.AckLost, with the ack's tally count). Waiting
// again, the job is acked now: never sent again, counted sent, and a
// broadcast's Stop no longer counts it cancelled (chaos seed 29); held by
// another claimer, it is marked delivered: that claimer's send already
// under way is the only duplicate, and the copy is counted sent once
// however that lease ends. Retried as the ack was (settle); its error is
// AckLost's (lanes.ErrNoJob: settled elsewhere, nothing to do).
func (w *Worker) ackLost(ctx context.Context, job lanes.Job, count lanes.SettleTally) error {
	var out lanes.LostAck
	err := w.settle(ctx, job, "ack after a lost lease", func(ctx context.Context) error {
		var err error
		out, err = w.store.AckLost(ctx, job.Lease, counting(count)...)
		return err
	})
	if err == nil {
		w.log.Info("delivered under a lost lease: settled as delivered", slog.String("job", string(job.ID)),
			slog.String("lane", job.Group), slog.String("outcome", string(out)))
	}
	return err
}

// dead dead-letters job, whose send was tried and failed for good, with
// reason (already redacted) and counts it; the failed send counts as an
// attempt (lanes Store.Dead).
func (w *Worker) dead(ctx context.Context, job lanes.Job, p tgjob.Job, code, reason string) {
	w.deadLetter(ctx, job, p, code, reason, w.store.Dead)
}

// deadUntried is dead for a job never sent (malformed, an edit of an
// unknown message, the rest of a batch after its chat's 403): its attempts
// stay as they were (lanes Store.DeadUntried).
func (w *Worker) deadUntried(ctx context.Context, job lanes.Job, p tgjob.Job, code, reason string) {
	w.deadLetter(ctx, job, p, code, reason, w.store.DeadUntried)
}

// deadLetter moves job to the dead letters with move, a broadcast copy
// counted failed with code in the same atomic call (progressTally).
func (w *Worker) deadLetter(ctx context.Context, job lanes.Job, p tgjob.Job, code, reason string,
	move func(context.Context, lanes.Lease, string, ...lanes.SettleOption) error) {
	count := counting(w.progressTally(p, code))
	if err := w.settle(ctx, job, "dead-letter", func(ctx context.Context) error { return move(ctx, job.Lease, reason, count...) }); err != nil {
		w.log.Warn("dead-letter failed", slog.String("job", string(job.ID)), slog.Any("err", w.redactor.Error(err)))
		return
	}
	w.m.dead.WithLabelValues(code).Inc()
	w.log.Warn("dead-lettered", slog.String("job", string(job.ID)), slog.String("lane", job.Group), slog.String("reason", reason))
}

// progressTally is the count in its broadcast's progress a settling of
// copy p keeps in the same atomic call (lanes.Counting): sent (failed "")
// by an ack, failed with reason failed by a dead-lettering (notifier
// SentTally, FailedTally). None (the zero SettleTally) for a message that
// is not a broadcast copy, nor for an edit's ack.
func (w *Worker) progressTally(p tgjob.Job, failed string) lanes.SettleTally {
	if p.Broadcast == "" || (failed == "" && p.IsEdit()) {
		return lanes.SettleTally{}
	}
	var t lanes.SettleTally
	var err error
	if failed == "" {
		t, err = w.n.SentTally(p.Broadcast, p.Paid)
	} else {
		t, err = w.n.FailedTally(p.Broadcast, failed)
	}
	if err != nil {
		w.log.Warn("broadcast progress", slog.Any("err", w.redactor.Error(err)))
		return lanes.SettleTally{}
	}
	return t
}

// ackJob acks a delivered job's lease l with tally t (see progressTally)
// through the running acker (acks.go), or with a Store.Ack of its own when
// none runs.
func (w *Worker) ackJob(ctx context.Context, l lanes.Lease, t lanes.SettleTally) error {
	if k := w.acks.Load(); k != nil {
		return k.ack(ctx, l, t)
	}
	return w.store.Ack(ctx, l, counting(t)...)
}

func (w *Worker) release(ctx context.Context, job lanes.Job) {
	if err := w.settle(ctx, job, "release", func(ctx context.Context) error { return w.store.Release(ctx, job.Lease) }); err != nil {
		w.log.Warn("release failed", slog.String("job", string(job.ID)), slog.Any("err", w.redactor.Error(err)))
	}
}

// unknownAgain records that job's send had an unknown outcome and reports
// whether one had been recorded before (chatstate.Store.MarkUnknownOutcome),
// retried like a settlement.
func (w *Worker) unknownAgain(ctx context.Context, job lanes.Job) (bool, error) {
	var again bool
	err := w.settle(ctx, job, "record unknown outcome", func(ctx context.Context) error {
		first, err := w.chats.MarkUnknownOutcome(ctx, job.ID)
		again = !first
		return err
	})
	return again, err
}

// Settlement retries (see settle).
const (
	settleTry     = 5 * time.Second       // bound of one settling call
	settleWaitMin = 50 * time.Millisecond // first wait between tries
	settleWaitMax = 1 * time.Second       // longest wait between tries
)

// settle runs op, one call that settles job (ack, nack, release, park,
// dead-letter, or a record that goes with them), until it succeeds, with
// the runner's settler (consumer.Settler): each try gets a fresh context of
// its own (settleTry), never the one of the send that decided the job's
// fate, and failed tries are retried after 50 ms doubling to 1 s. ctx is
// the drain context (Run): it lives on past Run's context and ends at the
// shutdown's drain deadline (ShutdownGrace + settleAfterCut after shutdown
// begins), which cuts a try in progress and ends the retries, so a
// shutdown never waits longer on an unreachable store; the job's lease then
// expires and the job is claimed again (at-least-once). settle also stops
// early when retrying cannot help: the lease is provably lost
// (lanes.ErrStaleLease, lanes.ErrNoJob: the fencing token no longer holds
// the job, another claimer has it or settled it), bad input (lanes,
// notifier or chatstate ErrInvalid), or after Config.SettleFor, so nothing
// retries forever. The lease keeper renews the lease meanwhile while the
// batch runs. It returns op's last error.
func (w *Worker) settle(ctx context.Context, job lanes.Job, what string, op func(ctx context.Context) error) error {
	s := consumer.Settler{Try: settleTry, For: w.cfg.SettleFor, Backoff: consumer.Backoff{Base: settleWaitMin, Max: settleWaitMax},
		Final: func(err error) bool {
			return errors.Is(err, notifier.ErrInvalid) || errors.Is(err, chatstate.ErrInvalid)
		},
		Log: w.log, Retried: w.m.settleRetries.Inc}
	err := s.Settle(ctx, what, op, slog.String("job", string(job.ID)))
	switch {
	case errors.Is(err, consumer.ErrSettleDeadline):
		w.log.Error(what+" failed; giving up after SettleFor", slog.String("job", string(job.ID)), slog.Any("err", w.redactor.Error(err)))
	case errors.Is(err, consumer.ErrSettleStopped):
		w.log.Error(what+" failed; giving up at the shutdown's drain deadline (the job is claimed again once its lease expires)",
			slog.String("job", string(job.ID)), slog.Any("err", w.redactor.Error(err)))
	}
	return err
}
