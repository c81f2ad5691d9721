package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// latencies are a run's message latencies as far as the run can tell them
// (issue 32: no constant stands in for a latency that was not measured):
// the delivered messages' exactly, and for each message not delivered by
// the run's end only how long it had waited by then, a lower bound of its
// latency.
type latencies struct {
	delivered []time.Duration
	waited    []time.Duration // not delivered: waited this long by the end, at least
}

// bound is a figure known to lie in [lo, hi]; inf: no upper bound (hi
// unused). Exact when lo == hi and not inf.
type bound struct {
	lo, hi time.Duration
	inf    bool
}

func (b bound) exact() bool { return !b.inf && b.lo == b.hi }

// quantile bounds latency quantile q (0..1, the element at rank
// min(n-1, q·n) of the n latencies sorted): lo counts every undelivered
// message at its lower bound (each true latency is at least that, so the
// true order statistic is too), hi counts them as never delivered
// (infinite: no upper bound when the rank falls among them). Zero for no
// messages.
func (l latencies) quantile(q float64) bound {
	n := len(l.delivered) + len(l.waited)
	if n == 0 {
		return bound{}
	}
	k := min(n-1, int(q*float64(n)))
	lo := slices.Concat(l.delivered, l.waited)
	slices.Sort(lo)
	hi := slices.Clone(l.delivered)
	slices.Sort(hi)
	if k >= len(hi) {
		return bound{lo: lo[k], inf: true}
	}
	return bound{lo: lo[k], hi: hi[k]}
}

// String is the figure as the report prints it: "93ms" when exact, "≥ 8s
// (not delivered by the end)" with no upper bound, else "lo–hi".
func (b bound) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	switch {
	case b.exact():
		return r(b.lo).String()
	case b.inf:
		return fmt.Sprintf("≥ %v (not delivered by the end)", r(b.lo))
	default:
		return fmt.Sprintf("%v–%v", r(b.lo), r(b.hi))
	}
}

// boundRatio is a ÷ b as ratio() formats it when both are exact, else the
// bound the two ranges allow: a.lo ÷ b.hi up to a.hi ÷ b.lo, printed
// "≤ x" (b unbounded above), "≥ x" (a unbounded above) or "x–y"; "n/a"
// when neither side is bounded.
func boundRatio(a, b bound) string {
	if a.exact() && b.exact() {
		return ratio(a.lo.Seconds(), b.lo.Seconds())
	}
	lo, hi := 0.0, math.Inf(1)
	if !b.inf && b.hi > 0 {
		lo = a.lo.Seconds() / b.hi.Seconds()
	}
	if !a.inf && b.lo > 0 {
		hi = a.hi.Seconds() / b.lo.Seconds()
	}
	switch {
	case lo == 0 && math.IsInf(hi, 1):
		return "n/a (neither side measured)"
	case lo == 0:
		return "≤ " + ratio(hi, 1)
	case math.IsInf(hi, 1):
		return "≥ " + ratio(lo, 1)
	default:
		return ratio(lo, 1) + "–" + ratio(hi, 1)
	}
}
