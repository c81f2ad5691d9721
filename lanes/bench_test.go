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
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

var benchLaneCounts = []int{10, 10_000, 100_000}

type benchEnv struct {
	c   valkey.Client
	run int
}

func newBenchEnv(b *testing.B) *benchEnv {
	srv := valkeytest.Start(b, valkeytest.Options{})
	return &benchEnv{c: srv.Client(b)}
}

// store flushes the server and returns a store on a fresh tag.
func (e *benchEnv) store(b *testing.B, opts ...lanes.Option) *lanes.Store {
	b.Helper()
	e.run++
	require.NoError(b, e.c.Do(context.Background(), e.c.B().Flushall().Build()).Error())
	s, err := lanes.New(e.c, append([]lanes.Option{lanes.WithTag("bench" + strconv.Itoa(e.run))}, opts...)...)
	require.NoError(b, err)
	return s
}

// fill puts depth jobs on each of n lanes "l<i>", interleaved so every lane
// is non-empty from the first chunk on; EnqueueBatch pipelines 500 jobs per
// script call.
func fill(b *testing.B, s *lanes.Store, m *lanes.Minter, n, depth int) {
	b.Helper()
	const batch = 50_000
	items := make([]lanes.Item, 0, batch)
	flush := func() {
		r, err := s.EnqueueBatch(context.Background(), "q", items)
		require.NoError(b, err)
		require.Equal(b, len(items), r.Added)
		items = items[:0]
	}
	payload := []byte(`{"chat":-1001234567890,"text":"hello"}`)
	for d := 0; d < depth; d++ {
		for i := 0; i < n; i++ {
			items = append(items, lanes.Item{Group: "l" + strconv.Itoa(i), ID: m.New(), Payload: payload})
			if len(items) == batch {
				flush()
			}
		}
	}
	if len(items) > 0 {
		flush()
	}
}

// setWeights sets weight w on lanes l0..l<n-1> with concurrent calls (the
// client pipelines them).
func setWeights(b *testing.B, s *lanes.Store, n, w int) {
	b.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	var failed atomic.Value
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := s.Inspector().SetWeight(context.Background(), "q", "l"+strconv.Itoa(i), w); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// srvTimer reports the server's own execution time per script call
// (srv-us/call: EVALSHA and EVAL usec/calls from INFO commandstats, reset
// after setup; network and client excluded) when BENCH_SRV=1, and with
// BENCH_SRV_CMDS=1 also the commands the scripts ran per call.
type srvTimer struct {
	on bool
	c  valkey.Client
}

func newSrvTimer(b *testing.B, c valkey.Client, _ int) srvTimer {
	t := srvTimer{on: os.Getenv("BENCH_SRV") == "1", c: c}
	if t.on {
		require.NoError(b, c.Do(context.Background(), c.B().ConfigResetstat().Build()).Error())
	}
	return t
}

func (t srvTimer) report(b *testing.B) {
	if !t.on {
		return
	}
	info, err := t.c.Do(context.Background(), t.c.B().Info().Section("commandstats").Build()).ToString()
	require.NoError(b, err)
	var scriptCalls, scriptUsec float64
	type stat struct {
		name        string
		calls, usec float64
	}
	var cmds []stat
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		var st stat
		st.name = name
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				st.calls = f
			case "usec":
				st.usec = f
			}
		}
		switch name {
		case "evalsha", "eval":
			scriptCalls += st.calls
			scriptUsec += st.usec
		case "info", "config|resetstat", "flushall":
		default:
			cmds = append(cmds, st)
		}
	}
	if scriptCalls > 0 {
		b.ReportMetric(scriptUsec/scriptCalls, "srv-us/call")
		if os.Getenv("BENCH_SRV_CMDS") == "1" {
			sort.Slice(cmds, func(i, j int) bool { return cmds[i].usec > cmds[j].usec })
			var parts []string
			for _, c := range cmds {
				parts = append(parts, fmt.Sprintf("%s %.1f/call %.2fus", c.name, c.calls/scriptCalls, c.usec/scriptCalls))
			}
			b.Logf("per script call: %s", strings.Join(parts, "; "))
		}
	}
}

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
				if _, err := s.Enqueue(ctx, "q", "l"+strconv.Itoa(i%n), ids[i], payload); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			st.report(b)
		})
	}
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

// BenchmarkClaim: claims only (Max 1, weight 1), no acks in the timed
// loop, to isolate the claim script's cost at 10, 10,000 and 100,000 lanes
// (with BENCH_SRV=1, srv-us/call is then the claim script alone).
func BenchmarkClaim(b *testing.B) {
	e := newBenchEnv(b)
	for _, n := range benchLaneCounts {
		b.Run(fmt.Sprintf("lanes=%d", n), func(b *testing.B) {
			s := e.store(b)
			fill(b, s, lanes.NewMinter(), n, (b.N+n-1)/n+1)
			ctx := context.Background()
			req := lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1}
			st := newSrvTimer(b, e.c, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c, err := s.Claim(ctx, req)
				if err != nil || len(c.Jobs) != 1 {
					b.Fatalf("claim %d: %v %d", i, err, len(c.Jobs))
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
			if _, err := s.Enqueue(ctx, "q", "l"+strconv.Itoa(i%10), m.New(), payload); err != nil {
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
				if _, err := s.Enqueue(ctx, "q", "l"+strconv.Itoa(int(i%10)), m.New(), payload); err != nil {
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
