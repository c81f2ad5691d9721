package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/codemojex/codemojex/consumer"
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
// docs/delivery.md. The worker settles with the smaller of this floor and
// the store's (floorShare below).
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

// The store-wide floor. A process's own floor is safe only if every other
// process's legs are at least half of it: a process far from Telegram
// (its own floor long) whose sends counted from settle - its floor would
// let a near process send a chat's next message before the far one's had
// left Telegram's window. So each process publishes its own floor to the
// store about once a second (lanes.Store.ShareFloor: one script call, not
// per send) and settles with min(own floor, the smallest floor any live
// process published): every process assumes the nearest one's legs. A
// process that died stops counting one to two lanes floor epochs (10-20 s
// by default) after its last publish.
const (
	// floorShareEvery is how often the worker publishes its floor and
	// reads the store's.
	floorShareEvery = time.Second
	// floorShareStale is how long a store floor read counts: with no
	// successful read for that long (Valkey unreachable), sends settle
	// with floor 0 (from their settle, no assumption), since a nearer
	// process may have started meanwhile.
	floorShareStale = 3 * time.Second
)

// floorShare is the store floor last read (see above). Safe for
// concurrent use; the zero value has read nothing (floor 0).
type floorShare struct {
	mu    sync.Mutex
	id    string        // the id this worker publishes under (claimer)
	floor time.Duration // the store's floor at the last read
	at    time.Time     // when it was read; zero: never
}

// claimer returns the id the worker claims and publishes its floor under
// (consumer.NewClaimerID), made on first use.
func (s *floorShare) claimer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		s.id = consumer.NewClaimerID()
	}
	return s.id
}

// set records a store floor read at now.
func (s *floorShare) set(floor time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.floor, s.at = floor, now
}

// settle returns the floor to settle an answered send with at now: the
// smaller of own and the store floor last read, or 0 when that read is
// older than floorShareStale (or none was made).
func (s *floorShare) settle(own time.Duration, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() || now.Sub(s.at) > floorShareStale {
		return 0
	}
	return min(own, s.floor)
}

// shareFloor publishes the worker's own floor and reads the store's (one
// call); a failed call is logged and keeps the last read (see
// floorShare.settle).
func (w *Worker) shareFloor(ctx context.Context) {
	own := w.floor.get(time.Now())
	w.m.rttFloorOwn.Set(own.Seconds())
	cctx, cancel := context.WithTimeout(ctx, floorShareEvery)
	defer cancel()
	f, err := w.store.ShareFloor(cctx, w.shared.claimer(), own)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("round-trip floor: share failed", slog.Any("err", w.redactor.Error(err)))
		}
		return
	}
	w.shared.set(f, time.Now())
}

// shareFloors calls shareFloor every floorShareEvery until ctx ends.
func (w *Worker) shareFloors(ctx context.Context) {
	t := time.NewTicker(floorShareEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.shareFloor(ctx)
		}
	}
}
