package config

import (
	"fmt"
	"time"

	"github.com/codemojex/codemojex/worker"
)

// Worker is a sending process's worker: its cap of sends in flight and its
// lease on claimed messages (worker.Config, from WorkerConfig).
type Worker struct {
	// Workers is the most sends one process has in flight at once
	// (WORKERS, 1..worker.MaxSenders, 4096): the upper bound of its
	// concurrency, which otherwise follows the budget (worker.Config.Senders:
	// the rates × the measured Bot API round trip × 1.25 + 2, at least 4).
	// The default worker.DefaultSenders (1536) covers 1,000 messages/s at a
	// 1.2 s round trip; only the senders in use cost anything: a goroutine
	// and, over HTTP/1.1, a kept-alive connection each (about 40 KiB with
	// TLS, one file descriptor; docs/delivery.md has the measured cost).
	// At the cap a process holds about 63 KiB and, over HTTP/1.1, one
	// socket per sender in use.
	Workers int `env:"WORKERS"`
	// WorkerLease is how long a worker holds a claimed message before
	// another worker may take it over (WORKER_LEASE, a Go duration): after a
	// worker process dies, its in-flight messages (and, queues being
	// ordered, their chats) wait this long.
	WorkerLease time.Duration `env:"WORKER_LEASE" envDefault:"30s"`
}

// defaultWorker is Worker's defaults owned by the worker package.
func defaultWorker() Worker { return Worker{Workers: worker.DefaultSenders} }

// Validate checks WORKERS (1..worker.MaxSenders: the cap the worker
// applies, so a value accepted here is never cut) and WORKER_LEASE
// (1 s..1 h). Errors: *Error.
func (w Worker) Validate() error {
	if err := checkWholeNumbers(w.wholeNumbers()); err != nil {
		return err
	}
	if w.WorkerLease < time.Second || w.WorkerLease > time.Hour {
		return &Error{Var: "WORKER_LEASE", Want: fmt.Sprintf("a duration from 1s to 1h, e.g. 30s; got %v", w.WorkerLease)}
	}
	return nil
}

// wholeNumbers are the rules of the section's whole-number variables.
func (w Worker) wholeNumbers() []wholeNumber {
	return []wholeNumber{{"WORKERS", w.Workers, 1, worker.MaxSenders, fmt.Sprintf("most sends in flight per process, 1..%d", worker.MaxSenders)}}
}

// WorkerConfig returns the worker's configuration for c: the token and
// Bot API server, WORKERS and WORKER_LEASE, and every budget as the claim
// rate (Rates.ClaimRate). The caller adds the logger, the registry and the
// shutdown grace.
func (c Config) WorkerConfig() worker.Config {
	return worker.Config{Token: c.Token, ServerURL: c.APIURL, Senders: c.Workers, Lease: c.WorkerLease, ClaimRate: c.ClaimRate()}
}
