package handling

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/lanes"
)

// loop is the claim policy of one handler loop of Run. The jobs of the
// updates it finished are acked by its next claim, in the same atomic call
// (intake ClaimAndAck): one round trip and one script per update fewer
// than an ack of its own. Each finished update is marked handled
// (MarkHandled) before its ack is sent, so an ack that never arrives only
// makes the update be claimed again and skipped as handled. When a claim
// fails, its acks may or may not have applied: they are settled on their
// own (settleAcks), as are the acks still pending when the handler stops
// or backs off.
type loop struct {
	h       *Handler
	kick    <-chan struct{}
	wakeOne func()
	acks    []intake.Claimed // finished updates whose acks ride on the next claim
}

// Claim claims a batch of updates, acking the last batch's finished ones;
// with nothing claimable it waits for a wake-up or RetryIn (at most 1 s).
// It returns consumer.ErrStopped once ctx ended, after settling the acks
// left.
func (l *loop) Claim(ctx context.Context) (intake.Claims, error) {
	h := l.h
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		c, err := h.inbox.ClaimAndAckAs(cctx, h.claimer, h.cfg.Lease, handlerBatch, l.acks)
		cancel()
		if err != nil {
			h.settleAcks(ctx, l.acks)
			l.acks = nil
			return c, fmt.Errorf("claiming updates: %w", err)
		}
		h.ackedOnClaim(l.acks, c.Acked)
		l.acks = nil
		if len(c.Updates) > 0 {
			l.wakeOne()
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
		case <-l.kick:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	h.settleAcks(ctx, l.acks)
	l.acks = nil
	return intake.Claims{}, consumer.ErrStopped
}

// Handle handles a claimed batch; its finished updates are acked by the
// next claim, or settled at once before a back-off (an infrastructure
// failure: no finished update's lease may run out meanwhile).
func (l *loop) Handle(ctx context.Context, c intake.Claims) bool {
	finished, backoff := l.h.handleBatch(ctx, c.Updates, c.Errs)
	if backoff {
		l.h.settleAcks(ctx, finished)
		return true
	}
	l.acks = finished
	return false
}

// ackedOnClaim logs the acks a claim carried that did not apply: a lost
// lease (the update was claimed again elsewhere after its lease ran out,
// and is skipped there as handled) or a job already gone.
func (h *Handler) ackedOnClaim(acks []intake.Claimed, acked []error) {
	for i, err := range acked {
		if err != nil && i < len(acks) && !errors.Is(err, lanes.ErrNoJob) {
			h.log.Warn("update's lease was lost before its ack; another handler takes it over (a no-op: it is marked handled)",
				slog.Int64("update_id", acks[i].ID), slog.Any("err", err))
		}
	}
}

// settler is the handlers' settle policy (consumer.Settler): each try
// bounded by 5 s, retried with intake.ErrorBackoff for at most a lease's
// length (the lease has lapsed by then: the update is claimed again and
// skipped as handled).
func (h *Handler) settler() consumer.Settler {
	return consumer.Settler{Try: 5 * time.Second, For: h.cfg.Lease, Backoff: intake.ErrorBackoff(), Log: h.log}
}

// settleAcks acks the jobs of finished updates one by one (intake Ack),
// each try with a fresh context, retrying the ones that failed together
// until each is acked or its lease is provably lost, or for at most a
// lease's length (the leases have lapsed by then: the updates are claimed
// again and skipped as handled). Stopping does not cut it.
func (h *Handler) settleAcks(ctx context.Context, acks []intake.Claimed) {
	if len(acks) == 0 {
		return
	}
	errs := h.settler().SettleAll(context.WithoutCancel(ctx), "ack", len(acks),
		func(ctx context.Context, i int) error { return h.inbox.Ack(ctx, acks[i]) },
		func(i int) []slog.Attr { return []slog.Attr{slog.Int64("update_id", acks[i].ID)} })
	failed := 0
	var last error
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, lanes.ErrStaleLease):
			h.log.Warn("update's lease was lost before its ack; another handler takes it over (a no-op: it is marked handled)",
				slog.Int64("update_id", acks[i].ID), slog.Any("err", err))
		default:
			failed, last = failed+1, err
		}
	}
	if failed > 0 {
		h.log.Error("updates not acked within their lease; each is claimed again and skipped as handled",
			slog.Int("updates", failed), slog.Any("err", last))
	}
}
