package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/codemojex/codemojex/lanes"
)

// Extender renews a lease: *lanes.Store.
type Extender interface {
	Extend(ctx context.Context, l lanes.Lease, d time.Duration) (time.Time, error)
}

// extendTry bounds one Extend (and never more than a third of the lease).
const extendTry = 10 * time.Second

// Leases keeps the leases of one claimed batch alive while it is worked
// through (see Keep). Its methods are safe for concurrent use.
type Leases struct {
	mu       sync.Mutex
	leases   []lanes.Lease
	live     []bool      // still extended: not settled
	lost     []bool      // an Extend proved the lease lost
	deadline []time.Time // local-clock lower bound of each lease's end
	timer    *time.Timer // the next round of extensions
	// kctx is the rounds' context, ended by cancel (made by the first
	// round: a batch settled within a third of its lease never makes
	// one); stopped is set by Stop; round is closed when the round in
	// progress returns (nil: none in progress).
	kctx    context.Context
	cancel  context.CancelFunc
	stopped bool
	round   chan struct{}
}

// Keep starts keeping leases (claimed at about claimed, each of length d)
// alive: every d/3 it extends each live lease by d (ext.Extend, each try
// bounded by min(d/3, 10 s)) until Stop or ctx ends, in order. It tracks
// each lease's deadline on the local clock: claimed + d at first (the
// claim was sent before claimed, so this overestimates by the claim's
// round trip at most; the first Extend corrects it), then the time an
// Extend that succeeded was sent plus d. An Extend answering
// lanes.ErrStaleLease or lanes.ErrNoJob marks the lease lost (another
// claimer has it, or it was settled); another error leaves the deadline as
// it was, so the lease runs out on the local clock no later than on the
// server's. Failures of live leases are logged to log (nil: not logged),
// except ErrNoJob (a settle that raced the extend).
//
// Each round runs on a timer's goroutine (time.AfterFunc), the next due d/3
// after the last one started (at once when that round took longer, as a
// time.Ticker's buffered tick would); the rounds' context (of ctx) is made
// by the first one. A batch worked through within d/3, as most are (a send
// and its settle, against a lease of 30 s), so costs one timer: no
// goroutine, no ticker, no context registered with ctx (a paid broadcast
// at 1,000/s is about as many one-copy batches a second).
func Keep(ctx context.Context, ext Extender, leases []lanes.Lease, d time.Duration, claimed time.Time, log *slog.Logger) *Leases {
	n := len(leases)
	k := &Leases{leases: leases, live: make([]bool, n), lost: make([]bool, n), deadline: make([]time.Time, n)}
	for i := range leases {
		k.live[i] = true
		k.deadline[i] = claimed.Add(d)
	}
	every := max(d/3, time.Millisecond)
	k.mu.Lock() // the first round reads the timer
	k.timer = time.AfterFunc(every, func() { k.extendAll(ctx, ext, d, every, log) })
	k.mu.Unlock()
	return k
}

// extendAll is one round: it extends each live lease by d (see Keep), then
// sets the timer for the next round, every after this one started, unless
// Stop was called or ctx ended meanwhile.
func (k *Leases) extendAll(ctx context.Context, ext Extender, d, every time.Duration, log *slog.Logger) {
	start := time.Now()
	k.mu.Lock()
	if k.stopped || ctx.Err() != nil {
		k.mu.Unlock()
		return
	}
	if k.kctx == nil {
		k.kctx, k.cancel = context.WithCancel(ctx)
	}
	kctx, round := k.kctx, make(chan struct{})
	k.round = round
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.round = nil
		close(round)
		if !k.stopped && kctx.Err() == nil {
			k.timer.Reset(max(time.Until(start.Add(every)), 0))
		}
	}()
	for i := range k.leases {
		if !k.isLive(i) {
			continue
		}
		sent := time.Now()
		ectx, ecancel := context.WithTimeout(kctx, min(every, extendTry))
		_, err := ext.Extend(ectx, k.leases[i], d)
		ecancel()
		if kctx.Err() != nil {
			return
		}
		k.extended(i, sent.Add(d), err, log)
	}
}

func (k *Leases) isLive(i int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.live[i]
}

// extended records the outcome of an Extend of lease i sent so that it
// would end at until.
func (k *Leases) extended(i int, until time.Time, err error, log *slog.Logger) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.live[i] { // settled meanwhile
		return
	}
	if err == nil {
		k.deadline[i] = until
		return
	}
	if errors.Is(err, lanes.ErrStaleLease) || errors.Is(err, lanes.ErrNoJob) {
		k.lost[i] = true
	}
	if log != nil && !errors.Is(err, lanes.ErrNoJob) {
		log.Warn("lease extend failed", slog.String("job", string(k.leases[i].ID)), slog.String("queue", k.leases[i].Queue),
			slog.Any("err", err))
	}
}

// Held reports whether lease i is held with at least left of it to run on
// the local clock: not settled, not lost, its deadline left or more away.
func (k *Leases) Held(i int, left time.Duration) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.live[i] && !k.lost[i] && time.Until(k.deadline[i]) >= left
}

// Settled stops extending lease i (its job was settled, or handed over).
func (k *Leases) Settled(i int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.live[i] = false
}

// Stop ends the extensions: it cuts the round in progress (its Extend's
// context ends) and waits for it to return; no round starts after it.
func (k *Leases) Stop() {
	k.mu.Lock()
	k.timer.Stop()
	k.stopped = true
	if k.cancel != nil {
		k.cancel()
	}
	round := k.round
	k.mu.Unlock()
	if round != nil {
		<-round
	}
}
