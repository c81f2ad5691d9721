package lanes_test

// Helpers of the issue #3 delivery-control suite (delivery_*_test.go): global
// rate, lane pacing, parking, pause, queue priority, wake-ups and keys, all
// against a real server. Names start with "d" so they cannot clash with the
// helpers of other suites in this package.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// dStore is newStore for tests and benchmarks: a store on its own client of
// the shared server, with a tag of its own.
func dStore(tb testing.TB, opts ...lanes.Option) *lanes.Store {
	tb.Helper()
	c := valkeytest.Shared(tb).Client(tb)
	s, err := lanes.New(c, append([]lanes.Option{lanes.WithTag(valkeytest.Namespace(tb))}, opts...)...)
	require.NoError(tb, err)
	return s
}

// dSibling is another process's view of s: a new client (its own
// connections) and a Store with the same tag and the given options.
func dSibling(tb testing.TB, s *lanes.Store, opts ...lanes.Option) *lanes.Store {
	tb.Helper()
	c := valkeytest.Shared(tb).Client(tb)
	o, err := lanes.New(c, append([]lanes.Option{lanes.WithTag(s.Tag())}, opts...)...)
	require.NoError(tb, err)
	return o
}

// dDo runs a raw command on the store's server.
func dDo(tb testing.TB, s *lanes.Store, args ...string) valkey.ValkeyResult {
	tb.Helper()
	c := s.Client()
	return c.Do(context.Background(), c.B().Arbitrary(args[0]).Args(args[1:]...).Build())
}

func dQKey(s *lanes.Store, q, name string) string { return "{" + s.Tag() + "}:q:" + q + ":" + name }

// dNowMS is the server clock in ms, floored as the scripts floor it.
func dNowMS(tb testing.TB, s *lanes.Store) int64 {
	tb.Helper()
	now, err := s.ServerTime(context.Background())
	require.NoError(tb, err)
	return now.UnixMilli()
}

// dParkedScore is lane g's score in the queue's parked set: "" when not
// parked, "inf" when parked until resumed, else the due time in ms.
func dParkedScore(tb testing.TB, s *lanes.Store, q, g string) string {
	tb.Helper()
	r := dDo(tb, s, "ZSCORE", dQKey(s, q, "parked"), g)
	if valkey.IsValkeyNil(r.Error()) {
		return ""
	}
	v, err := r.ToString()
	require.NoError(tb, err)
	return v
}

func dRing(tb testing.TB, s *lanes.Store, q string) []string {
	tb.Helper()
	v, err := dDo(tb, s, "LRANGE", dQKey(s, q, "ring"), "0", "-1").AsStrSlice()
	require.NoError(tb, err)
	return v
}

// dClaimedAt is the server time (ms) at which j was claimed: its lease
// deadline minus the lease length.
func dClaimedAt(j lanes.Job, lease time.Duration) int64 {
	return j.Deadline.UnixMilli() - lease.Milliseconds()
}

// dMaxInWindow is the most of the times ts (ms) inside any window of win ms
// (times t with start <= t < start+win), the measure a sliding-window limit
// of win ms must bound.
func dMaxInWindow(ts []int64, win int64) int {
	s := append([]int64(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	best, lo := 0, 0
	for hi := range s {
		for s[hi]-s[lo] >= win {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// dFill enqueues per jobs on each of n lanes named prefix0..prefix(n-1),
// interleaved, in one EnqueueBatch.
func dFill(tb testing.TB, s *lanes.Store, m *lanes.Minter, q, prefix string, n, per int) {
	tb.Helper()
	items := make([]lanes.Item, 0, n*per)
	for j := 0; j < per; j++ {
		for i := 0; i < n; i++ {
			items = append(items, lanes.Item{Group: fmt.Sprintf("%s%d", prefix, i), ID: m.New(), Payload: []byte("x")})
		}
	}
	r, err := s.EnqueueBatch(context.Background(), q, items)
	require.NoError(tb, err)
	require.Equal(tb, n*per, r.Added)
}

func dClaim(tb testing.TB, s *lanes.Store, lease time.Duration, queues ...string) lanes.Claimed {
	tb.Helper()
	c, err := s.Claim(context.Background(), lanes.ClaimRequest{Queues: queues, Lease: lease, Max: 1})
	require.NoError(tb, err)
	return c
}

// dWorker is a claimer as a worker runs one: it claims, settles every job
// with its settle func (Ack by default), then hands it to Jobs; when nothing
// is claimable it waits on its Waiter for RetryIn (-1: for a wake-up only).
// Claims counts Claim calls.
type dWorker struct {
	Jobs    chan lanes.Job
	Claims  atomic.Int64
	blocked atomic.Bool // waiting with RetryIn -1
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func dStartWorker(tb testing.TB, s *lanes.Store, req lanes.ClaimRequest, settle func(lanes.Job) error) *dWorker {
	tb.Helper()
	if settle == nil {
		settle = func(j lanes.Job) error { return s.Ack(context.Background(), j.Lease) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &dWorker{Jobs: make(chan lanes.Job, 1000), cancel: cancel}
	waiter, err := s.NewWaiter(ctx)
	require.NoError(tb, err)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for ctx.Err() == nil {
			c, err := s.Claim(ctx, req)
			w.Claims.Add(1)
			if err != nil {
				if ctx.Err() == nil {
					tb.Errorf("worker claim: %v", err)
				}
				return
			}
			for _, j := range c.Jobs {
				if err := settle(j); err != nil {
					tb.Errorf("worker settle %s: %v", j.ID, err)
					return
				}
				select {
				case w.Jobs <- j:
				case <-ctx.Done():
					return
				}
			}
			if len(c.Jobs) > 0 || c.RetryIn == 0 {
				continue
			}
			w.blocked.Store(c.RetryIn < 0)
			waiter.Wait(ctx, c.RetryIn)
			w.blocked.Store(false)
		}
	}()
	tb.Cleanup(w.Stop)
	return w
}

// Stop ends the worker and waits for its goroutine.
func (w *dWorker) Stop() { w.cancel(); w.wg.Wait() }

// Next is the worker's next job, or fails the test after within.
func (w *dWorker) Next(tb testing.TB, within time.Duration) lanes.Job {
	tb.Helper()
	select {
	case j := <-w.Jobs:
		return j
	case <-time.After(within):
		tb.Fatalf("worker got no job within %v (%d claims)", within, w.Claims.Load())
		return lanes.Job{}
	}
}

// WaitIdle waits until the worker found nothing to do and is blocked waiting
// for a wake-up (RetryIn -1).
func (w *dWorker) WaitIdle(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !w.blocked.Load() {
		require.True(tb, time.Now().Before(deadline), "worker never went idle")
		time.Sleep(time.Millisecond)
	}
}
