package worker

import (
	"sync"
	"time"

	"github.com/codemojex/codemojex/lanes"
)

// The round-trip floor (lanes.Lease.Floor): the shortest Bot API round trip
// this process saw over the last floorPeriod, passed with every settle of a
// send that was answered, so lanes counts the send from its latest possible
// arrival at Telegram (settle - floor) instead of its settle. It is the
// minimum of per-second minima over floorSlots seconds: a faster answer
// lowers it at once, and a slower network raises it only once every faster
// answer has left the period, so a rise of latency never makes a send count
// later than it could have arrived. Safety rests on each leg of a round trip
// (request out, answer back) taking at least half the floor; see
// docs/delivery.md.
const (
	floorSlots  = 30 // seconds kept
	floorPeriod = floorSlots * time.Second
)

// rttFloor is the sliding minimum of observed round trips. The zero value
// is ready (no observation: floor 0). Safe for concurrent use.
type rttFloor struct {
	mu sync.Mutex
	// origin is the first observation's time: seconds are counted from it
	// on the monotonic clock.
	origin time.Time
	slots  [floorSlots]floorSlot
}

// floorSlot is the shortest round trip seen in one second (sec, counted
// from origin, ≥ 1; 0 marks an empty slot).
type floorSlot struct {
	sec int64
	min time.Duration
}

// second is now's second since origin, from 1 (a time before origin, from
// a caller that read the clock before another's first observation, is in
// the first second).
func (f *rttFloor) second(now time.Time) int64 {
	return int64(max(now.Sub(f.origin), 0)/time.Second) + 1
}

// observe records a round trip d (> 0) that ended at now.
func (f *rttFloor) observe(d time.Duration, now time.Time) {
	if d <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.origin.IsZero() {
		f.origin = now
	}
	sec := f.second(now)
	s := &f.slots[sec%floorSlots]
	if s.sec != sec {
		*s = floorSlot{sec: sec, min: d} // a slot of a second that has left the period
		return
	}
	s.min = min(s.min, d)
}

// get returns the floor at now: the shortest round trip observed in the
// last floorPeriod (the current second and the floorSlots-1 before it),
// at most lanes.MaxFloor; 0 when none was.
func (f *rttFloor) get(now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.origin.IsZero() {
		return 0
	}
	sec := f.second(now)
	var lo time.Duration
	for _, s := range f.slots {
		if s.sec == 0 || s.sec > sec || s.sec <= sec-floorSlots {
			continue
		}
		if lo == 0 || s.min < lo {
			lo = s.min
		}
	}
	return min(lo, lanes.MaxFloor)
}
