package lanes_test

// Benchmarks, each on a dedicated throwaway server (valkeytest.Start), the
// database flushed before every run, setup kept out of the timer:
//
//	go test -run '^$' -bench . -benchtime 2000x ./lanes/
//
// jobs/s is jobs handed through the measured operation per wall second.
// With BENCH_SRV=1 the server's own time per script call is also reported
// (srv-us/call, from INFO commandstats; see srvTimer).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// BenchmarkEnqueue: one job per call onto lanes that exist already (each
// lane has one job), round-robin over 10, 10,000 and 100,000 lanes.
func BenchmarkEnqueue(b *testing.B) {
	e := newBenchEnv(b)
	for _, n := range benchLaneCounts {
		b.Run(fmt.Sprintf("lanes=%d", n), func(b *testing.B) {
			s := e.store(b)
			m := lanes.NewMinter()
			fill(b, s, m, n, 1)
			ids := make([]lanes.JobID, b.N)
			for i := range ids {
				ids[i] = m.New()
			}
			payload := []byte(`{"chat":-1001234567890,"text":"hello"}`)
			ctx := context.Background()
			st := newSrvTimer(b, e.c, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "l" + strconv.Itoa(i%n), ID: ids[i], Payload: payload}}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			st.report(b)
		})
	}
}

// BenchmarkEnqueueFanOut: a fan-out, one job onto each of b.N new
// lanes, 5,000 jobs per Enqueue (ten 500-job script calls in one
// round trip). Besides jobs/s it reports the server's time in the script
// and the commands the script ran, per job (cmds/op does not move with the
// machine's load).
func BenchmarkEnqueueFanOut(b *testing.B) {
	e := newBenchEnv(b)
	s := e.store(b)
	m := lanes.NewMinter()
	payload := []byte(`{"chat":1000001,"text":"🍓🍋🍇 The weekly codemojex tournament starts in one hour!","bc":"bc_01ARZ3NDEKTSV4RRFFQ69G5FAV"}`)
	items := make([]lanes.Item, b.N)
	for i := range items {
		items[i] = lanes.Item{Group: strconv.Itoa(1_000_000 + i), ID: m.New(), Payload: payload}
	}
	ctx := context.Background()
	usec0, cmds0 := serverCost(b, s)
	b.ResetTimer()
	for start := 0; start < b.N; start += 5000 {
		r, err := s.Enqueue(ctx, "q", items[start:min(start+5000, b.N)])
		if err != nil {
			b.Fatal(err)
		}
		if r.Added != min(5000, b.N-start) {
			b.Fatalf("added %d of %d", r.Added, min(5000, b.N-start))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	reportServerCost(b, s, usec0, cmds0)
}

// BenchmarkClaimAck: one claim (Max K) and an ack per job handed out, with
// 10, 10,000 and 100,000 non-empty lanes (every lane deep enough to stay in
// the ring for the whole run). K=8 runs with every lane at weight 8.
func BenchmarkClaimAck(b *testing.B) {
	e := newBenchEnv(b)
	for _, k := range []int{1, 8} {
		for _, n := range benchLaneCounts {
			b.Run(fmt.Sprintf("K=%d/lanes=%d", k, n), func(b *testing.B) {
				s := e.store(b)
				m := lanes.NewMinter()
				depth := (b.N+n-1)/n*k + 1 // each lane is visited at most ceil(N/n) times, K jobs a visit
				fill(b, s, m, n, depth)
				if k > 1 {
					setWeights(b, s, n, k)
				}
				ctx := context.Background()
				req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: k}
				st := newSrvTimer(b, e.c, b.N*(k+1))
				jobs := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					c, err := s.Claim(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					if len(c.Jobs) != k {
						b.Fatalf("claim %d: %d jobs, want %d", i, len(c.Jobs), k)
					}
					for _, j := range c.Jobs {
						if err := s.Ack(ctx, j.Lease); err != nil {
							b.Fatal(err)
						}
					}
					jobs += len(c.Jobs)
				}
				b.StopTimer()
				b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
				st.report(b)
			})
		}
	}
}

// BenchmarkClaimAckInOneCall: as BenchmarkClaimAck with K=1, but each
// claim carries the ack of the job the previous claim handed out
// (ClaimRequest.Ack): one script call and one round trip per job instead of
// two. With BENCH_SRV=1, srv-us/call is then the server's time per job.
func BenchmarkClaimAckInOneCall(b *testing.B) {
	benchClaims(b, time.Minute, func(b *testing.B, c lanes.Claimed, req *lanes.ClaimRequest) {
		for _, err := range c.Acked {
			if err != nil {
				b.Fatal(err)
			}
		}
		req.Ack = []lanes.Lease{c.Jobs[0].Lease}
	})
}

// BenchmarkClaim: claims only (Max 1, weight 1), no acks in the timed
// loop, to isolate the claim script's cost at 10, 10,000 and 100,000 lanes
// (with BENCH_SRV=1, srv-us/call is then the claim script alone).
func BenchmarkClaim(b *testing.B) {
	benchClaims(b, time.Hour, nil)
}

// benchClaims times b.N claims of one job each (Max 1) at every lane count
// of benchLaneCounts, calling after (if set) on each claim's answer, which
// may change the next request; it reports jobs/s and, with BENCH_SRV=1, the
// server's time per call.
func benchClaims(b *testing.B, lease time.Duration, after func(*testing.B, lanes.Claimed, *lanes.ClaimRequest)) {
	e := newBenchEnv(b)
	for _, n := range benchLaneCounts {
		b.Run(fmt.Sprintf("lanes=%d", n), func(b *testing.B) {
			s := e.store(b)
			fill(b, s, lanes.NewMinter(), n, (b.N+n-1)/n+1)
			ctx := context.Background()
			req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: lease, Max: 1}
			st := newSrvTimer(b, e.c, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c, err := s.Claim(ctx, req)
				if err != nil || len(c.Jobs) != 1 {
					b.Fatalf("claim %d: %v %d", i, err, len(c.Jobs))
				}
				if after != nil {
					after(b, c, &req)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			st.report(b)
		})
	}
}

// BenchmarkCycle: the full life of a job (enqueue, claim, ack) over 10
// lanes. "serial" is one caller, each call waiting for the previous one;
// "parallel" runs 48 callers sharing one client (the way a worker pool uses
// it; the client pipelines their calls), for comparison with redis-benchmark
// and its 50 clients.
func BenchmarkCycle(b *testing.B) {
	e := newBenchEnv(b)
	payload := []byte(`{"chat":-1001234567890,"text":"hello"}`)
	b.Run("serial", func(b *testing.B) {
		s := e.store(b)
		m := lanes.NewMinter()
		ctx := context.Background()
		req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1}
		st := newSrvTimer(b, e.c, 3*b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "l" + strconv.Itoa(i%10), ID: m.New(), Payload: payload}}); err != nil {
				b.Fatal(err)
			}
			c, err := s.Claim(ctx, req)
			if err != nil || len(c.Jobs) != 1 {
				b.Fatalf("claim: %v %d", err, len(c.Jobs))
			}
			if err := s.Ack(ctx, c.Jobs[0].Lease); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		st.report(b)
	})
	b.Run("parallel", func(b *testing.B) {
		s := e.store(b)
		m := lanes.NewMinter()
		ctx := context.Background()
		req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1}
		st := newSrvTimer(b, e.c, 3*b.N)
		var seq atomic.Int64
		var done atomic.Int64
		b.SetParallelism(max(1, 48/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := seq.Add(1)
				if _, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "l" + strconv.Itoa(int(i%10)), ID: m.New(), Payload: payload}}); err != nil {
					b.Error(err)
					return
				}
				// Another caller may have taken this job: ack whatever
				// comes; jobs/s counts the acked ones.
				c, err := s.Claim(ctx, req)
				if err != nil {
					b.Error(err)
					return
				}
				for _, j := range c.Jobs {
					if err := s.Ack(ctx, j.Lease); err != nil {
						b.Error(err)
						return
					}
					done.Add(1)
				}
			}
		})
		b.StopTimer()
		b.ReportMetric(float64(done.Load())/b.Elapsed().Seconds(), "jobs/s")
		st.report(b)
	})
}

// Delivery-control benchmarks (limits, parks, wake-ups), against a real
// server:
//
//	go test -run '^$' -bench 'WithLimits|WithParkedLanes|Wake' -benchtime 200x ./lanes/
//
// BenchmarkClaimAckWithLimits: one claimer's claim+ack throughput (jobs/s)
// with a global rate and a lane pace set too high to bind (1,000,000/s
// each), against the same with no limits: the ratio is the cost of the
// rate and pace bookkeeping in the claim script.
func BenchmarkClaimAckWithLimits(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []lanes.Option
	}{
		{"unlimited", nil},
		{"limited", []lanes.Option{
			lanes.WithGlobalRate(1_000_000, time.Second),
			lanes.WithLanePace(lanes.Pace{Limit: 1_000_000, Period: time.Second}),
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			s := newStore(b, bc.opts...)
			fillLanes(b, s, lanes.NewMinter(), "q", "chat", 100, b.N/100+1)
			req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1}
			b.ResetTimer()
			start := time.Now()
			us0, cmds0 := serverCost(b, s)
			for i := 0; i < b.N; i++ {
				c, err := s.Claim(ctx, req)
				if err != nil || len(c.Jobs) != 1 {
					b.Fatalf("claim %d: %v, %d jobs, RetryIn %v", i, err, len(c.Jobs), c.RetryIn)
				}
				if err := s.Ack(ctx, c.Jobs[0].Lease); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
			reportServerCost(b, s, us0, cmds0)
		})
	}
}

// BenchmarkClaimWithParkedLanes: the cost (ns/op) of claiming and acking one
// job of the one ready lane while 10 or 100,000 other lanes, each with a
// pending job, are parked (Park for an hour, before their jobs arrived, so
// they are not in the ring): the same, since a claim never scans parked
// lanes (the due-time index is O(log n)).
func BenchmarkClaimWithParkedLanes(b *testing.B) {
	for _, parked := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("parked=%d", parked), func(b *testing.B) {
			ctx := context.Background()
			s := newStore(b)
			parkMany(b, s, "q", "p", parked, time.Hour)
			fillLanes(b, s, lanes.NewMinter(), "q", "p", parked, 1)
			fillLanes(b, s, lanes.NewMinter(), "q", "ready", 1, b.N+1) // never empty
			req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1}
			st, err := s.Inspector().Stats(ctx, "q", 0)
			require.NoError(b, err)
			require.Equal(b, parked, st.Parked)
			require.Equal(b, 1, st.Ring)
			b.ResetTimer()
			us0, cmds0 := serverCost(b, s)
			for i := 0; i < b.N; i++ {
				c, err := s.Claim(ctx, req)
				if err != nil || len(c.Jobs) != 1 || c.Jobs[0].Group != "ready0" {
					b.Fatalf("claim %d: %v, %v, RetryIn %v", i, err, c.Jobs, c.RetryIn)
				}
				if err := s.Ack(ctx, c.Jobs[0].Lease); err != nil {
					b.Fatal(err)
				}
			}
			reportServerCost(b, s, us0, cmds0)
		})
	}
}

// BenchmarkWakeLatency: a worker blocked on its Waiter
// (Claim said RetryIn -1) and a job enqueued from another connection: the
// time from the start of the Enqueue call to the worker holding the job,
// one op per trial; p50 and p99 are reported (the target is p99 <= 10 ms),
// and the worker's claims per trial (1 = it never polled).
func BenchmarkWakeLatency(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(b)
	other := sibling(b, s)
	waiter, err := s.NewWaiter(ctx)
	require.NoError(b, err)
	var blocked atomic.Bool
	var claims atomic.Int64
	got := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1}
		for ctx.Err() == nil {
			c, err := s.Claim(ctx, req)
			claims.Add(1)
			if err != nil {
				return
			}
			if len(c.Jobs) > 0 {
				got <- time.Now()
				if err := s.Ack(ctx, c.Jobs[0].Lease); err != nil {
					return
				}
				continue
			}
			if c.RetryIn == 0 {
				continue
			}
			blocked.Store(c.RetryIn < 0)
			waiter.Wait(ctx, c.RetryIn)
			blocked.Store(false)
		}
	}()
	m := lanes.NewMinter()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	n0 := claims.Load()
	for i := 0; i < b.N; i++ {
		for !blocked.Load() {
			time.Sleep(50 * time.Microsecond)
		}
		t0 := time.Now()
		if _, err := other.Enqueue(ctx, "q", []lanes.Item{{Group: "chat", ID: m.New()}}); err != nil {
			b.Fatal(err)
		}
		select {
		case t1 := <-got:
			lat = append(lat, t1.Sub(t0))
		case <-time.After(5 * time.Second):
			b.Fatalf("trial %d: the blocked worker did not wake", i)
		}
	}
	b.StopTimer()
	perTrial := float64(claims.Load()-n0) / float64(b.N)
	cancel()
	<-done
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(perTrial, "claims/trial")
}

// The timed wake-ups (the enqueue case is BenchmarkWakeLatency): a worker
// idle on its Waiter, waiting RetryIn, must get its job within 10 ms of the
// time it falls due. Each trial measures the
// lateness on the server clock: the claim's time (its lease deadline minus
// the lease length, ms) minus the due time (ms), so 0 means claimed in the
// ms it fell due. p50 and p99 are reported over b.N trials, and the
// worker's claims per trial (it polls if this grows with the wait).
const wakeLease = time.Minute

// BenchmarkWakeParkDue: a lane parked for 30 ms from another connection
// while the worker idles, with a job enqueued for it: lateness of the claim
// against the park's end.
func BenchmarkWakeParkDue(b *testing.B) {
	ctx := context.Background()
	s := newStore(b)
	other := sibling(b, s)
	w := startClaimLoop(b, s, lanes.ClaimRequest{Queues: []string{"q"}, Lease: wakeLease, Max: 1}, nil)
	m := lanes.NewMinter()
	late := make([]float64, 0, b.N)
	b.ResetTimer()
	n0 := w.Claims.Load()
	for i := 0; i < b.N; i++ {
		w.WaitIdle(b)
		end, err := other.Inspector().Park(ctx, "q", "p", 30*time.Millisecond)
		require.NoError(b, err)
		_, err = other.Enqueue(ctx, "q", []lanes.Item{{Group: "p", ID: m.New()}})
		require.NoError(b, err)
		j := w.Next(b, 5*time.Second)
		late = append(late, float64(claimedAt(j, wakeLease)-end.UnixMilli()))
	}
	b.StopTimer()
	reportLateness(b, late, float64(w.Claims.Load()-n0)/float64(b.N))
}

// BenchmarkWakeRetryDue: on an unordered queue the worker nacks a job's
// first attempt with a 30 ms delay (the job waits in the delayed set):
// lateness of its second claim against the retry's due time (its score in
// the delayed set, read right after the Nack).
func BenchmarkWakeRetryDue(b *testing.B) {
	ctx := context.Background()
	s := newStore(b)
	other := sibling(b, s)
	var due sync.Map // JobID -> retry due time (ms)
	w := startClaimLoop(b, s, lanes.ClaimRequest{Queues: []string{"q"}, Lease: wakeLease, Max: 1}, func(j lanes.Job) error {
		if j.Attempts > 0 {
			return s.Ack(ctx, j.Lease)
		}
		out, err := s.Nack(ctx, j.Lease, 30*time.Millisecond, "retry")
		if err != nil {
			return err
		}
		if out != lanes.Delayed {
			return fmt.Errorf("nack: outcome %q, want %q", out, lanes.Delayed)
		}
		v, err := rdo(b, s, "ZSCORE", s.Keys().Queue("q", "delayed"), string(j.ID)).AsFloat64()
		if err != nil {
			return err
		}
		due.Store(j.ID, int64(v))
		return nil
	})
	m := lanes.NewMinter()
	late := make([]float64, 0, b.N)
	b.ResetTimer()
	n0 := w.Claims.Load()
	for i := 0; i < b.N; i++ {
		w.WaitIdle(b)
		_, err := other.Enqueue(ctx, "q", []lanes.Item{{Group: "r", ID: m.New()}})
		require.NoError(b, err)
		j1 := w.Next(b, 5*time.Second)
		j2 := w.Next(b, 5*time.Second)
		require.Equal(b, j1.ID, j2.ID)
		require.Equal(b, 1, j2.Attempts)
		d, ok := due.Load(j1.ID)
		require.True(b, ok)
		late = append(late, float64(claimedAt(j2, wakeLease)-d.(int64)))
	}
	b.StopTimer()
	reportLateness(b, late, float64(w.Claims.Load()-n0)/float64(b.N))
}

// BenchmarkWakeBudgetRefill: a global rate of 1 per 30 ms and two jobs
// enqueued at once on an idle worker (the send log empty): the first is
// claimed and acked at once, the second only when the first send leaves the
// window. Lateness of the second claim against the first's settle time
// (its score in the send log, read right after the Ack) plus the window.
func BenchmarkWakeBudgetRefill(b *testing.B) {
	const window = 30 * time.Millisecond
	ctx := context.Background()
	s := newStore(b, lanes.WithGlobalRate(1, window))
	other := sibling(b, s, lanes.WithGlobalRate(1, window))
	var settled sync.Map // JobID -> settle time (ms) in the send log
	rateKey := s.Keys().Rate()
	w := startClaimLoop(b, s, lanes.ClaimRequest{Queues: []string{"q"}, Lease: wakeLease, Max: 1}, func(j lanes.Job) error {
		if err := s.Ack(ctx, j.Lease); err != nil {
			return err
		}
		// The newest settled send: this one (the rate lets one in flight).
		v, err := rdo(b, s, "ZREVRANGEBYSCORE", rateKey, "(+inf", "-inf", "WITHSCORES", "LIMIT", "0", "1").AsZScores()
		if err != nil {
			return err
		}
		if len(v) != 1 {
			return fmt.Errorf("send log: %v", v)
		}
		settled.Store(j.ID, int64(v[0].Score))
		return nil
	})
	m := lanes.NewMinter()
	late := make([]float64, 0, b.N)
	b.ResetTimer()
	n0 := w.Claims.Load()
	for i := 0; i < b.N; i++ {
		w.WaitIdle(b)
		time.Sleep(2 * window) // the previous trial's sends leave the window
		fillLanes(b, other, m, "q", "g", 1, 2)
		j1 := w.Next(b, 5*time.Second)
		j2 := w.Next(b, 5*time.Second)
		t, ok := settled.Load(j1.ID)
		require.True(b, ok)
		late = append(late, float64(claimedAt(j2, wakeLease)-t.(int64)-window.Milliseconds()))
	}
	b.StopTimer()
	reportLateness(b, late, float64(w.Claims.Load()-n0)/float64(b.N))
}

// BenchmarkBroadcastCopies: a paid broadcast's copies as the worker moves
// them at a high rate: one-copy lanes (each a chat of its own, paced, on an
// ordered queue with a budget of its own outside the global one, the
// budgets set too high to bind), claimed 9 lanes a call (ClaimRequest.Lanes;
// near the worker's lanesFor at 1,130/s while claimGap was 8 ms, 10; 16
// since it is 16 ms) and acked with a progress tally each,
// either one Ack per copy or one AckAll per claim. Per copy (op): the
// server's CPU time (valkeytest.ServerCPU), its time in scripts and the commands they
// ran (cmds/op does not move with the machine's load).
//
//	go test -run '^$' -bench BroadcastCopies -benchtime 20000x ./lanes/
func BenchmarkBroadcastCopies(b *testing.B) {
	const lanesPerClaim = 9
	for _, batched := range []bool{false, true} {
		b.Run(map[bool]string{false: "Ack", true: "AckAll"}[batched], func(b *testing.B) {
			ctx := context.Background()
			s := newStore(b,
				lanes.WithQueue("paid", lanes.QueueConfig{Ordered: true, Rate: 1_000_000, Window: time.Second, OutsideGlobal: true}),
				lanes.WithGlobalRate(1_000_000, time.Second),
				lanes.WithLanePace(lanes.Pace{Limit: 1, Period: time.Second}))
			n := (b.N + lanesPerClaim - 1) / lanesPerClaim * lanesPerClaim
			fillLanes(b, s, lanes.NewMinter(), "paid", "1", n, 1)
			tag := strings.TrimSuffix(s.Keys().Pattern(), "*") + ":"
			tally := lanes.SettleTally{Key: tag + "progress", Fields: []string{"sent", "paid"}, Untrack: tag + "out", TTL: time.Hour}
			require.NoError(b, rdo(b, s, "HSET", tally.Key, "sent", "0").Error())
			req := lanes.ClaimRequest{Queues: []string{"paid"}, Lease: time.Minute, Max: 16, Lanes: lanesPerClaim}
			acks := make([]lanes.Acking, 0, lanesPerClaim)
			b.ResetTimer()
			us0, cmds0 := serverCost(b, s)
			cpu0 := valkeytest.ServerCPU(b, s.Client())
			for done := 0; done < n; {
				c, err := s.Claim(ctx, req)
				if err != nil || len(c.Jobs) != lanesPerClaim {
					b.Fatalf("claim: %v, %d jobs, RetryIn %v", err, len(c.Jobs), c.RetryIn)
				}
				acks = acks[:0]
				for _, j := range c.Jobs {
					if !batched {
						if err := s.Ack(ctx, j.Lease, lanes.Counting(tally)); err != nil {
							b.Fatal(err)
						}
						continue
					}
					acks = append(acks, lanes.Acking{Lease: j.Lease, Tally: tally})
				}
				if batched {
					errs, err := s.AckAll(ctx, acks)
					if err != nil || errors.Join(errs...) != nil {
						b.Fatal(err, errs)
					}
				}
				done += len(c.Jobs)
			}
			b.StopTimer()
			cpu := valkeytest.ServerCPU(b, s.Client())
			usec, cmds := serverCost(b, s)
			b.ReportMetric((cpu-cpu0)/float64(n), "server-cpu-µs/copy")
			b.ReportMetric(float64(usec-us0)/float64(n), "server-µs/copy")
			b.ReportMetric(float64(cmds-cmds0)/float64(n), "cmds/copy")
		})
	}
}
