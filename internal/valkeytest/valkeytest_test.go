package valkeytest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

func TestSharedServerAnswersAndNamespacesDiffer(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Shared(t)
	c := srv.Client(t)
	ctx := context.Background()
	a, b := valkeytest.Namespace(t), valkeytest.Namespace(t)
	require.NotEqual(t, a, b)
	require.NoError(t, c.Do(ctx, c.B().Set().Key("{"+a+"}:k").Value("1").Build()).Error())
	keys, err := valkeytest.Keys(ctx, c, "{"+a+"}:*")
	require.NoError(t, err)
	require.Equal(t, []string{"{" + a + "}:k"}, keys)
	keys, err = valkeytest.Keys(ctx, c, "{"+b+"}:*")
	require.NoError(t, err)
	require.Empty(t, keys)
}

// TestDedicatedServerRestartKeepsAppendOnlyWrites: a standalone server and
// a cluster with replicas, append-only, restarted: the writes acknowledged
// before are there after, read through a new client.
func TestDedicatedServerRestartKeepsAppendOnlyWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) *valkeytest.Server
	}{
		{"standalone", func(t *testing.T) *valkeytest.Server {
			return valkeytest.Start(t, valkeytest.Options{AppendOnly: true})
		}},
		{"cluster with replicas", func(t *testing.T) *valkeytest.Server {
			return valkeytest.StartClusterWith(t, valkeytest.ClusterOptions{Primaries: 3, Replicas: 1, AppendOnly: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tc.start(t)
			ctx := context.Background()
			c, err := srv.NewClient()
			require.NoError(t, err)
			keys := []string{"a", "b", "c", "d", "e", "f"} // spread over the slots
			for _, k := range keys {
				require.NoError(t, c.Do(ctx, c.B().Set().Key(k).Value("v"+k).Build()).Error())
			}
			c.Close()
			srv.Restart(t)
			c2 := srv.Client(t)
			for _, k := range keys {
				v, err := c2.Do(ctx, c2.B().Get().Key(k).Build()).ToString()
				require.NoError(t, err, k)
				require.Equal(t, "v"+k, v)
			}
		})
	}
}

// TestClusterReplicaTakesOverAKilledPrimary: in a cluster of three
// primaries with one replica each, a write is on the key's replica; when
// the key's primary is killed, the replica is promoted (Owner names it),
// and the cluster client started before reads the write and writes again
// through it.
func TestClusterReplicaTakesOverAKilledPrimary(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartClusterWith(t, valkeytest.ModeCluster())
	require.Len(t, srv.Nodes(), 6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := srv.Client(t)
	const key = "{failover}:k"
	require.NoError(t, c.Do(ctx, c.B().Set().Key(key).Value("before").Build()).Error())
	var primary, replica *valkeyserver.Server
	var err error
	require.Eventually(t, func() bool {
		primary, replica, err = srv.Owner(ctx, c, key)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "the key's primary and replica: %v", err)
	require.NotEqual(t, primary.Addr, replica.Addr)
	// The write reached the replica (READONLY, then GET on the replica).
	rc := valkeytest.NodeClient(t, replica)
	require.Eventually(t, func() bool {
		rs := rc.DoMulti(ctx, rc.B().Readonly().Build(), rc.B().Get().Key(key).Build())
		v, err := rs[1].ToString()
		return err == nil && v == "before"
	}, 10*time.Second, 20*time.Millisecond, "the write reaches the replica")

	primary.Kill()
	t0 := time.Now()
	for {
		p, _, err := srv.Owner(ctx, rc, key)
		if err == nil || errors.Is(err, valkeyserver.ErrNoReplica) {
			if p != nil && p.Addr == replica.Addr {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the replica %s was not promoted: %v", replica.Addr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Logf("replica %s promoted %v after primary %s was killed", replica.Addr, time.Since(t0).Round(time.Millisecond), primary.Addr)
	var v string
	require.Eventually(t, func() bool {
		v, err = c.Do(ctx, c.B().Get().Key(key).Build()).ToString()
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "the cluster client follows the new primary: %v", err)
	require.Equal(t, "before", v)
	require.NoError(t, c.Do(ctx, c.B().Set().Key(key).Value("after").Build()).Error())
}

// CommandStats reads each command's calls and server time from INFO
// commandstats, by name without the cmdstat_ prefix; ParseCommandStats
// skips the lines of other sections.
func TestCommandStatsCountsCallsAndTime(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Start(t, valkeytest.Options{})
	c := srv.Client(t)
	ctx := context.Background()
	before := valkeytest.CommandStats(ctx, t, c)
	for range 3 {
		require.NoError(t, c.Do(ctx, c.B().Set().Key("k").Value("1").Build()).Error())
	}
	after := valkeytest.CommandStats(ctx, t, c)
	require.Equal(t, before["set"].Calls+3, after["set"].Calls)
	require.GreaterOrEqual(t, after["set"].Usec, before["set"].Usec)
	require.Positive(t, valkeytest.UsecOf(after, "set", "info"))

	got := valkeytest.ParseCommandStats("# CPU\r\nused_cpu_sys:1.5\r\n# Commandstats\r\n" +
		"cmdstat_evalsha:calls=4,usec=120,usec_per_call=30.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_config|resetstat:calls=1,usec=7,usec_per_call=7.00\r\n")
	require.Equal(t, map[string]valkeytest.Stat{"evalsha": {Calls: 4, Usec: 120}, "config|resetstat": {Calls: 1, Usec: 7}}, got)
	require.InDelta(t, 127, valkeytest.UsecOf(got, "evalsha", "config|resetstat", "zadd"), 0)
}
