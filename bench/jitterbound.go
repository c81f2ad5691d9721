package main

import (
	"math/rand/v2"
	"sort"
	"time"
)

// What jitter leaves of a window to any sender (issue 28, section 18): a
// send is counted by Telegram when it arrives, one way after it leaves, and
// the way there is not known before the answer comes back. With the
// emulator's jitter (tgemu.WithJitter: each way uniform within ±fraction of
// half the latency, per request) two sends claimed a window apart can
// arrive closer than a window, so even an ideal sender (no CPU, no queue,
// claims at a perfectly regular pace, never told the way there) gets 429s
// from a sliding window once its rate comes close to the limit. The bound
// is the highest such pace whose 429s stay within the allowance: the goal
// of a cell is out of anyone's reach where it is below the goal.

// jitterBoundSeeds and jitterBoundSpan are the simulation's size: seeded
// runs of span each (the highest 429 share of the seeds counts).
const (
	jitterBoundSeeds = 3
	jitterBoundSpan  = 200 * time.Second
)

// jitterBound is the fraction of limit per per (a sliding window, as
// tgemu's: a refused request does not count in it) that a sender claiming
// at a regular pace delivers with at most allowance × 429 per 1,000 sends
// when each request arrives latency ÷ 2 × (1 ± fraction, uniform) after its
// claim: the highest pace, in steps of 0.1/s down from the limit, whose
// worst seed stays within the allowance. 1 without jitter (every request
// arrives as regularly as it was claimed). The emulator's penalty (a 429
// refusing the window's next requests until its retry_after) is left out:
// with it, the bound could only be lower.
func jitterBound(latency time.Duration, fraction float64, limit int, per time.Duration, allowance float64) float64 {
	for tenths := limit * 10; tenths > 0; tenths-- {
		pace := float64(tenths) / 10 / per.Seconds()
		worst := 0.0
		for seed := range uint64(jitterBoundSeeds) {
			worst = max(worst, simulatedTooMany(pace, latency, fraction, limit, per, seed))
			if worst > allowance {
				break
			}
		}
		if worst <= allowance {
			return float64(tenths) / 10 / float64(limit)
		}
	}
	return 0
}

// simulatedTooMany is the 429s per 1,000 sends of one seeded run of
// jitterBound's ideal sender at pace sends/s for jitterBoundSpan.
func simulatedTooMany(pace float64, latency time.Duration, fraction float64, limit int, per time.Duration, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 28))
	n := int(pace * jitterBoundSpan.Seconds())
	half := latency.Seconds() / 2
	arrivals := make([]float64, n)
	for i := range arrivals {
		arrivals[i] = float64(i)/pace + half*(1+fraction*(2*rng.Float64()-1))
	}
	sort.Float64s(arrivals)
	accepted := make([]float64, 0, n)
	refused := 0
	for _, at := range arrivals {
		// accepted is in arrival order: the ones still in the window
		// (at - per, at] are its tail from the first after at - per.
		// (1 µs of slack at the edge: a pace of exactly the limit is not
		// refused for a rounding of i ÷ pace.)
		edge := at - per.Seconds() + 1e-6
		first := sort.SearchFloat64s(accepted, edge)
		for first < len(accepted) && accepted[first] <= edge {
			first++
		}
		if len(accepted)-first >= limit {
			refused++
			continue
		}
		accepted = append(accepted, at)
	}
	return float64(refused) * 1000 / float64(max(n, 1))
}
