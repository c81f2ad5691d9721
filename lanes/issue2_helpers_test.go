package lanes_test

// Helpers shared by the issue #2 suite (fairness, lease, keyspace, bad input,
// model, script flush and benchmark files). They talk to the real server the
// store's client is connected to and read keys directly, per the layout in
// keys.go, to check invariants the public API does not expose.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// qkeys names the keys of one queue of a store (see keys.go).
type qkeys struct{ tag, q string }

func keysOf(s *lanes.Store, q string) qkeys { return qkeys{tag: s.Tag(), q: q} }

func (k qkeys) key(name string) string    { return "{" + k.tag + "}:q:" + k.q + ":" + name }
func (k qkeys) lane(g string) string      { return k.key("lane:" + g) }
func (k qkeys) job(id lanes.JobID) string { return k.key("job:" + string(id)) }
func (k qkeys) shared(name string) string { return "{" + k.tag + "}:s:" + name }
func tagPattern(s *lanes.Store) string    { return "{" + s.Tag() + "}*" }
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
	return rstrs(t, s, "LRANGE", keysOf(s, q).key("ring"), "0", "-1")
}

// inflight is HGET inflight g (0 when the field is absent).
func inflight(t testing.TB, s *lanes.Store, q, g string) int {
	t.Helper()
	return rint(t, s, "HGET", keysOf(s, q).key("inflight"), g)
}

// laneIDs is the lane's pending ids in order.
func laneIDs(t testing.TB, s *lanes.Store, q, g string) []string {
	t.Helper()
	return rstrs(t, s, "ZRANGE", keysOf(s, q).lane(g), "0", "-1")
}

// leaseScore is the lease deadline (ms, server clock) of id, or -1.
func leaseScore(t testing.TB, s *lanes.Store, q string, id lanes.JobID) int64 {
	t.Helper()
	r := rdo(t, s, "ZSCORE", keysOf(s, q).key("leases"), string(id))
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
	ks, err := valkeytest.Keys(context.Background(), s.Client(), tagPattern(s))
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

// enqueueN puts n jobs on lane g (one EnqueueBatch) and returns their ids in
// mint order.
func enqueueN(t testing.TB, s *lanes.Store, m *lanes.Minter, q, g string, n int) []lanes.JobID {
	t.Helper()
	items := make([]lanes.Item, n)
	ids := make([]lanes.JobID, n)
	for i := range items {
		ids[i] = m.New()
		items[i] = lanes.Item{Group: g, ID: ids[i], Payload: []byte(fmt.Sprintf("%s#%d", g, i))}
	}
	r, err := s.EnqueueBatch(context.Background(), q, items)
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
		rint(t, s, "ZADD", keysOf(s, q).key("leases"), "XX", "1", string(id))
	}
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
