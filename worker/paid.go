package worker

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

// paidHaltCheck is how often the worker reads whether the paid queue is
// halted (notifier.PaidHalted): a halt another process set, or a lift by
// the admin's choice, is seen within it.
const paidHaltCheck = time.Second

// PaidHaltWhy starts the why of the paid queue's lanes pause
// (lanes.Inspector.PauseQueue) while a paid broadcast is halted; the
// broadcast id follows it.
const PaidHaltWhy = "paid broadcast halted, the bot cannot pay: "

// paidHalt keeps the paid queue's lanes pause in step with
// notifier.PaidHalted. While the paid queue is halted (the bot could not
// pay for a paid copy) it is paused in lanes (PauseQueue, why PaidHaltWhy
// and the broadcast), so no claim serves it and the paid copies stay on
// their lanes; but the worker still claims it with the other queues, so
// each claim's upkeep of it goes on: a lease that expires there (its
// claimer lost its answer to a Valkey failover, say) goes back to its
// lane, the paid copies in flight fall to 0, and the admin's halt notice
// and ▶️ Continue free, which wait for that, are not blocked for good
// (chaos row 48: 4 such leases on the halted queue, which no worker
// claimed, held a broadcast to 2,500 chats at 486 copies waiting). Once
// the halt is lifted (ContinueFree, StopBroadcast) the pause is resumed.
type paidHalt struct {
	mu      sync.Mutex
	checked time.Time // when the halt was last synced with Valkey
}

// halt pauses the paid queue at once for broadcast, a halt this worker
// just decided (HaltPaid set it in Valkey): every claimer skips the paid
// queue from its next claim. A failed pause is logged; the next cannot-pay
// answer, or the next sync, pauses it.
func (h *paidHalt) halt(ctx context.Context, w *Worker, broadcast string) {
	if _, err := w.inspector.PauseQueue(ctx, tgjob.QueuePaid, PaidHaltWhy+broadcast); err != nil {
		w.log.Error("paid halt: pause the paid queue failed", slog.Any("err", w.redactor.Error(err)))
	}
}

// sync, at most every paidHaltCheck, pauses the paid queue while it is
// halted (notifier.PaidHalted) and resumes it once a halt is lifted, when
// the pause is a halt's (an operator's own pause stays). A failed read or
// write is logged and tried again at the next check.
func (h *paidHalt) sync(ctx context.Context, w *Worker) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.checked) < paidHaltCheck {
		return
	}
	h.checked = time.Now()
	bc, err := w.n.PaidHalted(ctx)
	if err != nil {
		w.log.Warn("paid halt: read failed", slog.Any("err", w.redactor.Error(err)))
		return
	}
	paused, err := w.inspector.PausedQueues(ctx)
	if err != nil {
		w.log.Warn("paid halt: read the paused queues failed", slog.Any("err", w.redactor.Error(err)))
		return
	}
	why, isPaused := paused[tgjob.QueuePaid]
	switch {
	case bc != "" && (!isPaused || strings.HasPrefix(why, PaidHaltWhy) && why != PaidHaltWhy+bc):
		// (An operator's own pause stays: the queue is not served either way.)
		h.halt(ctx, w, bc)
	case bc == "" && isPaused && strings.HasPrefix(why, PaidHaltWhy):
		if _, err := w.inspector.ResumeQueue(ctx, tgjob.QueuePaid); err != nil {
			w.log.Warn("paid halt: resume the paid queue failed", slog.Any("err", w.redactor.Error(err)))
		}
	}
}
