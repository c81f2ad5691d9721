package consumer_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

const (
	ordered   = "ordered"
	unordered = "unordered"
)

// newStore is a store on its own client of srv (nil: the shared server),
// with a tag of its own and the two queues of these tests.
func newStore(tb testing.TB, srv *valkeytest.Server) *lanes.Store {
	tb.Helper()
	return storeOn(tb, srv, valkeytest.Namespace(tb))
}

// sibling is another claimer's view of s (its own client, s's tag).
func sibling(tb testing.TB, s *lanes.Store) *lanes.Store {
	tb.Helper()
	return storeOn(tb, nil, s.Tag())
}

func storeOn(tb testing.TB, srv *valkeytest.Server, tag string) *lanes.Store {
	tb.Helper()
	if srv == nil {
		srv = valkeytest.Shared(tb)
	}
	s, err := lanes.New(srv.Client(tb), lanes.WithTag(tag),
		lanes.WithQueue(ordered, lanes.QueueConfig{Ordered: true}), lanes.WithQueue(unordered, lanes.QueueConfig{}))
	require.NoError(tb, err)
	return s
}

// enqueue puts n jobs on lane g of queue q, weighted n so one claim takes
// them all.
func enqueue(tb testing.TB, s *lanes.Store, q, g string, n int) {
	tb.Helper()
	ctx := context.Background()
	m := lanes.NewMinter()
	items := make([]lanes.Item, n)
	for i := range items {
		items[i] = lanes.Item{Group: g, ID: m.New(), Payload: []byte{byte('a' + i)}}
	}
	_, err := s.Enqueue(ctx, q, items)
	require.NoError(tb, err)
	require.NoError(tb, s.Inspector().SetWeight(ctx, g, n))
}

func claimAll(tb testing.TB, s *lanes.Store, q string, lease time.Duration, n int) []lanes.Job {
	tb.Helper()
	c, err := s.Claim(context.Background(), lanes.ClaimRequest{Queues: []string{q}, Lease: lease, Max: 16})
	require.NoError(tb, err)
	require.Len(tb, c.Jobs, n, "RetryIn %v", c.RetryIn)
	return c.Jobs
}

func leasesOf(jobs []lanes.Job) []lanes.Lease {
	ls := make([]lanes.Lease, len(jobs))
	for i, j := range jobs {
		ls[i] = j.Lease
	}
	return ls
}

func stats(tb testing.TB, s *lanes.Store, q string) lanes.Stats {
	tb.Helper()
	st, err := s.Inspector().Stats(context.Background(), q, 0)
	require.NoError(tb, err)
	return st
}

// jobsFunc is a consumer.Jobs of two funcs.
type jobsFunc struct {
	handle func(i int) consumer.Verdict
	rest   func(from int, why consumer.Why)
}

func (j jobsFunc) Handle(i int) consumer.Verdict   { return j.handle(i) }
func (j jobsFunc) Rest(from int, why consumer.Why) { j.rest(from, why) }

// A handler slower than three leases keeps its job: the keeper extends the
// lease every lease/3, so no other claimer gets the job meanwhile, and the
// ack at the end still holds the lease.
func TestLeaseIsKeptWhileAHandlerIsSlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, nil)
	other := sibling(t, s)
	const lease = 300 * time.Millisecond
	enqueue(t, s, unordered, "slow", 1)
	jobs := claimAll(t, s, unordered, lease, 1)
	var ackErr error
	var stolen atomic.Int32
	started := consumer.RunBatch(ctx, consumer.Batch{Leases: leasesOf(jobs), Claimed: time.Now(), Length: lease, Extender: s},
		jobsFunc{handle: func(int) consumer.Verdict {
			for end := time.Now().Add(4 * lease); time.Now().Before(end); time.Sleep(lease / 10) {
				c, err := other.Claim(ctx, lanes.ClaimRequest{Queues: []string{unordered}, Lease: lease, Max: 1})
				require.NoError(t, err)
				stolen.Add(int32(len(c.Jobs)))
			}
			ackErr = s.Ack(ctx, jobs[0].Lease)
			return consumer.Done
		}, rest: func(int, consumer.Why) { t.Error("nothing handed back") }})
	require.Equal(t, 1, started)
	require.Zero(t, stolen.Load(), "no other claimer got the job while its handler ran")
	require.NoError(t, ackErr, "the lease still held at the end")
	st := stats(t, s, unordered)
	require.Zero(t, st.Pending+st.InFlight)
}

// A settle that fails (the server pauses writes longer than a try) is
// retried with a fresh context until it lands; one that cannot land before
// the settler's deadline gives up with ErrSettleDeadline.
func TestSettleIsRetriedUntilItLands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := valkeytest.Start(t, valkeytest.Options{})
	s := newStore(t, srv)
	admin := srv.Client(t)
	enqueue(t, s, ordered, "lane", 2)
	jobs := claimAll(t, s, ordered, 30*time.Second, 2)
	pause := func(d time.Duration) {
		require.NoError(t, admin.Do(ctx, admin.B().ClientPause().Timeout(d.Milliseconds()).Write().Build()).Error())
	}
	settler := consumer.Settler{Try: 100 * time.Millisecond, For: 5 * time.Second, Backoff: consumer.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond}}
	for _, tc := range []struct {
		name    string
		pause   time.Duration
		For     time.Duration
		job     int
		wantErr error
	}{
		{name: "lands after the pause", pause: 700 * time.Millisecond, For: 5 * time.Second, job: 0},
		// The pause outlasts the deadline by a minute: the settle gives up
		// while writes are still refused (checked below with a minute's
		// margin, not against the deadline's 500 ms).
		{name: "gives up at its deadline", pause: time.Minute, For: 500 * time.Millisecond, job: 1, wantErr: consumer.ErrSettleDeadline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := settler
			st.For = tc.For
			var tries atomic.Int32
			pause(tc.pause)
			t0 := time.Now()
			err := st.Settle(ctx, "ack", func(ctx context.Context) error {
				tries.Add(1)
				return s.Ack(ctx, jobs[tc.job].Lease)
			})
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Less(t, time.Since(t0), tc.pause/2, "given up before the pause ended")
				require.NoError(t, admin.Do(ctx, admin.B().ClientUnpause().Build()).Error())
				return
			}
			require.NoError(t, err)
			require.Greater(t, tries.Load(), int32(1), "retried")
			require.GreaterOrEqual(t, time.Since(t0), tc.pause-50*time.Millisecond, "landed once writes were accepted")
		})
	}
	require.Equal(t, 1, stats(t, s, ordered).InFlight, "the first job acked, the second not")
}

// A lease the keeper finds lost (another claimer holds the job now:
// ErrStaleLease) is never started: it and the rest of the batch are handed
// back (StopLease), and a settle of a lost lease stops at once.
func TestALostLeaseStopsTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, nil)
	other := sibling(t, s)
	const lease = 300 * time.Millisecond
	enqueue(t, s, ordered, "lost", 3)
	jobs := claimAll(t, s, ordered, lease, 3)
	// The leases lapse and another claimer takes the jobs over.
	var c lanes.Claimed
	require.Eventually(t, func() bool {
		var err error
		c, err = other.Claim(ctx, lanes.ClaimRequest{Queues: []string{ordered}, Lease: time.Minute, Max: 16})
		return err == nil && len(c.Jobs) > 0
	}, 5*time.Second, 50*time.Millisecond)
	require.Len(t, c.Jobs, 3)
	var handled []int
	restFrom, restWhy := -1, consumer.Why(-1)
	// Claimed now for 3 s as far as the batch knows: only the keeper's
	// first Extend (at 1 s) can tell.
	const length = 3 * time.Second
	started := consumer.RunBatch(ctx, consumer.Batch{Leases: leasesOf(jobs), Claimed: time.Now(), Length: length, Extender: s},
		jobsFunc{handle: func(i int) consumer.Verdict {
			handled = append(handled, i)
			time.Sleep(length/3 + 300*time.Millisecond) // the keeper extends, and finds the leases lost
			return consumer.Done
		}, rest: func(from int, why consumer.Why) { restFrom, restWhy = from, why }})
	require.Equal(t, 1, started)
	require.Equal(t, []int{0}, handled, "no job started after the keeper found its lease lost")
	require.Equal(t, 1, restFrom)
	require.Equal(t, consumer.StopLease, restWhy)

	var tries atomic.Int32
	err := consumer.Settler{Try: time.Second, For: time.Minute, Backoff: consumer.Backoff{Base: time.Millisecond, Max: time.Millisecond}}.
		Settle(ctx, "ack", func(ctx context.Context) error { tries.Add(1); return s.Ack(ctx, jobs[1].Lease) })
	require.ErrorIs(t, err, lanes.ErrStaleLease)
	require.Equal(t, int32(1), tries.Load(), "a lost lease is not retried")
	for _, j := range c.Jobs {
		require.NoError(t, other.Ack(ctx, j.Lease), "the new holder's leases are untouched")
	}
}

// source is a test Source: claims from one queue, handles each batch with
// handle, waits poll between empty claims.
type source struct {
	s      *lanes.Store
	q      string
	lease  time.Duration
	handle func(ctx context.Context, jobs []lanes.Job) bool
}

func (src *source) Claim(ctx context.Context) ([]lanes.Job, error) {
	for ctx.Err() == nil {
		c, err := src.s.Claim(ctx, lanes.ClaimRequest{Queues: []string{src.q}, Lease: src.lease, Max: 16})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return nil, err
		}
		if len(c.Jobs) > 0 {
			return c.Jobs, nil
		}
		_ = consumer.Sleep(ctx, 10*time.Millisecond)
	}
	return nil, consumer.ErrStopped
}

func (src *source) Handle(ctx context.Context, jobs []lanes.Job) bool { return src.handle(ctx, jobs) }

// Stopping the runner while a batch runs drains: the job in progress
// finishes and is acked, the jobs not started are released (back on their
// lane, no attempt used), and Run returns with no goroutine left behind.
func TestStopDrainsReleasingUnstartedJobs(t *testing.T) {
	s := newStore(t, nil)
	const lease = 5 * time.Second
	enqueue(t, s, ordered, "drain", 3)
	// The store's connections are up before the goroutines are counted.
	require.Equal(t, 3, stats(t, s, ordered).Pending)
	// The client's connections (goroutines started as they are needed) are
	// the store's, not the runner's.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valkey-io/valkey-go.(*pipe)._background"),
		goleak.IgnoreAnyFunction("github.com/valkey-io/valkey-go.(*pipe)._backgroundWrite"),
		goleak.IgnoreAnyFunction("github.com/valkey-io/valkey-go.(*pipe)._backgroundRead"))

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var handled atomic.Int32
	for n, async := range []bool{false, true} {
		ctx, stop := context.WithCancel(ctx)
		handled.Store(0)
		consumer.Run(ctx, consumer.Config{Loops: 2, Async: async}, func(int) consumer.Source[[]lanes.Job] {
			return &source{s: s, q: ordered, lease: lease, handle: func(rctx context.Context, jobs []lanes.Job) bool {
				consumer.RunBatch(rctx, consumer.Batch{Leases: leasesOf(jobs), Claimed: time.Now(), Length: lease, Extender: s},
					jobsFunc{handle: func(i int) consumer.Verdict {
						handled.Add(1)
						stop() // the runner stops while job i is handled
						time.Sleep(50 * time.Millisecond)
						require.NoError(t, s.Ack(context.WithoutCancel(rctx), jobs[i].Lease))
						return consumer.Done
					}, rest: func(from int, why consumer.Why) {
						require.Equal(t, consumer.StopRunner, why)
						for _, j := range jobs[from:] {
							require.NoError(t, s.Release(context.WithoutCancel(rctx), j.Lease))
						}
					}})
				return false
			}}
		})
		require.Equal(t, int32(1), handled.Load(), "async %v: one job started", async)
		st := stats(t, s, ordered)
		require.Zero(t, st.InFlight, "async %v: every lease settled by the time Run returned", async)
		require.Equal(t, 2-n, st.Pending, "async %v: the jobs not started are back on their lane", async)
	}
}

// A failed claim backs its loop off (cancellably: Run returns at once when
// stopped during the wait).
func TestFailedClaimBacksOffAndStopsPromptly(t *testing.T) {
	t.Parallel()
	var claims atomic.Int32
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		consumer.Run(ctx, consumer.Config{Backoff: consumer.Backoff{Base: time.Hour, Max: time.Hour}}, func(int) consumer.Source[int] {
			return failing{claims: &claims}
		})
	}()
	require.Eventually(t, func() bool { return claims.Load() == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, int32(1), claims.Load(), "backing off, no second claim")
	stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when stopped during a back-off")
	}
}

type failing struct{ claims *atomic.Int32 }

func (f failing) Claim(ctx context.Context) (int, error) {
	if ctx.Err() != nil {
		return 0, consumer.ErrStopped
	}
	f.claims.Add(1)
	return 0, errors.New("store down")
}

func (failing) Handle(context.Context, int) bool { return false }

func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		b       consumer.Backoff
		attempt int
		lo, hi  time.Duration // the delay is in [lo, hi]
	}{
		{"first", consumer.Backoff{Base: time.Second, Max: time.Minute}, 0, time.Second, time.Second},
		{"doubled", consumer.Backoff{Base: time.Second, Max: time.Minute}, 3, 8 * time.Second, 8 * time.Second},
		{"capped", consumer.Backoff{Base: time.Second, Max: 5 * time.Second}, 10, 5 * time.Second, 5 * time.Second},
		{"±20%", consumer.Backoff{Base: time.Second, Max: time.Minute, Jitter: 0.2}, 1, 1600 * time.Millisecond, 2400 * time.Millisecond},
		{"full jitter", consumer.Backoff{Base: time.Millisecond, Max: 25 * time.Millisecond, Jitter: 1}, 9, 0, 50 * time.Millisecond},
		{"zero", consumer.Backoff{}, 4, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 100 {
				d := tc.b.Delay(tc.attempt)
				require.GreaterOrEqual(t, d, tc.lo)
				require.LessOrEqual(t, d, tc.hi)
			}
		})
	}
	b := consumer.Backoff{Base: 500 * time.Millisecond, Max: 30 * time.Second}
	var got []time.Duration
	for d := time.Duration(0); len(got) < 8; {
		d = b.Next(d)
		got = append(got, d)
	}
	require.Equal(t, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second}, got)
}

func TestSleepEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var err error
	wg.Go(func() { err = consumer.Sleep(ctx, time.Hour) })
	cancel()
	wg.Wait()
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, consumer.Sleep(context.Background(), time.Millisecond))
}
