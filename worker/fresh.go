package worker

import (
	"context"
	"log/slog"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// resolveRef fills in the message id of an edit that names its message by
// the job that sent it (tgjob.Job.Ref, written by notifier.EditLatest). The
// send went first on the same ordered lane, so its id is normally recorded.
// When it is not known (the send was dead-lettered, or its record expired):
// an edit with Fresh reports gone (send it as a new message), any other is
// dead-lettered "edit not found". A failed lookup is transient: the job is
// nacked. A non-nil next means the job is settled.
func (w *Worker) resolveRef(drain context.Context, job lanes.Job, p tgjob.Job) (tgjob.Job, bool, *next) {
	lctx, cancel := settleCtx(drain)
	id, ok, err := w.chats.SentMessageID(lctx, lanes.JobID(p.Ref))
	cancel()
	if err != nil {
		rerr := w.redactor.Error(err)
		w.log.Warn("edit: message id lookup failed, retrying", slog.String("job", string(job.ID)), slog.Any("err", rerr))
		if nerr := w.settle(drain, job, "nack", func(ctx context.Context) error {
			_, err := w.store.Nack(ctx, job.Lease, w.backoff(job.Attempts), "transient: "+rerr.Error())
			return err
		}); nerr != nil {
			w.log.Error("nack failed", slog.String("job", string(job.ID)), slog.Any("nack_err", w.redactor.Error(nerr)))
		}
		return p, false, &next{stop: true}
	}
	if ok {
		p.MessageID = id
		return p, false, nil
	}
	if !p.Fresh {
		w.deadUntried(drain, job, p, ReasonEditNotFound, ReasonEditNotFound+": message of job "+p.Ref+" unknown")
		return p, false, &next{}
	}
	return p, true, nil
}

// sendFresh sends edit p as a new message (freshSend) and settles the job:
// delivered (deliveredFresh) or by the error table.
func (w *Worker) sendFresh(workCtx, drain context.Context, job lanes.Job, chat int64, p tgjob.Job) next {
	status, msgID, unknown, err := w.call(workCtx, chat, freshSend(p), p.ParseMode)
	w.answered(&job, status)
	if err == nil {
		w.deliveredFresh(drain, job, p, msgID)
		return next{}
	}
	sctx, cancel := settleCtx(drain)
	defer cancel()
	return w.failed(workCtx, drain, sctx, job, chat, p, status, unknown, err, classify(err, w.cfg.DefaultRetryAfter))
}

// freshSend is the sendMessage that replaces edit p when its message can no
// longer be edited: same text, parse mode and keyboard, silent.
func freshSend(p tgjob.Job) tgjob.Job {
	return tgjob.Job{V: p.V, Chat: p.Chat, Text: p.Text, ParseMode: p.ParseMode, Markup: p.Markup, Silent: true}
}

// deliveredFresh settles an edit that was sent as a new message msgID: it
// records msgID as the message of p.Ref (later edits of that message go to
// the new one) and acks like a delivered edit (settleDelivered: the record
// first when the store takes it at once, never holding the ack back).
func (w *Worker) deliveredFresh(ctx context.Context, job lanes.Job, p tgjob.Job, msgID int) {
	var record func(ctx context.Context) error
	if msgID > 0 {
		record = func(ctx context.Context) error { return w.chats.RecordMessageID(ctx, lanes.JobID(p.Ref), msgID) }
	}
	w.m.freshBoards.Inc()
	w.log.Info("message could not be edited; sent afresh", slog.String("job", string(job.ID)), slog.String("lane", job.Group), slog.Int("message_id", msgID))
	w.settleDelivered(ctx, job, p, record)
}
