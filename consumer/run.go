package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// ErrStopped is returned by Source.Claim once the runner's context ended
// and the source has nothing more to hand out (its claims in flight are
// answered and handed out): its claim loop ends.
var ErrStopped = errors.New("consumer: stopped")

// Source is one claim loop's policy: how it claims (the store call, its
// pacing, its waits for wake-ups) and what it does with a batch. A Source
// is used by one claim loop at a time.
type Source[B any] interface {
	// Claim blocks until it has claimed a batch, and returns it. It
	// returns ErrStopped once ctx has ended and nothing it claimed is left
	// to hand out; another error is a failed claim, after which the loop
	// backs off (Config.Backoff) and claims again.
	Claim(ctx context.Context) (B, error)
	// Handle works a claimed batch (usually with RunBatch) and reports
	// whether the loop should back off before its next claim (an
	// infrastructure failure). ctx is the runner's: its end asks the batch
	// to hand back the jobs it has not started.
	Handle(ctx context.Context, b B) (backoff bool)
}

// Config tunes Run.
type Config struct {
	// Loops is the number of claim loops, each with a Source of its own
	// [1].
	Loops int
	// Async hands each batch to a goroutine of its own (joined before Run
	// returns), so the loop claims again at once (the worker: one claim
	// loop feeding its senders); otherwise the loop handles the batch
	// before it claims again (the handlers: each claims for itself).
	Async bool
	// Backoff is the wait after a failed claim, or a batch whose Handle
	// asked for one (Backoff.Next of the last wait; a batch handled
	// without one starts afresh).
	Backoff Backoff
	// Log receives failed claims [none].
	Log *slog.Logger
}

// Run runs cfg.Loops claim loops, each over the Source newSource(loop)
// returns (loop: 0..Loops-1), until ctx ends; then it drains: each loop
// claims until its Source returns ErrStopped (batches claimed after the
// stop are handed to Handle, which hands their jobs back), and Run returns
// once every loop and every batch of Async is done. A failed claim is
// logged and followed by a cancellable wait (Config.Backoff).
func Run[B any](ctx context.Context, cfg Config, newSource func(loop int) Source[B]) {
	var loops, batches sync.WaitGroup
	for n := range max(cfg.Loops, 1) {
		src := newSource(n)
		loops.Go(func() { runLoop(ctx, cfg, src, &batches) })
	}
	loops.Wait()
	batches.Wait()
}

func runLoop[B any](ctx context.Context, cfg Config, src Source[B], batches *sync.WaitGroup) {
	var wait time.Duration
	for {
		b, err := src.Claim(ctx)
		if errors.Is(err, ErrStopped) {
			return
		}
		if err != nil {
			wait = cfg.Backoff.Next(wait)
			if cfg.Log != nil {
				cfg.Log.Warn("claim failed; retrying", slog.Any("err", err), slog.String("retry_in", wait.String()))
			}
			_ = Sleep(ctx, wait)
			continue
		}
		if cfg.Async {
			batches.Go(func() { src.Handle(ctx, b) })
			wait = 0
			continue
		}
		if !src.Handle(ctx, b) {
			wait = 0
			continue
		}
		wait = cfg.Backoff.Next(wait)
		_ = Sleep(ctx, wait)
	}
}
