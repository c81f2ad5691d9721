package worker

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// The round-trip floor is the shortest round trip of the last 30 s: it
// falls at once when a faster answer comes, and rises only once every
// faster answer is older than the period, to the shortest of those left;
// with nothing in the period it is 0 (nothing known).
func TestRTTFloorFallsAtOnceAndRisesOnlyAfterThePeriod(t *testing.T) {
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type step struct {
		at      time.Duration
		observe time.Duration // 0: only read
		want    time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"nothing observed is 0", []step{{0, 0, 0}, {time.Minute, 0, 0}}},
		{"the first answer is the floor", []step{{0, ms(300), ms(300)}}},
		{"a faster answer lowers it at once", []step{
			{0, ms(300), ms(300)}, {500 * time.Millisecond, ms(100), ms(100)}, {2 * time.Second, ms(100), ms(100)},
		}},
		{"a slower network raises it only after the period", []step{
			{0, ms(100), ms(100)},
			{time.Second, ms(1000), ms(100)},
			{29 * time.Second, ms(1000), ms(100)},
			{29*time.Second + 900*time.Millisecond, 0, ms(100)},
			{30 * time.Second, 0, ms(1000)},
		}},
		{"it rises to the shortest answer left in the period", []step{
			{0, ms(100), ms(100)},
			{10 * time.Second, ms(200), ms(100)},
			{20 * time.Second, ms(400), ms(100)},
			{30 * time.Second, 0, ms(200)},
			{40 * time.Second, 0, ms(400)},
			{50 * time.Second, 0, 0},
		}},
		{"a slot reused after the period forgets its old minimum", []step{
			{0, ms(50), ms(50)},
			{30 * time.Second, ms(500), ms(500)},
		}},
		{"it never exceeds lanes.MaxFloor", []step{{0, 2 * lanes.MaxFloor, lanes.MaxFloor}}},
		{"a zero or negative round trip is ignored", []step{{0, ms(200), ms(200)}, {time.Second, -ms(5), ms(200)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f rttFloor
			for i, s := range tc.steps {
				if s.observe != 0 {
					f.observe(s.observe, at(s.at))
				}
				require.Equal(t, s.want, f.get(at(s.at)), "step %d at %v", i, s.at)
			}
		})
	}
}

// Concurrent senders observe and read it safely (run with -race); a time
// read before another sender's first observation counts in the first second.
func TestRTTFloorIsSafeForConcurrentUse(t *testing.T) {
	var f rttFloor
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				f.observe(time.Duration(10+i+j)*time.Millisecond, t0.Add(time.Duration(j-1)*time.Millisecond))
				_ = f.get(t0)
			}
		})
	}
	wg.Wait()
	require.Equal(t, 10*time.Millisecond, f.get(t0.Add(time.Second)))
}
