package worker

import (
	"context"
	"sync"
	"time"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/lanes"
)

// claimLoop is the worker's claim policy, the one Source of its
// consumer.Run (see Run): claims in flight up to claimsFor, paced by the
// claim pacer, waiting on a freed sender, the lanes Waiter or RetryIn. Its
// state is the claim loop's own (not safe for concurrent use).
type claimLoop struct {
	w       *Worker
	waiter  *lanes.Waiter
	workCtx context.Context // sends: cut ShutdownGrace after Run's ctx ends
	drain   context.Context // claims, settles, lease renewals: end at the drain deadline
	queues  []string
	pool    *senderPool // the senders' goroutines, kept between batches
	zeros   int
	pace    claimPacer
	rtt     claimRTT
	// results: claims in flight answer on it; each holds one sender's
	// slot (w.batches) and one message of the pacer from its issue on.
	results  chan claimAnswer
	claiming int
	// empty is the last answer that claimed nothing: no claim is issued
	// after it until the claims in flight are back; then the loop acts on
	// it (RetryIn, the Waiter) as the one loop did, unless an answer that
	// came back after it claimed jobs (the store changed: claim again).
	empty *lanes.Claimed
	// probe keeps one claim in flight until an answer claims jobs: at the
	// start and after an answer that found nothing scheduled (RetryIn < 0:
	// an idle store), so a wake-up with nothing claimable costs one claim,
	// not claimsFor of them. After a budget's or a lane's wait (RetryIn >
	// 0: jobs are there, held by time) the claims go out at once, as the
	// budget refills (spaced by the pace that answer kept, see
	// emptyKeeps).
	probe bool
}

// Claim returns the next answer that claimed jobs, a claim's error, or
// consumer.ErrStopped once ctx ended and every claim in flight is back.
func (l *claimLoop) Claim(ctx context.Context) (claimAnswer, error) {
	w := l.w
	for ctx.Err() == nil || l.claiming > 0 {
		if ctx.Err() != nil || (l.empty != nil && l.claiming > 0) {
			if a, ok := l.take(<-l.results); ok {
				return a, a.err
			}
			continue
		}
		if l.empty != nil {
			l.wait(ctx)
			continue
		}
		free := w.senders() - int(w.batches.Load())
		most := claimsFor(w.cfg.ClaimRate, l.rtt.est)
		if l.probe {
			most = 1
		}
		if free <= 0 || l.claiming >= most {
			select {
			case <-w.freed:
			case a := <-l.results:
				if a, ok := l.take(a); ok {
					return a, a.err
				}
			case <-ctx.Done():
			}
			continue
		}
		now := time.Now()
		n := min(free, lanesFor(w.cfg.ClaimRate))
		if d := l.pace.waitFor(now, n); d > 0 {
			if l.claiming == 0 {
				_ = consumer.Sleep(ctx, d)
				continue
			}
			if a, ok := l.waitAnswer(ctx, d); ok {
				return a, a.err
			}
			continue
		}
		l.issue(now, n)
	}
	return claimAnswer{}, consumer.ErrStopped
}

// wait acts on the last empty answer (RetryIn, the Waiter), with no claim
// in flight.
func (l *claimLoop) wait(ctx context.Context) {
	c := *l.empty
	l.empty, l.probe = nil, c.RetryIn < 0
	switch {
	case c.RetryIn == 0:
		// The ring has lanes this call's visit budget did not reach.
		if l.zeros++; l.zeros > 3 {
			_ = consumer.Sleep(ctx, 5*time.Millisecond)
		}
	case c.RetryIn < 0:
		l.zeros = 0
		l.waiter.Wait(ctx, maxIdleWait)
	default:
		l.zeros = 0
		l.waiter.Wait(ctx, min(c.RetryIn, maxIdleWait))
	}
}

// emptyKeeps is how many of the n messages of the claim pace (per: one
// message's share, claimPacer.per; 0: no pace) that a claim took at its
// issue (claimPacer.claimed) an answer of nothing keeps, with retryIn its
// lanes.Claimed.RetryIn; the rest is given back (claimPacer.answered). It
// keeps them when jobs are there but held by time (retryIn > 0: the global
// budget or a queue's own spent, a lane paced), up to claimGap of the pace:
// a budget's room then comes back one send at a time (as each send leaves
// its sliding window), and a claim that started as soon as the first send
// left took one or two lanes, the claims beside it none (bench lazy, a
// paid broadcast at 1,000/s with ClaimRate 1,130/s, when claimGap was
// 8 ms: 28% of claims took nothing and a claim took 5.2 of the 10 lanes
// it asked for, 0.19 claim scripts per copy delivered; with the share
// kept: 13%, 8 lanes, 0.13). Kept, the next claim starts up to claimGap
// later than it would have (at 1,130/s claimGap is 18 messages' share,
// 15.9 ms, so all 16 of a claim's are kept, 14.2 ms; 2 of 3 at 130/s,
// 15.4 ms; none up to 62/s, where one message's share is more than
// claimGap), when the budget has room for about the lanes it asks for; a
// job that becomes claimable meanwhile (a reply's wake-up) waits that much
// longer at most. Spacing claims more takes nothing from a budget: its
// room waits for the next claim. An idle answer (retryIn < 0) or one whose visit budget left lanes
// unvisited (0) keeps none: no budget binds then.
func emptyKeeps(n int, retryIn, per time.Duration) int {
	if retryIn <= 0 || per <= 0 {
		return 0
	}
	return min(n, int(claimGap/per))
}

// maxIdleWait bounds an idle wait for a wake-up: the Waiter's subscription
// can die without a word (a network cut that leaves its TCP connection
// half-open: no error, and no message ever again), and a worker waiting on
// it alone would then wait for good while its queues fill (a chaos run,
// seed 3: delivery stopped after a 5.8 s cut). One claim a second of an
// idle worker costs nothing worth counting.
const maxIdleWait = time.Second

// waitAnswer waits d (the pacer's) or for an answer, which it takes.
func (l *claimLoop) waitAnswer(ctx context.Context, d time.Duration) (claimAnswer, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case a := <-l.results:
		return l.take(a)
	case <-ctx.Done():
	}
	return claimAnswer{}, false
}

// issue sends a claim of up to n lanes (a batch per lane, each for a
// sender of its own, see lanesFor). The claim's n slots and its n messages
// of the pace are taken before it is issued, so claims in flight never
// oversubscribe the senders and the pacer spaces their starts; the answer
// gives back what it did not use.
func (l *claimLoop) issue(now time.Time, n int) {
	w := l.w
	l.pace.claimed(now, n)
	w.batches.Add(int64(n))
	l.claiming++
	go func() {
		cctx, cancel := context.WithTimeout(l.drain, 10*time.Second)
		defer cancel()
		t0 := time.Now()
		w.acks.Load().claimed()
		w.paid.sync(cctx, w)
		c, err := w.store.Claim(cctx, lanes.ClaimRequest{Queues: l.queues, Lease: w.cfg.Lease, Max: w.cfg.BatchMax,
			Lanes: n, Claimer: w.shared.claimer()})
		l.results <- claimAnswer{c: c, lanes: n, err: err, t0: now, took: time.Since(t0)}
	}()
}

// take records a claim's answer; it reports whether the answer is to be
// handed out (jobs claimed, or a failed claim: a.err).
func (l *claimLoop) take(a claimAnswer) (claimAnswer, bool) {
	w := l.w
	l.claiming--
	l.rtt.observe(time.Since(a.t0))
	w.m.claimLatency.Observe(a.took.Seconds())
	if a.err != nil {
		l.pace.answered(a.lanes, 0)
		w.unreserve(a.lanes)
		a.err = w.redactor.Error(a.err)
		w.state.claimed(time.Now(), a.err, a.err.Error())
		return a, true
	}
	w.state.claimed(time.Now(), nil, "")
	if len(a.c.Jobs) == 0 {
		l.pace.answered(a.lanes, emptyKeeps(a.lanes, a.c.RetryIn, l.pace.per))
		w.unreserve(a.lanes)
		l.empty = &a.c
		return a, false
	}
	l.zeros, l.empty, l.probe = 0, nil, false
	l.pace.answered(a.lanes, len(a.c.Jobs))
	a.batches = a.c.Batches()
	w.unreserve(a.lanes - len(a.batches))
	w.inflight.Add(int64(len(a.c.Jobs)))
	w.m.inFlight.Add(float64(len(a.c.Jobs)))
	return a, true
}

// Handle sends a claim's batches (one per lane served), each on a sender
// of its own (their slots were taken at the claim's issue): the first on
// this goroutine, the others on the pool's (senderPool); it frees each
// sender when its batch is done and returns once all are.
func (l *claimLoop) Handle(ctx context.Context, a claimAnswer) bool {
	var wg sync.WaitGroup
	for _, b := range a.batches[1:] {
		wg.Add(1)
		l.pool.run(func() {
			defer wg.Done()
			l.send(ctx, a.t0, b)
		})
	}
	l.send(ctx, a.t0, a.batches[0])
	wg.Wait()
	return false
}

// send sends one lane's batch claimed at t0 and frees its sender.
func (l *claimLoop) send(ctx context.Context, t0 time.Time, jobs []lanes.Job) {
	growStack(len(jobs))
	defer l.w.batchDone()
	// From the claim's start: a sender's slot is taken while the loop
	// claims for it, too.
	if sent := l.w.runBatch(ctx, l.workCtx, l.drain, t0, jobs); sent > 0 {
		l.w.hold.observe(time.Since(t0) / time.Duration(sent))
	}
}
