package worker

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/codemojex/codemojex/lanes"
)

// Acks in batches. At a high rate each delivered message's ack as a call of
// its own costs a round trip (a write and a read on each side) and an ack
// script's fixed work in Valkey (its time, the send logs' expiries, the due
// time, the wake-ups) per message; one lanes Store.AckAll of the acks that
// come within ackGap pays them once. The batcher (acker) flushes a batch
// once it holds
//
//	acksFor(ClaimRate) = clamp(ceil(ClaimRate × ackGap), 1, maxAcksPerCall)
//
// acks or ackGap after its first, whichever comes first: 1 up to 62/s
// (ClaimRate × ackGap is 1 at 62.5/s), where each ack is its own
// Store.Ack call as before (no wait at all), 3 at 130/s (the default bulk
// + reply rate), 19 at 1,130/s (a paid broadcast at 1,000/s beside them).
// An ack waits at most ackGap: its lane's next message (an ordered lane
// serves it once the ack lands) and the sender's slot wait that much
// more. Its budgets do not: the time an ack waited is added to
// its lease's floor (lanes.Lease.Floor), so its send counts from when its
// answer was read, as an ack sent at once would have it (the ack's server
// time less the wait is never earlier than that read; see acker.flush).
const (
	// ackGap is the most an ack waits for others to share its call: 16
	// ms, not 8, as claimGap and for the same trade (issue 27).
	ackGap = 16 * time.Millisecond
	// maxAcksPerCall caps the acks of one call.
	maxAcksPerCall = 64
)

// acksFor is how many acks one call takes at rate messages/s (0: unknown,
// then 1: no batching).
func acksFor(rate int) int {
	if rate <= 0 {
		return 1
	}
	n := int(math.Ceil(float64(rate) * ackGap.Seconds()))
	return min(max(n, 1), maxAcksPerCall)
}

// acker batches the acks of delivered messages into lanes Store.AckAll
// calls (see above). ack is safe for concurrent use; run is its one
// flushing goroutine. One of size 1 acks each message with a Store.Ack of
// its own, and needs no run.
//
// An ack joins the batch under a mutex and wakes run only when it begins a
// batch or fills it (begun, full), not once per ack as a channel of acks
// would: each wake of a parked goroutine costs the scheduler a hand-off,
// and at 1,000 copies/s that was one more per copy (issue 27; the
// batch's other acks wait on their done channels either way).
type acker struct {
	store *lanes.Store
	size  int           // the most acks of one call (acksFor)
	gap   time.Duration // the most the first ack of a batch waits

	mu      sync.Mutex
	pending []*ackReq // the batch being gathered, oldest first

	begun chan struct{} // 1 buffered: pending went from none to one
	full  chan struct{} // 1 buffered: pending reached size
	claim chan struct{} // a claim is being issued (claimed); 1 buffered
}

// ackReq is one ack waiting in the batcher.
type ackReq struct {
	a    lanes.Acking
	at   time.Time  // when it was asked for (its wait is added to its floor)
	done chan error // its outcome, buffered
}

func newAcker(store *lanes.Store, rate int) *acker {
	size := acksFor(rate)
	return &acker{store: store, size: size, gap: ackGap,
		begun: make(chan struct{}, 1), full: make(chan struct{}, 1), claim: make(chan struct{}, 1)}
}

// ack acks l with tally t (the zero SettleTally: none) as Store.Ack with
// Counting(t) would, in a batch when the acker batches; its error is
// Store.Ack's (ErrStaleLease, ErrNoJob, the call's), or ctx's when ctx
// ended first (the ack may or may not land then: acking again answers
// ErrNoJob for one that did).
func (k *acker) ack(ctx context.Context, l lanes.Lease, t lanes.SettleTally) error {
	if k.size <= 1 {
		return k.store.Ack(ctx, l, counting(t)...)
	}
	r := &ackReq{a: lanes.Acking{Lease: l, Tally: t}, at: time.Now(), done: make(chan error, 1)}
	k.add(r)
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// add puts r in the batch being gathered, waking run when r begins it or
// fills it; a claim signalled before r began the batch is dropped (not its
// ride). Never blocks: the acks waiting are at most the senders, each
// waiting for its own.
func (k *acker) add(r *ackReq) {
	k.mu.Lock()
	k.pending = append(k.pending, r)
	n := len(k.pending)
	if n == 1 {
		select { // a claim issued before this batch began is not its ride
		case <-k.claim:
		default:
		}
		signal(k.begun)
	}
	if n == k.size {
		signal(k.full)
	}
	k.mu.Unlock()
}

// take removes and returns the batch gathered, at most size acks; acks
// beyond them begin the next batch at once.
func (k *acker) take() []*ackReq {
	k.mu.Lock()
	defer k.mu.Unlock()
	select { // a fill signalled for the acks taken now is spent
	case <-k.full:
	default:
	}
	n := min(len(k.pending), k.size)
	batch := make([]*ackReq, n)
	copy(batch, k.pending)
	rest := copy(k.pending, k.pending[n:])
	clear(k.pending[rest:])
	k.pending = k.pending[:rest]
	if rest > 0 {
		signal(k.begun)
	}
	if rest >= k.size {
		signal(k.full)
	}
	return batch
}

// signal marks ch (1 buffered) without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// claimed tells the acker that the claim loop is issuing a claim: a batch
// it holds is flushed now, so its call reaches Valkey beside the claim's
// and the server wakes once for both (an idle server's wake-up costs it
// more than either call's own work: docs/delivery.md, "Where a copy's CPU
// goes"). Never blocks; a nil acker (none batching) ignores it.
func (k *acker) claimed() {
	if k == nil {
		return
	}
	signal(k.claim)
}

// run flushes batches until ctx ends (after the last ack was answered:
// Worker.Run cancels it once its claim loop returned). A batch is flushed
// when it is full, ackGap after its first ack, or when a claim is issued
// (claimed), whichever comes first.
func (k *acker) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-k.begun:
		case <-ctx.Done():
			return
		}
		timer.Reset(k.gap)
		select {
		case <-k.full:
		case <-timer.C:
		case <-k.claim:
		}
		timer.Stop()
		if batch := k.take(); len(batch) > 0 {
			k.flush(ctx, batch)
		}
	}
}

// flush acks batch in one Store.AckAll and answers each request. Each
// ack's floor grows by the time it waited (at most lanes.MaxFloor): its
// send's answer was read before it was asked for, so the ack's server time
// less that wait is still no earlier than the read, which is all an
// immediate ack's settle time stood for (see lanes Lease.Floor).
func (k *acker) flush(ctx context.Context, batch []*ackReq) {
	now := time.Now()
	acks := make([]lanes.Acking, len(batch))
	for i, r := range batch {
		acks[i] = r.a
		acks[i].Lease.Floor = min(r.a.Lease.Floor+now.Sub(r.at), lanes.MaxFloor)
	}
	cctx, cancel := context.WithTimeout(ctx, settleTry)
	errs, err := k.store.AckAll(cctx, acks)
	cancel()
	for i, r := range batch {
		if err != nil {
			r.done <- err
			continue
		}
		r.done <- errs[i]
	}
}

// counting is the settle option that keeps t (none for the zero
// SettleTally).
func counting(t lanes.SettleTally) []lanes.SettleOption {
	if t.Key == "" && t.Once == "" && t.Untrack == "" && len(t.Fields) == 0 && t.TTL == 0 {
		return nil
	}
	return []lanes.SettleOption{lanes.Counting(t)}
}
