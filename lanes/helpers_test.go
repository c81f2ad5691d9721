package lanes_test

// The helper kit of the lanes tests and benchmarks: stores on the shared
// throwaway server (valkeytest), raw commands on the store's server, keys
// named by the store's keyspace (Store.Keys in export_test.go, the layout
// of keys.go) to check invariants the public API does not expose, claim and
// enqueue shorthands, a claim loop run as a worker runs one, and the
// cluster-slot check.

import (
	"context"
	"fmt"
	"os"
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

func TestMain(m *testing.M) { valkeytest.Main(m) }

// newStore is a store on its own client of the shared server, with a tag of
// its own.
func newStore(tb testing.TB, opts ...lanes.Option) *lanes.Store {
	tb.Helper()
	c := valkeytest.Shared(tb).Client(tb)
	s, err := lanes.New(c, append([]lanes.Option{lanes.WithTag(valkeytest.Namespace(tb))}, opts...)...)
	require.NoError(tb, err)
	return s
}

// clusterClient starts a dedicated single-node Valkey Cluster (all 16384
// slots on one node) and returns a cluster client for it. CLUSTER KEYSLOT
// needs cluster mode (a non-cluster server answers "cluster support
// disabled"), and the cluster client refuses to build a command whose keys
// span slots, so every multi-key script call is checked as it is sent.
// (Valkey 8.0, like Redis 7.0, lets a script without a shebang touch
// undeclared keys of another slot the node owns, so the server alone would
// not catch a stray key: hence the KEYSLOT check of every key afterwards.)
func clusterClient(t *testing.T) valkey.Client {
	t.Helper()
	return valkeytest.StartCluster(t, 1).Client(t)
}

// slotOf is CLUSTER KEYSLOT key (c must be a cluster node's client).
func slotOf(t *testing.T, c valkey.Client, key string) int64 {
	t.Helper()
	v, err := c.Do(context.Background(), c.B().Arbitrary("CLUSTER", "KEYSLOT").Args(key).Build()).AsInt64()
	require.NoError(t, err)
	return v
}

// sibling is another process's view of s: a new client (its own
// connections) and a Store with the same tag and the given options.
func sibling(tb testing.TB, s *lanes.Store, opts ...lanes.Option) *lanes.Store {
	tb.Helper()
	c := valkeytest.Shared(tb).Client(tb)
	o, err := lanes.New(c, append([]lanes.Option{lanes.WithTag(s.Tag())}, opts...)...)
	require.NoError(tb, err)
	return o
}

// serverNowMS is the server clock in ms, floored as the scripts floor it.
func serverNowMS(tb testing.TB, s *lanes.Store) int64 {
	tb.Helper()
	now, err := s.ServerTime(context.Background())
	require.NoError(tb, err)
	return now.UnixMilli()
}

// parkedScore is lane g's score in the queue's parked set: "" when not
// parked, "inf" when parked until resumed, else the due time in ms.
func parkedScore(tb testing.TB, s *lanes.Store, q, g string) string {
	tb.Helper()
	r := rdo(tb, s, "ZSCORE", s.Keys().Queue(q, "parked"), g)
	if valkey.IsValkeyNil(r.Error()) {
		return ""
	}
	v, err := r.ToString()
	require.NoError(tb, err)
	return v
}

// claimedAt is the server time (ms) at which j was claimed: its lease
// deadline minus the lease length.
func claimedAt(j lanes.Job, lease time.Duration) int64 {
	return j.Deadline.UnixMilli() - lease.Milliseconds()
}

// maxInWindow is the most of the times ts (ms) inside any window of win ms
// (times t with start <= t < start+win), the measure a sliding-window limit
// of win ms must bound.
func maxInWindow(ts []int64, win int64) int {
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

// fillLanes enqueues per jobs on each of n lanes named prefix0..prefix(n-1),
// interleaved, in one Enqueue.
func fillLanes(tb testing.TB, s *lanes.Store, m *lanes.Minter, q, prefix string, n, per int) {
	tb.Helper()
	items := make([]lanes.Item, 0, n*per)
	for j := 0; j < per; j++ {
		for i := 0; i < n; i++ {
			items = append(items, lanes.Item{Group: fmt.Sprintf("%s%d", prefix, i), ID: m.New(), Payload: []byte("x")})
		}
	}
	r, err := s.Enqueue(context.Background(), q, items)
	require.NoError(tb, err)
	require.Equal(tb, n*per, r.Added)
}

// claimLoop is a claimer as a worker runs one: it claims, settles every job
// with its settle func (Ack by default), then hands it to Jobs; when nothing
// is claimable it waits on its Waiter for RetryIn (-1: for a wake-up only).
// Claims counts Claim calls.
type claimLoop struct {
	Jobs    chan lanes.Job
	Claims  atomic.Int64
	blocked atomic.Bool // waiting with RetryIn -1
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func startClaimLoop(tb testing.TB, s *lanes.Store, req lanes.ClaimRequest, settle func(lanes.Job) error) *claimLoop {
	tb.Helper()
	if settle == nil {
		settle = func(j lanes.Job) error { return s.Ack(context.Background(), j.Lease) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &claimLoop{Jobs: make(chan lanes.Job, 1000), cancel: cancel}
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

// Stop ends the loop and waits for its goroutine.
func (w *claimLoop) Stop() { w.cancel(); w.wg.Wait() }

// Next is the loop's next job, or fails the test after within.
func (w *claimLoop) Next(tb testing.TB, within time.Duration) lanes.Job {
	tb.Helper()
	select {
	case j := <-w.Jobs:
		return j
	case <-time.After(within):
		tb.Fatalf("worker got no job within %v (%d claims)", within, w.Claims.Load())
		return lanes.Job{}
	}
}

// WaitIdle waits until the loop found nothing to do and is blocked waiting
// for a wake-up (RetryIn -1).
func (w *claimLoop) WaitIdle(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !w.blocked.Load() {
		require.True(tb, time.Now().Before(deadline), "worker never went idle")
		time.Sleep(time.Millisecond)
	}
}

func rawCmd(c valkey.Client, args ...string) valkey.Completed {
	return c.B().Arbitrary(args[0]).Args(args[1:]...).Build()
}

// rdo runs a raw command on the store's server.
func rdo(t testing.TB, s *lanes.Store, args ...string) valkey.ValkeyResult {
	t.Helper()
	c := s.Client()
	return c.Do(context.Background(), rawCmd(c, args...))
}

func rstrs(t testing.TB, s *lanes.Store, args ...string) []string {
	t.Helper()
	v, err := rdo(t, s, args...).AsStrSlice()
	require.NoError(t, err, "%v", args)
	return v
}

// rint runs a command answering an integer or nil (read as 0).
func rint(t testing.TB, s *lanes.Store, args ...string) int {
	t.Helper()
	r := rdo(t, s, args...)
	if valkey.IsValkeyNil(r.Error()) {
		return 0
	}
	v, err := r.AsInt64()
	require.NoError(t, err, "%v", args)
	return int(v)
}

// ring is the queue's ring, head first.
func ring(t testing.TB, s *lanes.Store, q string) []string {
	t.Helper()
	return rstrs(t, s, "LRANGE", s.Keys().Ring(q), "0", "-1")
}

// inflight is HGET inflight g (0 when the field is absent).
func inflight(t testing.TB, s *lanes.Store, q, g string) int {
	t.Helper()
	return rint(t, s, "HGET", s.Keys().Queue(q, "inflight"), g)
}

// laneIDs is the lane's pending ids in order.
func laneIDs(t testing.TB, s *lanes.Store, q, g string) []string {
	t.Helper()
	return rstrs(t, s, "ZRANGE", s.Keys().Lane(q, g), "0", "-1")
}

// leaseScore is the lease deadline (ms, server clock) of id, or -1.
func leaseScore(t testing.TB, s *lanes.Store, q string, id lanes.JobID) int64 {
	t.Helper()
	r := rdo(t, s, "ZSCORE", s.Keys().Queue(q, "leases"), string(id))
	if valkey.IsValkeyNil(r.Error()) {
		return -1
	}
	f, err := r.AsFloat64()
	require.NoError(t, err)
	return int64(f)
}

// tagKeys lists every key of the store's tag, sorted.
func tagKeys(t testing.TB, s *lanes.Store) []string {
	t.Helper()
	ks, err := valkeytest.Keys(context.Background(), s.Client(), s.Keys().Pattern())
	require.NoError(t, err)
	sort.Strings(ks)
	return ks
}

// dumpKeys maps every key of the store's tag to its DUMP serialisation and
// TTL state, so two snapshots compare equal only if nothing was written.
func dumpKeys(t testing.TB, s *lanes.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range tagKeys(t, s) {
		v, err := rdo(t, s, "DUMP", k).ToString()
		require.NoError(t, err, k)
		ttl := rint(t, s, "PTTL", k)
		if ttl >= 0 {
			ttl = 1 // present; its exact value moves with time
		}
		out[k] = v + "|ttl=" + strconv.Itoa(ttl)
	}
	return out
}

func claim(t testing.TB, s *lanes.Store, max int, lease time.Duration, queues ...string) lanes.Claimed {
	t.Helper()
	c, err := s.Claim(context.Background(), lanes.ClaimRequest{Queues: queues, Lease: lease, Max: max})
	require.NoError(t, err)
	return c
}

// claimOne claims exactly one job (Max 1) and fails the test if none came.
func claimOne(t testing.TB, s *lanes.Store, lease time.Duration, q string) lanes.Job {
	t.Helper()
	c := claim(t, s, 1, lease, q)
	require.Len(t, c.Jobs, 1, "expected one job, RetryIn %v", c.RetryIn)
	return c.Jobs[0]
}

// enqueueN puts n jobs on lane g (one Enqueue) and returns their ids in
// mint order.
func enqueueN(t testing.TB, s *lanes.Store, m *lanes.Minter, q, g string, n int) []lanes.JobID {
	t.Helper()
	items := make([]lanes.Item, n)
	ids := make([]lanes.JobID, n)
	for i := range items {
		ids[i] = m.New()
		items[i] = lanes.Item{Group: g, ID: ids[i], Payload: []byte(fmt.Sprintf("%s#%d", g, i))}
	}
	r, err := s.Enqueue(context.Background(), q, items)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: n}, r)
	return ids
}

// waitServerPast waits until the server clock is past t0 (leases are judged
// by the server's TIME, so the wait is on that clock, in short steps).
func waitServerPast(t testing.TB, s *lanes.Store, t0 time.Time) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		now, err := s.ServerTime(context.Background())
		require.NoError(t, err)
		if now.After(t0) {
			return
		}
		require.True(t, time.Now().Before(deadline), "server clock did not pass %v", t0)
		time.Sleep(min(t0.Sub(now)+time.Millisecond, 20*time.Millisecond))
	}
}

// expireNow moves the leases of ids to the past on the server (ZADD XX with
// score 1, i.e. 1 ms after the epoch): the same state a lease reaches when
// its deadline passes on the server clock, without waiting. The next Claim
// of the queue reclaims them.
func expireNow(t testing.TB, s *lanes.Store, q string, ids ...lanes.JobID) {
	t.Helper()
	for _, id := range ids {
		require.GreaterOrEqual(t, leaseScore(t, s, q, id), int64(0), "no lease on %s", id)
		rescore(t, s, q, "leases", string(id), 1)
	}
}

// rescore moves member of queue q's schedule set ("leases", "delayed" or
// "parked") to score ms (ZADD XX), and the queue's due time with it when
// that is earlier: the state the scripts reach when an entry falls due at
// ms on the server clock, without waiting.
func rescore(t testing.TB, s *lanes.Store, q, set, member string, ms int64) {
	t.Helper()
	score := strconv.FormatInt(ms, 10)
	require.Equal(t, 0, rint(t, s, "ZADD", s.Keys().Queue(q, set), "XX", score, member))
	due := s.Keys().Queue(q, "due")
	cur, err := rdo(t, s, "GET", due).AsInt64()
	if valkey.IsValkeyNil(err) || (err == nil && cur > ms) {
		require.NoError(t, rdo(t, s, "SET", due, score).Error())
		return
	}
	require.NoError(t, err)
}

func jobIDs(jobs []lanes.Job) []lanes.JobID {
	out := make([]lanes.JobID, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func strIDs(ids []lanes.JobID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

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
// is non-empty from the first chunk on; Enqueue pipelines 500 jobs per
// script call.
func fill(b *testing.B, s *lanes.Store, m *lanes.Minter, n, depth int) {
	b.Helper()
	const batch = 50_000
	items := make([]lanes.Item, 0, batch)
	flush := func() {
		r, err := s.Enqueue(context.Background(), "q", items)
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
				if err := s.Inspector().SetWeight(context.Background(), "l"+strconv.Itoa(i), w); err != nil {
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
	var scriptCalls, scriptUsec float64
	type stat struct {
		name        string
		calls, usec float64
	}
	var cmds []stat
	for name, st := range valkeytest.CommandStats(context.Background(), b, t.c) {
		switch name {
		case "evalsha", "eval":
			scriptCalls += st.Calls
			scriptUsec += st.Usec
		case "info", "config|resetstat", "flushall":
		default:
			cmds = append(cmds, stat{name: name, calls: st.Calls, usec: st.Usec})
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

// serverCost reads INFO commandstats on every node: the server time (µs)
// spent in scripts so far (EVALSHA and EVAL) and the number of commands the
// scripts ran (every other command). Per op they give the server's own cost,
// free of round trips and of load on the machine; the command count does
// not depend on load at all, so it shows what a claim's cost scales with.
// Only meaningful when nothing else runs on the server (-run '^$').
func serverCost(tb testing.TB, s *lanes.Store) (usec, cmds int64) {
	tb.Helper()
	for _, n := range s.Client().Nodes() {
		for name, st := range valkeytest.CommandStats(context.Background(), tb, n) {
			switch name {
			case "evalsha", "eval":
				usec += int64(st.Usec)
			case "info":
			default:
				cmds += int64(st.Calls)
			}
		}
	}
	return usec, cmds
}

// reportServerCost reports the server cost per op since (usec0, cmds0).
func reportServerCost(b *testing.B, s *lanes.Store, usec0, cmds0 int64) {
	usec, cmds := serverCost(b, s)
	b.ReportMetric(float64(usec-usec0)/float64(b.N), "server-µs/op")
	b.ReportMetric(float64(cmds-cmds0)/float64(b.N), "cmds/op")
}

// parkMany parks lanes prefix0..prefix(n-1) for d, 64 calls at a time (the
// client pipelines concurrent calls).
func parkMany(tb testing.TB, s *lanes.Store, q, prefix string, n int, d time.Duration) {
	tb.Helper()
	var wg sync.WaitGroup
	var failed atomic.Value
	next := atomic.Int64{}
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if _, err := s.Inspector().Park(context.Background(), q, fmt.Sprintf("%s%d", prefix, i), d); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatal(err)
	}
}

// reportLateness reports the p50 and p99 of late (ms) and claims per trial.
func reportLateness(b *testing.B, late []float64, claimsPerTrial float64) {
	sort.Float64s(late)
	q := func(p float64) float64 { return late[min(len(late)-1, int(p*float64(len(late))))] }
	b.ReportMetric(q(0.50), "p50-late-ms")
	b.ReportMetric(q(0.99), "p99-late-ms")
	b.ReportMetric(late[0], "min-late-ms")
	b.ReportMetric(claimsPerTrial, "claims/trial")
}

// nilIfEmpty is s, or nil when s is empty (so an empty reply compares equal
// to a nil want).
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// containsID reports whether ids holds id.
func containsID(ids []lanes.JobID, id lanes.JobID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
