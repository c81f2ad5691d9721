package lanes_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Issue #3, test 1: three claimers on three connections (three clients,
// three Stores with the same tag and options) share one global rate of 50/s.
// By server time (lease deadline minus lease length = claim time), no 1 s
// window holds more than 50 claims, and the average is at least 95% of 50/s.
// Claimers sleep exactly RetryIn when the budget is spent (no busy polling).
// The run lasts 10 s (4 s with -short).
func TestDeliveryGlobalRateThreeClaimers(t *testing.T) {
	t.Parallel()
	const rate = 50
	dur := 10 * time.Second
	if testing.Short() {
		dur = 4 * time.Second
	}
	opts := []lanes.Option{lanes.WithGlobalRate(rate, time.Second)}
	s0 := dStore(t, opts...)
	stores := []*lanes.Store{s0, dSibling(t, s0, opts...), dSibling(t, s0, opts...)}
	secs := int(dur / time.Second)
	// Twice the work the rate allows, over 100 lanes: the rate binds throughout.
	dFill(t, s0, lanes.NewMinter(), "q", "chat-", 100, 2*rate*secs/100+1)

	const lease = 30 * time.Second
	req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: lease, Max: 10}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var (
		mu            sync.Mutex
		times         []int64
		calls, sleeps atomic.Int64
		wg            sync.WaitGroup
	)
	for _, s := range stores {
		wg.Add(1)
		go func(s *lanes.Store) {
			defer wg.Done()
			for {
				c, err := s.Claim(ctx, req)
				if ctx.Err() != nil {
					return
				}
				calls.Add(1)
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				for _, j := range c.Jobs {
					mu.Lock()
					times = append(times, dClaimedAt(j, lease))
					mu.Unlock()
					if err := s.Ack(context.Background(), j.Lease); err != nil {
						t.Errorf("ack: %v", err)
						return
					}
				}
				if len(c.Jobs) > 0 || c.RetryIn == 0 {
					continue
				}
				if c.RetryIn < 0 {
					t.Errorf("RetryIn -1 with work pending")
					return
				}
				sleeps.Add(1)
				tm := time.NewTimer(c.RetryIn) // sleep exactly RetryIn
				select {
				case <-tm.C:
				case <-ctx.Done():
					tm.Stop()
					return
				}
			}
		}(s)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	require.NotEmpty(t, times)
	worst := dMaxInWindow(times, 1000)
	first := times[0]
	inRun := 0
	for _, ts := range times {
		if ts < first+dur.Milliseconds() {
			inRun++
		}
	}
	perSec := float64(inRun) / dur.Seconds()
	t.Logf("%d claims in %v by server time (%.1f/s), busiest 1 s window %d, %d claim calls, %d RetryIn sleeps",
		inRun, dur, perSec, worst, calls.Load(), sleeps.Load())
	require.LessOrEqual(t, worst, rate, "a 1 s window holds more than the global rate")
	require.GreaterOrEqual(t, perSec, 0.95*rate, "the global rate is under-used")
	// No busy polling: every empty claim is followed by a RetryIn sleep, and
	// there are a few empty claims per job at most (the three claimers wake
	// together when the window refills; one wins).
	require.LessOrEqual(t, calls.Load(), int64(len(times))+sleeps.Load()+int64(len(stores)))
	require.Less(t, sleeps.Load(), int64(5*len(times)+100))
}

// The global budget's RetryIn is exact: it is the ms until the oldest claim
// of the window leaves it, on the server clock; a claim after that wait
// gets a job, and not one before.
func TestDeliveryGlobalRateRetryInIsExact(t *testing.T) {
	t.Parallel()
	const window = 400 * time.Millisecond
	s := dStore(t, lanes.WithGlobalRate(3, window))
	dFill(t, s, lanes.NewMinter(), "q", "g", 4, 3)
	const lease = time.Minute
	var first int64
	for i := 0; i < 3; i++ {
		c := dClaim(t, s, lease, "q")
		require.Len(t, c.Jobs, 1)
		if i == 0 {
			first = dClaimedAt(c.Jobs[0], lease)
		}
	}
	before := dNowMS(t, s)
	c := dClaim(t, s, lease, "q")
	after := dNowMS(t, s)
	require.Empty(t, c.Jobs)
	require.Greater(t, c.RetryIn, time.Duration(0))
	// The script computed RetryIn = first + window - now, with now in [before, after].
	due := first + window.Milliseconds()
	require.GreaterOrEqual(t, due-c.RetryIn.Milliseconds(), before)
	require.LessOrEqual(t, due-c.RetryIn.Milliseconds(), after)
	time.Sleep(c.RetryIn)
	var c2 lanes.Claimed
	for k := 0; k < 3; k++ { // the server clock may trail ours by under 1 ms
		if c2 = dClaim(t, s, lease, "q"); len(c2.Jobs) > 0 {
			break
		}
		require.LessOrEqual(t, c2.RetryIn, 2*time.Millisecond, "budget not refilled after RetryIn")
		time.Sleep(c2.RetryIn)
	}
	require.Len(t, c2.Jobs, 1)
	require.GreaterOrEqual(t, dClaimedAt(c2.Jobs[0], lease), due)
}
