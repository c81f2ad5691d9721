package lanes_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Three claimers on three connections (three clients,
// three Stores with the same tag and options) share one global rate of 50/s.
// By server time (lease deadline minus lease length = claim time), no 1 s
// window holds more than 50 claims. Claimers sleep exactly RetryIn when the
// budget is spent (no busy polling: a few empty claims per job at most).
// The run lasts 10 s (4 s with -short). How fully the claimers use the
// rate is a throughput figure (BenchmarkGlobalRateUseAcrossThreeClaimers):
// a settled send counts until one window after its settle, so each refill
// comes an ack round trip plus a wake-up after the claim it replaces, which
// a loaded machine stretches (45.4/s seen at load 9, 50.0/s idle); that the
// budget is back exactly when RetryIn says is TestGlobalRateRetryInIsExact.
func TestGlobalRateHoldsAcrossThreeClaimers(t *testing.T) {
	t.Parallel()
	dur := 10 * time.Second
	if testing.Short() {
		dur = 4 * time.Second
	}
	r := runThreeClaimers(t, dur)
	if t.Failed() {
		return
	}
	require.NotEmpty(t, r.times)
	worst := maxInWindow(r.times, 1000)
	t.Logf("%d claims in %v (%.1f/s by server time over whole windows), busiest 1 s window %d, %d claim calls, %d RetryIn sleeps",
		len(r.times), dur, r.perSec(), worst, r.calls, r.sleeps)
	require.LessOrEqual(t, worst, claimersRate, "a 1 s window holds more than the global rate")
	// No busy polling: every empty claim is followed by a RetryIn sleep, and
	// there are a few empty claims per job at most (the three claimers wake
	// together when the window refills; one wins).
	require.LessOrEqual(t, r.calls, int64(len(r.times))+r.sleeps+3)
	require.Less(t, r.sleeps, int64(5*len(r.times)+100))
}

// BenchmarkGlobalRateUseAcrossThreeClaimers: the rate three claimers
// sleeping exactly RetryIn get from a global rate of 50/s over 10 s, by
// server time, over whole windows (claim k+50 against claim k): metric
// use = that rate / 50 (1 is the whole budget; below it, each refill waits
// for the ack round trip and the claimer's wake-up).
// Run: go test -run '^$' -bench GlobalRateUseAcrossThreeClaimers -benchtime 1x ./lanes/
func BenchmarkGlobalRateUseAcrossThreeClaimers(b *testing.B) {
	var uses []float64
	for range b.N {
		r := runThreeClaimers(b, 10*time.Second)
		uses = append(uses, r.perSec()/claimersRate)
	}
	sort.Float64s(uses)
	b.ReportMetric(uses[len(uses)/2], "use")
}

// claimersRate is the global rate of runThreeClaimers (per second).
const claimersRate = 50

// claimersRun is what runThreeClaimers saw: each job's claim time (server
// ms, sorted), the claim calls and the RetryIn sleeps.
type claimersRun struct {
	times         []int64
	calls, sleeps int64
}

// perSec is the claim rate over whole windows: claimersRate claims per
// mean time from claim k to claim k+claimersRate (the window they share
// the budget over), so neither the start's burst nor the run's last,
// partial window weighs.
func (r claimersRun) perSec() float64 {
	n := len(r.times) - claimersRate
	if n <= 0 {
		return 0
	}
	var sum int64
	for k := range n {
		sum += r.times[k+claimersRate] - r.times[k]
	}
	return claimersRate * 1000 / (float64(sum) / float64(n))
}

// runThreeClaimers runs three claimers on three connections for dur on
// one global rate of claimersRate/s (twice the work it allows, 100
// lanes), each acking its jobs at once and sleeping exactly RetryIn when
// the budget is spent.
func runThreeClaimers(tb testing.TB, dur time.Duration) claimersRun {
	tb.Helper()
	opts := []lanes.Option{lanes.WithGlobalRate(claimersRate, time.Second)}
	s0 := newStore(tb, opts...)
	stores := []*lanes.Store{s0, sibling(tb, s0, opts...), sibling(tb, s0, opts...)}
	secs := int(dur / time.Second)
	// Twice the work the rate allows, over 100 lanes: the rate binds throughout.
	fillLanes(tb, s0, lanes.NewMinter(), "q", "chat-", 100, 2*claimersRate*secs/100+1)

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
				// valkey-go may fail a call whose deadline is about to pass
				// before ctx's own timer fires: either way the run is over.
				if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
					return
				}
				calls.Add(1)
				if err != nil {
					tb.Errorf("claim: %v", err)
					return
				}
				for _, j := range c.Jobs {
					mu.Lock()
					times = append(times, claimedAt(j, lease))
					mu.Unlock()
					if err := s.Ack(context.Background(), j.Lease); err != nil {
						tb.Errorf("ack: %v", err)
						return
					}
				}
				if len(c.Jobs) > 0 || c.RetryIn == 0 {
					continue
				}
				if c.RetryIn < 0 {
					tb.Errorf("RetryIn -1 with work pending")
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
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return claimersRun{times: times, calls: calls.Load(), sleeps: sleeps.Load()}
}

// The global budget's RetryIn is exact: it is the ms until the oldest
// settled send of the window leaves it, on the server clock; a claim after
// that wait gets a job, and not one before.
func TestGlobalRateRetryInIsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const window = 400 * time.Millisecond
	s := newStore(t, lanes.WithGlobalRate(3, window))
	fillLanes(t, s, lanes.NewMinter(), "q", "g", 4, 3)
	const lease = time.Minute
	var ackLo, ackHi int64
	for i := 0; i < 3; i++ {
		c := claim(t, s, 1, lease, "q")
		require.Len(t, c.Jobs, 1)
		lo := serverNowMS(t, s)
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
		hi := serverNowMS(t, s)
		if i == 0 {
			ackLo, ackHi = lo, hi
		}
	}
	before := serverNowMS(t, s)
	c := claim(t, s, 1, lease, "q")
	after := serverNowMS(t, s)
	require.Empty(t, c.Jobs)
	require.Greater(t, c.RetryIn, time.Duration(0))
	// The script computed RetryIn = firstAck + window - now, with now in
	// [before, after] and the first ack's server time in [ackLo, ackHi].
	got := c.RetryIn.Milliseconds()
	require.LessOrEqual(t, got, ackHi+window.Milliseconds()-before)
	require.GreaterOrEqual(t, got, ackLo+window.Milliseconds()-after)
	time.Sleep(c.RetryIn)
	var c2 lanes.Claimed
	for k := 0; k < 3; k++ { // the server clock may trail ours by under 1 ms
		if c2 = claim(t, s, 1, lease, "q"); len(c2.Jobs) > 0 {
			break
		}
		require.LessOrEqual(t, c2.RetryIn, 2*time.Millisecond, "budget not refilled after RetryIn")
		time.Sleep(c2.RetryIn)
	}
	require.Len(t, c2.Jobs, 1)
	require.GreaterOrEqual(t, claimedAt(c2.Jobs[0], lease), ackLo+window.Milliseconds())
}

// Sends in flight hold the global budget until they settle, and a send
// settled with no round-trip floor (Lease.Floor 0) holds it for one window
// after its settle time: a request that reached Telegram late (a slow
// network, a stalled worker) still counts in the window Telegram sees it in.
// (With a floor: TestSettledSendCountsFromItsLatestArrival.)
func TestInFlightSendsHoldTheGlobalBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const window = 300 * time.Millisecond
	s := newStore(t, lanes.WithGlobalRate(2, window))
	fillLanes(t, s, lanes.NewMinter(), "q", "g", 3, 2)
	const lease = time.Minute
	var held []lanes.Lease
	for i := 0; i < 2; i++ {
		c := claim(t, s, 1, lease, "q")
		require.Len(t, c.Jobs, 1)
		held = append(held, c.Jobs[0].Lease)
	}
	// Both in flight: wait a whole window; the budget is still spent.
	time.Sleep(window + 50*time.Millisecond)
	c := claim(t, s, 1, lease, "q")
	require.Empty(t, c.Jobs, "in-flight sends must hold the budget past their claim window")
	require.Equal(t, window, c.RetryIn, "all counted sends in flight: look again one window later")
	// Settle one: it still counts for a window from its settle time.
	lo := serverNowMS(t, s)
	require.NoError(t, s.Ack(ctx, held[0]))
	c = claim(t, s, 1, lease, "q")
	require.Empty(t, c.Jobs, "a send settled just now counts for one more window")
	// The settle happened between lo and the claim, the claim before hi:
	// the wait is the settle's window left at the claim, within those
	// bounds (1 ms for the server's rounding) whatever the scheduling.
	hi := serverNowMS(t, s)
	require.GreaterOrEqual(t, c.RetryIn.Milliseconds(), lo+window.Milliseconds()-hi-1, "counted from the settle, not before it")
	require.LessOrEqual(t, c.RetryIn.Milliseconds(), window.Milliseconds(), "at most one window from the settle")
	time.Sleep(c.RetryIn)
	c = claim(t, s, 1, lease, "q")
	require.Len(t, c.Jobs, 1)
	require.NoError(t, s.Release(ctx, held[1]))
}
