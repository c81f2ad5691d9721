package worker

import (
	"math"
	"time"
)

// Concurrent claims (see Run). A claim is one short script in Valkey, but
// its round trip (0.5-0.8 ms on a loaded 2-CPU host, more under heavier
// load) is paid in full by a loop that waits for each answer before the
// next claim: at 1,000 claims/s (a broadcast at 1,000/s, one message per
// claim) one loop spends most of its time waiting, and any further delay
// of the host is rate lost for good. So the claim loop keeps up to
//
//	claimsFor(ClaimRate, claim round trip) = clamp(ceil(ClaimRate × rtt × claimsHeadroom), 1, maxClaimsInFlight)
//
// claims in flight (Little's law again): 1 at 30/s (30 × 1 ms × 2 = 0.06),
// 2-4 at 1,000/s. With one in flight the loop behaves as it did before.
const (
	// claimsHeadroom covers the variation of the claim's round trip and the
	// loop's own scheduling delays: twice what the mean needs.
	claimsHeadroom = 2.0
	// maxClaimsInFlight caps the claims one worker process has in flight:
	// each holds a sender's slot (and a Valkey connection's pipeline) until
	// it is answered.
	maxClaimsInFlight = 8
	// claimRTTWeight is the weight of a new claim round trip in its running
	// estimate.
	claimRTTWeight = 0.1
)

// Lanes per claim. At a high rate a claim of one lane per message (a
// broadcast's lanes hold one copy each) costs a claim round trip and a
// claim script's fixed work (the pause, due times, budgets, send-log
// expiries) per message; one claim of several lanes (lanes
// ClaimRequest.Lanes) pays them once for all, each lane still served as a
// claim of its own would be. The claim loop asks for
//
//	lanesFor(ClaimRate) = clamp(ceil(ClaimRate × claimGap), 1, maxLanesPerClaim)
//
// lanes (fewer when fewer senders are free) and starts such a claim when
// the pacer has all of its messages due (claimPacer.waitFor), so a claim
// waits at most claimGap for its lanes: 1 lane up to 62/s (30/s: 1, as
// before; ClaimRate × claimGap is 1 at 62.5/s), 3 at 130/s (the default
// bulk + reply rate), 16 at 1,000/s and at 1,130/s (a paid broadcast at
// 1,000/s beside them; ceil(18.08) = 19, capped).
const (
	// claimGap is the most a claim of several lanes waits for its
	// messages to fall due: a reply is never held longer than that. 16 ms,
	// not 8 (issue 27, CPU per delivered copy): a latency traded for
	// fewer, larger claims, each a wake-up of Valkey less (measured in
	// docs/delivery.md, "Where a copy's CPU goes").
	claimGap = 16 * time.Millisecond
	// maxLanesPerClaim caps the lanes (so batches, each on a sender) one
	// claim asks for. 16, though claimGap asks for 19 at 1,130/s: a cap
	// of 24 (so 19) cut Valkey's wake-ups a copy only from 0.225 to 0.212
	// and its script calls from 0.15 to 0.14, CPU a copy not at all (1.02
	// of the cap of 16, pair by pair, 9 pairs of bench lazy's paid
	// broadcast at 1,000/s: within their noise), and would hold a claim
	// 15.9 ms, not 13.3 (its 19 or 16 messages' share less one).
	maxLanesPerClaim = 16
)

// lanesFor is how many lanes one claim asks for at rate messages/s (0:
// unknown, then 1).
func lanesFor(rate int) int {
	if rate <= 0 {
		return 1
	}
	n := int(math.Ceil(float64(rate) * claimGap.Seconds()))
	return min(max(n, 1), maxLanesPerClaim)
}

// claimsFor is how many claims to keep in flight at rate messages/s (0:
// unknown, then 1) when a claim's round trip is rtt.
func claimsFor(rate int, rtt time.Duration) int {
	if rate <= 0 || rtt <= 0 {
		return 1
	}
	n := int(math.Ceil(float64(rate) * rtt.Seconds() * claimsHeadroom))
	return min(max(n, 1), maxClaimsInFlight)
}

// claimRTT is the running estimate of a claim's round trip, from its issue
// by the claim loop to the loop taking its answer (so the loop's own
// delays count). Used by the claim loop only: not safe for concurrent use.
type claimRTT struct {
	est time.Duration
}

// observe adds one measurement d.
func (c *claimRTT) observe(d time.Duration) {
	if d <= 0 {
		return
	}
	if c.est == 0 {
		c.est = d
		return
	}
	c.est += time.Duration(claimRTTWeight * float64(d-c.est))
}
