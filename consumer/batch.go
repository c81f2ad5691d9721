package consumer

import (
	"context"
	"log/slog"
	"time"

	"github.com/codemojex/codemojex/lanes"
)

// Verdict is what Jobs.Handle made of one job.
type Verdict int

const (
	// Done: the job is settled; the batch goes on with the next job.
	Done Verdict = iota
	// Held: the job is finished but its settle rides on a later call (the
	// handlers ack it with their next claim): its lease is kept alive until
	// the batch ends; the batch goes on.
	Held
	// Stop: the job is settled and the batch stops: the jobs after it go to
	// Jobs.Rest (StopHandled), so later jobs of the lane never overtake it.
	Stop
)

// Why says why RunBatch hands jobs back unstarted (Jobs.Rest).
type Why int

const (
	// StopRunner: RunBatch's context ended (the runner is stopping).
	StopRunner Why = iota
	// StopLease: the next job's lease is lost or too little of it is left
	// (Batch.Left), so another claimer may hold the lane's later jobs.
	StopLease
	// StopHandled: Handle returned Stop.
	StopHandled
)

// Jobs is what RunBatch does with a batch's jobs.
type Jobs interface {
	// Handle works job i (its lease is held) and settles it (Done, Stop)
	// or leaves its settle to later (Held).
	Handle(i int) Verdict
	// Rest settles the jobs from, from+1, ... of the batch, unstarted (a
	// release, or a dead-letter after a Handle that says so); why says why.
	Rest(from int, why Why)
}

// Batch is one claim's jobs (the heads of one lane, in order) as RunBatch
// needs them.
type Batch struct {
	// Leases are the jobs' leases, in the batch's order.
	Leases []lanes.Lease
	// Claimed is when the claim was sent or answered (the local clock);
	// Length is the lease length claimed, and each extension's.
	Claimed time.Time
	Length  time.Duration
	// Extender renews the leases (the lanes store).
	Extender Extender
	// Keep is the lease keeper's context: extensions end with it, or when
	// RunBatch returns [context.WithoutCancel of RunBatch's ctx].
	Keep context.Context
	// Left is the least part of a job's lease that must be left for the job
	// to start (a bound of its handling) [0: not lost and not run out].
	Left time.Duration
	// Log receives the keeper's failed extensions [none].
	Log *slog.Logger
}

// RunBatch works through b's jobs in order: job i is started (Handle) only
// while ctx has not ended and its lease is held with at least b.Left to
// run (see Leases.Held); otherwise it and the rest are handed back (Rest:
// StopRunner, StopLease), so no other claimer can be working on the lane's
// later jobs while this batch still works through them. The leases are
// kept alive meanwhile (Keep) and the keeper is stopped before RunBatch
// returns. It returns how many jobs were started.
func RunBatch(ctx context.Context, b Batch, jobs Jobs) int {
	keep := b.Keep
	if keep == nil {
		keep = context.WithoutCancel(ctx)
	}
	leases := Keep(keep, b.Extender, b.Leases, b.Length, b.Claimed, b.Log)
	defer leases.Stop()
	rest := func(from int, why Why) {
		jobs.Rest(from, why)
		for j := from; j < len(b.Leases); j++ {
			leases.Settled(j)
		}
	}
	for i := range b.Leases {
		if ctx.Err() != nil {
			rest(i, StopRunner)
			return i
		}
		if !leases.Held(i, b.Left) {
			rest(i, StopLease)
			return i
		}
		switch jobs.Handle(i) {
		case Held:
			continue
		case Stop:
			leases.Settled(i)
			rest(i+1, StopHandled)
			return i + 1
		default:
			leases.Settled(i)
		}
	}
	return len(b.Leases)
}
