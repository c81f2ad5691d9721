package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

// paidHaltCheck is how often the worker reads whether the paid queue is
// halted (notifier.PaidHalted): a halt another process set, or a lift by
// the admin's choice, is seen within it.
const paidHaltCheck = time.Second

// paidHalt caches notifier.PaidHalted for the claim loop: while the paid
// queue is halted (the bot could not pay for a paid copy), the worker
// claims only the other queues, so the paid copies stay on their lanes.
type paidHalt struct {
	mu      sync.Mutex
	halted  string    // the broadcast halted for, "" when not halted
	checked time.Time // when halted was last read from Valkey
}

// set records a halt this worker just decided (seen before the next read).
func (h *paidHalt) set(broadcast string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.halted, h.checked = broadcast, time.Now()
}

// queues returns all, without tgjob.QueuePaid while the paid queue is
// halted; the halt is read again every paidHaltCheck (a failed read keeps
// the last answer).
func (h *paidHalt) queues(ctx context.Context, w *Worker, all []string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.checked) >= paidHaltCheck {
		bc, err := w.n.PaidHalted(ctx)
		if err != nil {
			w.log.Warn("paid halt: read failed", slog.Any("err", w.redactor.Error(err)))
		} else {
			h.halted = bc
		}
		h.checked = time.Now()
	}
	if h.halted == "" {
		return all
	}
	out := make([]string, 0, len(all))
	for _, q := range all {
		if q != tgjob.QueuePaid {
			out = append(out, q)
		}
	}
	return out
}
