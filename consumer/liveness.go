package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"
)

// Liveness is what KeepAlive needs of a store (lanes.Store): a claimer's
// heartbeat, and the early recovery of dead claimers' leases.
type Liveness interface {
	Heartbeat(ctx context.Context, claimer string, queues ...string) error
	RecoverDead(ctx context.Context, ttl time.Duration, queues ...string) (int, error)
}

// DefaultLivenessTTL is how long a claimer may go unheard before its leases
// are recovered (KeepAlive): a process killed mid-send has its jobs back on
// their lanes within this long + ttl/10 of its last beat, so of the kill
// (2.2 s), whatever the lease length, and its sends resent
// then (their chat's pace counts the dead process's send from when it
// stopped, lanes.Store.RecoverDead). A live one beats ten times in it: it
// keeps its leases through a stall (CPU starvation, a GC, SIGSTOP) of up
// to ttl - ttl/10 (1.8 s). Issue 28: a resend within 3 s of a kill.
const DefaultLivenessTTL = 2 * time.Second

// NewClaimerID returns a claimer id for this process: host, pid and 8
// random hex digits (lanes' claimer alphabet; several consumers of one
// process may share it).
func NewClaimerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%.64s:%d:%08x", host, os.Getpid(), rand.Uint32())
}

// StartKeepAlive beats claimer's heart in queues once (Liveness.Heartbeat)
// before it returns, then runs KeepAlive on a goroutine of wg until ctx
// ends. Call it before the first claim: a consumer that claimed before its
// first beat and died then would never be found dead (its claimer unknown
// to RecoverDead), its jobs waiting for their leases' end. A failed first
// beat is logged (log non-nil) and KeepAlive tries again at its start.
func StartKeepAlive(ctx context.Context, wg *sync.WaitGroup, l Liveness, claimer string, ttl time.Duration, queues []string, log *slog.Logger, recovered func(int)) {
	if err := l.Heartbeat(ctx, claimer, queues...); err != nil && ctx.Err() == nil && log != nil {
		log.Warn("heartbeat failed", slog.Any("err", err))
	}
	wg.Go(func() { KeepAlive(ctx, l, claimer, ttl, queues, log, recovered) })
}

// KeepAlive beats claimer's heart in queues (Liveness.Heartbeat) every
// ttl/10 (at its start first), and as often recovers, in queues, the
// leases of claimers unheard there for ttl (any process's: every live
// consumer sweeps, a restarted one at once, so one dead is recovered
// within ttl + ttl/10 of its last beat) until ctx ends. Run it for as long
// as the consumer holds leases: past its claim loop's drain (a consumer
// unheard while it still settles would have its jobs taken). A failed beat
// or sweep is logged and tried at the next tick; recovered (nil: none) is
// told how many leases each sweep recovered, when any. A tick whose beat
// failed does not sweep: the beat failing is what a stall of this process
// or its host looks like (a CI run under load: every call past its
// deadline for 3 s), and its own last beat may then be the one older than
// ttl, so the sweep would take back its own leases while it still works
// them, and each of their sends would go out twice.
func KeepAlive(ctx context.Context, l Liveness, claimer string, ttl time.Duration, queues []string, log *slog.Logger, recovered func(int)) {
	if ttl <= 0 {
		ttl = DefaultLivenessTTL
	}
	t := time.NewTicker(ttl / 10)
	defer t.Stop()
	for {
		if err := l.Heartbeat(ctx, claimer, queues...); err != nil {
			if ctx.Err() == nil && log != nil {
				log.Warn("heartbeat failed; no sweep this tick", slog.Any("err", err))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			continue
		}
		n, err := l.RecoverDead(ctx, ttl, queues...)
		switch {
		case err != nil && ctx.Err() == nil && log != nil:
			log.Warn("recovering dead claimers' leases failed", slog.Any("err", err))
		case n > 0:
			if log != nil {
				log.Info("recovered the leases of a dead claimer", slog.Int("leases", n))
			}
			if recovered != nil {
				recovered(n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
