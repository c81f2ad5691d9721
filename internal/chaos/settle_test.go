package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// The settling: once the load and the faults are over, the run waits for
// the system to drain before the checker counts. A copy still queued and
// moving at the bot's learned rate is late, not lost, so the wait follows
// the work: it goes on while something moves, up to what the work left
// needs at the learned rate, and ends as one of settleEnd.
const (
	// settleStall is how long nothing may move (no send or edit accepted
	// by the emulator, the work left never below its least) before the
	// system is called stalled: longer than a lease (5 s), a 429's
	// retry_after (1-3 s, 5 s without one), the poller's longest backoff
	// (5 s) and a transient failure's retry after 5 failures in a row (1 s
	// × 2^5 ± 20%, 38.4 s at most).
	settleStall = 60 * time.Second
	// settleSlack is how many times what the work left needs at the
	// learned rate the settling may last (replies, edits and free copies
	// share the total over the reply and bulk budgets, and the rate climbs
	// back only slowly; paid copies go apart, at the paid rate).
	settleSlack = 2
	// settleCap is the most any settling lasts, whatever the work left.
	settleCap = 15 * time.Minute
	// settlePoll is how often the settling looks at the system.
	settlePoll = time.Second
)

// settleEnd is why the settling ended.
type settleEnd string

const (
	// settleDrained: every update confirmed and answered, every copy
	// delivered (or dead-lettered), the send queues and the intake empty.
	settleDrained settleEnd = "drained"
	// settleStalled: nothing moved for settleStall.
	settleStalled settleEnd = "stalled"
	// settleCapped: still moving when the bound (settleBound) was reached.
	settleCapped settleEnd = "cap"
)

// settleBound is how long the settling may last when left sends are owed
// at its start and the learned budget allows rate sends a second:
// settleSlack times left ÷ rate, at least floor (the fixed bound runs had
// before it followed the rate) and at most settleCap. A rate ≤ 0 gives
// settleCap.
func settleBound(floor time.Duration, left int, rate float64) time.Duration {
	if rate <= 0 {
		return settleCap
	}
	need := time.Duration(settleSlack * float64(left) / rate * float64(time.Second))
	return min(settleCap, max(floor, need))
}

// settleLook is one look at the system while it settles.
type settleLook struct {
	at        time.Duration // since the settling began
	drained   bool          // as settleDrained says
	delivered int           // sends and edits the emulator accepted so far (only grows)
	left      int           // sends still owed (see owed)
}

// settler decides, look by look, whether the settling is over and why:
// drained as soon as a look says so; else stalled once nothing moved (no
// more delivered, left never below its least so far) for stall since the
// last move (the first look counts as one); else capped at bound.
type settler struct {
	bound, stall time.Duration
	looked       bool
	moved        time.Duration // the last look that saw a move
	delivered    int           // the most delivered seen
	least        int           // the least left seen
}

// look takes the next look (at ascending) and returns why the settling
// ends, ok false while it goes on.
func (s *settler) look(l settleLook) (end settleEnd, ok bool) {
	if l.drained {
		return settleDrained, true
	}
	if !s.looked || l.delivered > s.delivered || l.left < s.least {
		s.moved = l.at
	}
	if !s.looked || l.left < s.least {
		s.least = l.left
	}
	s.looked, s.delivered = true, max(s.delivered, l.delivered)
	switch {
	case l.at-s.moved >= s.stall:
		return settleStalled, true
	case l.at >= s.bound:
		return settleCapped, true
	}
	return "", false
}

// settled is how the settling went, for the report and the record.
type settled struct {
	End      settleEnd
	Took     time.Duration
	Bound    time.Duration
	Left     int     // sends owed at its start
	Rate     float64 // the learned rate at its start, sends a second
	RateFrom string  // where Rate came from
}

// settle waits, looking every settlePoll, until the system drains, stalls
// or reaches its bound (settleBound of the sends owed at the start, at the
// learned rate, floor at least; settleCap when ctx ends first), and returns
// how it went.
func settle(ctx context.Context, st *stack, l *load, floor time.Duration, logf func(string, ...any)) settled {
	t0 := time.Now()
	var s settler
	var out settled
	var logged time.Duration
	for {
		look := observe(ctx, st, l)
		look.at = time.Since(t0)
		if out.RateFrom == "" {
			out.Left = look.left
			out.Rate, out.RateFrom = learnedRate(ctx, st)
			out.Bound = settleBound(floor, look.left, out.Rate)
			s = settler{bound: out.Bound, stall: settleStall}
			logf("settling: %d sends owed, %.1f/s (%s): bound %.0fs (at least %.0fs, at most %s), a stall after %s without a move",
				out.Left, out.Rate, out.RateFrom, out.Bound.Seconds(), floor.Seconds(), settleCap, settleStall)
		}
		end, ok := s.look(look)
		if ok || ctx.Err() != nil {
			if !ok {
				end = settleCapped
			}
			out.End, out.Took = end, time.Since(t0)
			return out
		}
		if look.at-logged >= 15*time.Second {
			logged = look.at
			logf("settling: %.0fs, %d sends owed, %d delivered", look.at.Seconds(), look.left, look.delivered)
		}
		sleep(ctx, settlePoll)
	}
}

// observe takes one look at the system (at unset):
// drained, the emulator's accepted sends and edits, and the sends owed:
// what the checker would count lost now (updates unanswered, welcomes and
// copies not delivered) or the jobs queued, whichever is more.
func observe(ctx context.Context, st *stack, l *load) settleLook {
	lost := check(l.history(ctx, st)).Lost
	es := st.emu.Stats()
	look := settleLook{delivered: es.Sent + es.Edits, left: lost}
	q, qerr := st.queues(ctx)
	queued := q.Pending + q.InFlight + q.Delayed
	look.left = max(lost, queued)
	n, uerr := st.unhandled(ctx)
	look.drained = qerr == nil && uerr == nil && queued == 0 && n == 0 && lost == 0 &&
		len(st.emu.PendingUpdates()) == 0
	return look
}

// learnedRate is the bot's learned global budget in sends a second
// (lanes.Inspector.Learned), and where it came from; when it cannot be
// read, the lowest the budget can be learned down to (the longest bound).
func learnedRate(ctx context.Context, st *stack) (float64, string) {
	bs, err := st.store().Inspector().Learned(ctx)
	for _, b := range bs {
		if b.Queue == "" && b.Window > 0 && b.Rate > 0 {
			return float64(b.Rate) / b.Window.Seconds(), fmt.Sprintf("learned %d per %s of %d", b.Rate, b.Window, b.Configured)
		}
	}
	floor := max(1, (globalRate+lanes.LearnFloorDivisor-1)/lanes.LearnFloorDivisor)
	return float64(floor), fmt.Sprintf("the learned floor: no learned rate (%v)", err)
}

// logUndrained logs, for a settling that did not drain, where the work
// left is: the updates recorded and not handled, and each queue's stats
// (the update queue's and both send queues': pending, in flight,
// delayed, dead), or the error reading them.
func (st *stack) logUndrained(ctx context.Context, logf func(string, ...any)) {
	n, err := st.unhandled(ctx)
	logf("not drained: %d updates recorded and not handled (%v)", n, err)
	for _, q := range append([]string{intake.QueueName}, tgjob.AllQueues()...) {
		s, err := st.store().Inspector().Stats(ctx, q, 0)
		logf("not drained: queue %s: %d pending, %d in flight, %d delayed, %d dead, %d recovered (%v)", q, s.Pending, s.InFlight, s.Delayed, s.Dead, s.Recovered, err)
	}
}
