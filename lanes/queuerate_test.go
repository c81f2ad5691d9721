package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// Two queues with budgets of their own (reply 30/s, bulk 10/s), claimed in
// priority order ["reply", "bulk"] by two claimers on two clients, each
// with three windows' worth of jobs: every job is claimed exactly once and
// each lane's in mint order; by server time no 1 s window holds more than
// either queue's budget, so draining each took at least two windows; bulk
// jobs were claimed before the last reply one (a spent reply budget does
// not stop bulk claims) and reply jobs after the first bulk one (nor the
// reverse); claimers sleep RetryIn instead of polling. The test waits for
// the work to be done (a minute at most), not for a time: how fully the
// claimers use each budget is a throughput figure, which a loaded machine
// stretches (BenchmarkQueueRatesUse).
func TestQueueRatesAreBudgetsOfTheirOwn(t *testing.T) {
	t.Parallel()
	const windows = 3
	r := runQueueRates(t, windows, time.Minute)
	if t.Failed() {
		return
	}
	require.Equal(t, r.total, r.claimed, "jobs claimed within a minute")
	for q, limit := range map[string]int{"reply": queueRates["reply"], "bulk": queueRates["bulk"]} {
		jobs := r.jobs[q]
		ts := make([]int64, len(jobs))
		for i, j := range jobs {
			ts[i] = j.at
		}
		t.Logf("%s: %d claims, busiest 1 s window %d", q, len(jobs), maxInWindow(ts, 1000))
		require.Len(t, jobs, windows*limit, "%s: every job claimed once", q)
		seen := map[lanes.JobID]bool{}
		last := map[string]lanes.JobID{}
		for _, j := range jobs {
			require.False(t, seen[j.id], "%s: %s claimed twice", q, j.id)
			seen[j.id] = true
			require.Less(t, last[j.group], j.id, "%s: lane %s out of mint order", q, j.group)
			last[j.group] = j.id
		}
		require.LessOrEqual(t, maxInWindow(ts, 1000), limit, "%s: a 1 s window holds more than its budget", q)
		require.GreaterOrEqual(t, ts[len(ts)-1]-ts[0], int64((windows-1)*1000), "%s: drained faster than its budget allows", q)
	}
	reply, bulk := r.jobs["reply"], r.jobs["bulk"]
	require.Less(t, bulk[0].at, reply[len(reply)-1].at, "no bulk claim until the replies were drained")
	require.Less(t, bulk[queueRates["bulk"]-1].at, reply[len(reply)-1].at, "no reply claim once bulk's budget was spent")
	require.Less(t, r.calls, 3*(len(reply)+len(bulk))+100, "claimers sleep RetryIn instead of polling")
}

// BenchmarkQueueRatesUse: how fully two claimers use two queues' own
// budgets (reply 30/s, bulk 10/s, both backlogs deep: twice the work the
// budgets allow) over 4 s by server time: metrics reply_use and bulk_use,
// the claims of the first 4 s ÷ (4 × the queue's rate), medians over b.N
// runs (1 is the whole budget; below it, each refill waits for the ack round
// trip and a claimer's wake-up, which a loaded machine stretches: the test
// asserted 0.9 here until issue 32).
// Run: go test -run '^$' -bench QueueRatesUse -benchtime 1x ./lanes/
func BenchmarkQueueRatesUse(b *testing.B) {
	const dur = 4 * time.Second
	use := map[string][]float64{}
	for range b.N {
		r := runQueueRates(b, 2*int(dur/time.Second), dur)
		first := min(r.jobs["reply"][0].at, r.jobs["bulk"][0].at)
		for q, rate := range queueRates {
			in := 0
			for _, j := range r.jobs[q] {
				if j.at < first+dur.Milliseconds() {
					in++
				}
			}
			use[q] = append(use[q], float64(in)/dur.Seconds()/float64(rate))
		}
	}
	for q, u := range use {
		sort.Float64s(u)
		b.ReportMetric(u[len(u)/2], q+"_use")
	}
}

// queueRates are runQueueRates' queues and their budgets (per 1 s).
var queueRates = map[string]int{"reply": 30, "bulk": 10}

// claimedJob is one claim runQueueRates saw: when (server ms), which job,
// on which lane.
type claimedJob struct {
	at    int64
	id    lanes.JobID
	group string
}

// queueRatesRun is what runQueueRates saw: each queue's claims sorted by
// time, the claim calls made, and the jobs claimed of the total enqueued.
type queueRatesRun struct {
	jobs           map[string][]claimedJob
	calls          int
	claimed, total int
}

// runQueueRates fills each queue of queueRates with windows × its rate
// jobs over 60 lanes, then two claimers on two clients claim ["reply",
// "bulk"] (Max 8), ack each job at once and sleep RetryIn when both budgets
// are spent, until every job is claimed or limit has passed. Errors fail
// tb.
func runQueueRates(tb testing.TB, windows int, limit time.Duration) queueRatesRun {
	tb.Helper()
	opts := []lanes.Option{
		lanes.WithQueue("reply", lanes.QueueConfig{Ordered: true, Rate: queueRates["reply"], Window: time.Second}),
		lanes.WithQueue("bulk", lanes.QueueConfig{Ordered: true, Rate: queueRates["bulk"], Window: time.Second}),
	}
	s0 := newStore(tb, opts...)
	stores := []*lanes.Store{s0, sibling(tb, s0, opts...)}
	m := lanes.NewMinter()
	run := queueRatesRun{jobs: map[string][]claimedJob{}}
	for _, q := range []string{"reply", "bulk"} {
		n := windows * queueRates[q]
		items := make([]lanes.Item, n)
		for i := range items {
			items[i] = lanes.Item{Group: fmt.Sprintf("%s-%d", q, i%60), ID: m.New(), Payload: []byte("x")}
		}
		_, err := s0.Enqueue(context.Background(), q, items)
		require.NoError(tb, err)
		run.total += n
	}

	const lease = 30 * time.Second
	req := lanes.ClaimRequest{Queues: []string{"reply", "bulk"}, Lease: lease, Max: 8}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, s := range stores {
		wg.Go(func() {
			for {
				c, err := s.Claim(ctx, req)
				if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
					return
				}
				if err != nil {
					tb.Errorf("claim: %v", err)
					return
				}
				mu.Lock()
				run.calls++
				for _, j := range c.Jobs {
					run.jobs[j.Queue] = append(run.jobs[j.Queue], claimedJob{claimedAt(j, lease), j.ID, j.Group})
				}
				run.claimed += len(c.Jobs)
				done := run.claimed >= run.total
				mu.Unlock()
				for _, j := range c.Jobs {
					if err := s.Ack(context.Background(), j.Lease); err != nil {
						tb.Errorf("ack: %v", err)
						return
					}
				}
				if done {
					cancel()
					return
				}
				if len(c.Jobs) > 0 {
					continue
				}
				if c.RetryIn <= 0 {
					tb.Errorf("RetryIn %v with both backlogs waiting and both budgets spent", c.RetryIn)
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
	for q := range run.jobs {
		sort.SliceStable(run.jobs[q], func(i, j int) bool { return run.jobs[q][i].at < run.jobs[q][j].at })
	}
	return run
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
// rate for a queue without one (and for ""), with the rate claims use now
// (a lowered budget's); it empties once the window has passed.
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
	require.Equal(t, lanes.Budget{Used: 5, Limit: 10, Window: window, Rate: 10}, b, "3 in flight, 2 settled just now")
	// The global log counts every claim of a queue without a budget of its
	// own (and those of "own": the global rate applies to it as well).
	b, err = in.BudgetUse(ctx, "shared")
	require.NoError(t, err)
	require.Equal(t, lanes.Budget{Used: 8, Limit: 50, Window: window, Rate: 50}, b)
	global, err := in.BudgetUse(ctx, "")
	require.NoError(t, err)
	require.Equal(t, b, global, `"" is the store's global rate`)
	// A lowered budget is as full as it is for the claims: of its rate now.
	_, _, err = s.Inspector().LowerBudget(ctx, "own", "429 from several chats")
	require.NoError(t, err)
	b, err = in.BudgetUse(ctx, "own")
	require.NoError(t, err)
	require.Equal(t, []int{10, 5}, []int{b.Limit, b.Rate}, "lowered to 5 of 10")
	time.Sleep(window + 50*time.Millisecond)
	b, err = in.BudgetUse(ctx, "own")
	require.NoError(t, err)
	require.Equal(t, 3, b.Used, "the settled ones left the window; the in-flight ones stay")
	_, err = in.BudgetUse(ctx, "bad queue")
	require.ErrorIs(t, err, lanes.ErrInvalid)
	none, err := newStore(t).Inspector().BudgetUse(ctx, "q")
	require.NoError(t, err)
	require.Zero(t, none, "no budget configured")
}
