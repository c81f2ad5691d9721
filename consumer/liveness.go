package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
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
// their lanes within about this long, whatever the lease length; a live
// one beats its heart five times in it.
const DefaultLivenessTTL = 2500 * time.Millisecond

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

// KeepAlive beats claimer's heart in queues (Liveness.Heartbeat) every
// ttl/5, and as often recovers, in queues, the leases of claimers unheard
// there for ttl (any
// process's: every live consumer sweeps, so one dead is recovered within
// about ttl + ttl/5 of its last beat) until ctx ends. Run it for as long
// as the consumer holds leases: past its claim loop's drain (a consumer
// unheard while it still settles would have its jobs taken). A failed beat
// or sweep is logged and tried at the next tick; recovered (nil: none) is
// told how many leases each sweep recovered, when any.
func KeepAlive(ctx context.Context, l Liveness, claimer string, ttl time.Duration, queues []string, log *slog.Logger, recovered func(int)) {
	if ttl <= 0 {
		ttl = DefaultLivenessTTL
	}
	t := time.NewTicker(ttl / 5)
	defer t.Stop()
	for {
		if err := l.Heartbeat(ctx, claimer, queues...); err != nil && ctx.Err() == nil && log != nil {
			log.Warn("heartbeat failed", slog.Any("err", err))
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
