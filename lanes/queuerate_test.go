package lanes_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// Two queues with budgets of their own (reply 30/s, bulk 10/s), claimed in
// priority order ["reply", "bulk"] by two claimers on two clients, with
// both backlogs deep: by server time no 1 s window holds more than either
// queue's budget, each queue uses at least 90% of its own (a spent reply
// budget does not stop bulk claims, nor the reverse), and claimers sleep
// RetryIn instead of polling once both are spent.
func TestQueueRatesAreBudgetsOfTheirOwn(t *testing.T) {
	t.Parallel()
	const replyRate, bulkRate = 30, 10
	const dur = 4 * time.Second
	opts := []lanes.Option{
		lanes.WithQueue("reply", lanes.QueueConfig{Ordered: true, Rate: replyRate, Window: time.Second}),
		lanes.WithQueue("bulk", lanes.QueueConfig{Ordered: true, Rate: bulkRate, Window: time.Second}),
	}
	s0 := newStore(t, opts...)
	stores := []*lanes.Store{s0, sibling(t, s0, opts...)}
	m := lanes.NewMinter()
	fillLanes(t, s0, m, "reply", "r-", 60, 2*replyRate*int(dur/time.Second)/60+1)
	fillLanes(t, s0, m, "bulk", "b-", 60, 2*bulkRate*int(dur/time.Second)/60+1)

	const lease = 30 * time.Second
	req := lanes.ClaimRequest{Queues: []string{"reply", "bulk"}, Lease: lease, Max: 8}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var (
		mu    sync.Mutex
		times = map[string][]int64{}
		calls int
		wg    sync.WaitGroup
	)
	for _, s := range stores {
		wg.Go(func() {
			for {
				c, err := s.Claim(ctx, req)
				if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
					return
				}
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				mu.Lock()
				calls++
				for _, j := range c.Jobs {
					times[j.Queue] = append(times[j.Queue], claimedAt(j, lease))
				}
				mu.Unlock()
				for _, j := range c.Jobs {
					if err := s.Ack(context.Background(), j.Lease); err != nil {
						t.Errorf("ack: %v", err)
						return
					}
				}
				if len(c.Jobs) > 0 {
					continue
				}
				if c.RetryIn <= 0 {
					t.Errorf("RetryIn %v with both backlogs deep and both budgets spent", c.RetryIn)
					return
				}
				tm := time.NewTimer(c.RetryIn)
				select {
				case <-tm.C:
				case <-ctx.Done():
					tm.Stop()
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	first := min(times["reply"][0], times["bulk"][0])
	total := 0
	for q, limit := range map[string]int{"reply": replyRate, "bulk": bulkRate} {
		ts := times[q]
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		in := 0
		for _, x := range ts {
			if x < first+dur.Milliseconds() {
				in++
			}
		}
		total += len(ts)
		perSec := float64(in) / dur.Seconds()
		t.Logf("%s: %d claims (%.1f/s), busiest 1 s window %d", q, in, perSec, maxInWindow(ts, 1000))
		require.LessOrEqual(t, maxInWindow(ts, 1000), limit, "%s: a 1 s window holds more than its budget", q)
		require.GreaterOrEqual(t, perSec, 0.9*float64(limit), "%s: its budget is under-used", q)
	}
	require.Less(t, calls, 3*total+100, "claimers sleep RetryIn instead of polling")
}

// A queue's budget is refused unless its window is at least 1 ms.
func TestQueueRateOptionIsValidated(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	tag := lanes.WithTag(valkeytest.Namespace(t))
	for _, qc := range []lanes.QueueConfig{{Rate: -1, Window: time.Second}, {Rate: 5}, {Rate: 5, Window: -time.Second}} {
		_, err := lanes.New(c, tag, lanes.WithQueue("q", qc))
		require.ErrorIs(t, err, lanes.ErrInvalid, "%+v", qc)
	}
	_, err := lanes.New(c, tag, lanes.WithQueue("q", lanes.QueueConfig{Rate: 5, Window: time.Second}))
	require.NoError(t, err)
}

// BudgetUse counts what a claim counts: sends in flight and sends settled
// within the window, against the queue's own budget, or the store's global
// rate for a queue without one; it empties once the window has passed.
func TestBudgetUseCountsInFlightAndRecentSends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const window = 300 * time.Millisecond
	s := newStore(t, lanes.WithGlobalRate(50, window),
		lanes.WithQueue("own", lanes.QueueConfig{Rate: 10, Window: window}))
	m := lanes.NewMinter()
	fillLanes(t, s, m, "own", "o", 5, 1)
	fillLanes(t, s, m, "shared", "s", 3, 1)
	in := s.Inspector()
	var own []lanes.Job
	for range 5 {
		c := claim(t, s, 1, time.Minute, "own")
		require.Len(t, c.Jobs, 1)
		own = append(own, c.Jobs[0])
	}
	for range 3 {
		c := claim(t, s, 1, time.Minute, "shared")
		require.Len(t, c.Jobs, 1)
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
	}
	for _, j := range own[:2] {
		require.NoError(t, s.Ack(ctx, j.Lease))
	}
	b, err := in.BudgetUse(ctx, "own")
	require.NoError(t, err)
	require.Equal(t, lanes.Budget{Used: 5, Limit: 10, Window: window}, b, "3 in flight, 2 settled just now")
	// The global log counts every claim of a queue without a budget of its
	// own (and those of "own": the global rate applies to it as well).
	b, err = in.BudgetUse(ctx, "shared")
	require.NoError(t, err)
	require.Equal(t, lanes.Budget{Used: 8, Limit: 50, Window: window}, b)
	time.Sleep(window + 50*time.Millisecond)
	b, err = in.BudgetUse(ctx, "own")
	require.NoError(t, err)
	require.Equal(t, 3, b.Used, "the settled ones left the window; the in-flight ones stay")
	_, err = in.BudgetUse(ctx, "")
	require.ErrorIs(t, err, lanes.ErrInvalid)
	none, err := newStore(t).Inspector().BudgetUse(ctx, "q")
	require.NoError(t, err)
	require.Zero(t, none, "no budget configured")
}
