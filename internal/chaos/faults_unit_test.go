package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// TestValkeyFaultsRefuseWritesThenRestoreTheConfig: while a valkey-busy
// fault holds the primary, another client's write is answered BUSY (at
// once, though the threshold before was 60 s: the fault lowers it); while
// a valkey-oom fault holds it, answered OOM, and while a valkey-readonly
// fault does, READONLY (a read still answered under both); once the fault
// ends the write succeeds, the settings it changed are back at the values
// they had before (not the defaults), the server is a primary again,
// every key written before holds its value, and its replica, connected
// throughout, has caught up without a full resync.
func TestValkeyFaultsRefuseWritesThenRestoreTheConfig(t *testing.T) {
	if _, err := valkeyserver.Binary(); err != nil {
		testkit.SkipOrFail(t, "no valkey-server: "+err.Error())
	}
	tests := []struct {
		name   string
		apply  func(st *stack, ctx context.Context, d time.Duration) error
		prefix string            // the refused write's error
		config map[string]string // settings before the fault, not the defaults
	}{
		{"valkey-busy", (*stack).busy, "BUSY", map[string]string{"busy-reply-threshold": "60000"}}, // a script under it would stall every client silently for 60 s
		{"valkey-oom", (*stack).outOfMemory, "OOM", map[string]string{"maxmemory": "1073741824", "maxmemory-policy": "allkeys-lru"}},
		{"valkey-readonly", (*stack).readonly, "READONLY", nil},
	}
	const keys = 2000
	value := strings.Repeat("v", 200)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv, rsrv := valkeytest.Start(t, valkeytest.Options{}), valkeytest.Start(t, valkeytest.Options{})
			c, err := srv.NewClient()
			require.NoError(t, err)
			defer c.Close()
			rc, err := rsrv.NewClient()
			require.NoError(t, err)
			defer rc.Close()
			other, err := srv.NewClient()
			require.NoError(t, err)
			defer other.Close()
			for k, v := range tt.config {
				require.NoError(t, configSet(ctx, c, k, v))
			}
			for i := range keys { // some memory in use, as the bot's
				require.NoError(t, c.Do(ctx, c.B().Set().Key("k"+strconv.Itoa(i)).Value(value).Build()).Error())
			}
			st := &stack{nodes: [2]*valkeyserver.Server{srv.Server, rsrv.Server}, clients: [2]valkey.Client{c, rc}}
			require.NoError(t, configSet(ctx, c, "repl-diskless-sync-delay", "0"))
			require.NoError(t, st.replicaOf(ctx, 1, 0))
			require.True(t, waitFor(ctx, 20*time.Second, func() bool { return st.caughtUp(ctx, 1, 0) }), "the replica synced")
			fullSyncs, err := infoField(ctx, c, "stats", "sync_full")
			require.NoError(t, err)

			done := make(chan error, 1)
			go func() { done <- tt.apply(st, ctx, 2*time.Second) }()
			var refused string
			require.True(t, waitFor(ctx, 10*time.Second, func() bool {
				err := other.Do(ctx, other.B().Set().Key("during").Value("1").Build()).Error()
				if err != nil && strings.HasPrefix(err.Error(), tt.prefix) {
					refused = err.Error()
					if tt.prefix != "BUSY" {
						require.NoError(t, other.Do(ctx, other.B().Get().Key("k1").Build()).Error(), "a read under %s", tt.prefix)
					}
					return true
				}
				return false
			}), "a write answered %s during the fault", tt.prefix)
			t.Logf("refused: %s", refused)
			require.NoError(t, <-done, "the fault applied and undone")
			require.NoError(t, other.Do(ctx, other.B().Set().Key("after").Value("1").Build()).Error(), "a write after the fault")
			for k, v := range tt.config {
				got, err := configGet(ctx, c, k)
				require.NoError(t, err)
				require.Equal(t, v, got, "%s restored", k)
			}
			role, err := infoString(ctx, c, "replication", "role")
			require.NoError(t, err)
			require.Equal(t, "master", role, "a primary after the fault")
			names := make([]string, keys)
			for i := range names {
				names[i] = "k" + strconv.Itoa(i)
			}
			got, err := c.Do(ctx, c.B().Mget().Key(names...).Build()).AsStrSlice()
			require.NoError(t, err)
			require.Equal(t, slices.Repeat([]string{value}, keys), got, "every key written before the fault holds its value")
			require.True(t, waitFor(ctx, 20*time.Second, func() bool { return st.caughtUp(ctx, 1, 0) }), "the replica caught up after the fault")
			after, err := infoField(ctx, c, "stats", "sync_full")
			require.NoError(t, err)
			require.Equal(t, fullSyncs, after, "the replica resumed without a full resync")
			replicated, err := rc.Do(ctx, rc.B().Get().Key("after").Build()).ToString()
			require.NoError(t, err, "the write after the fault replicated")
			require.Equal(t, "1", replicated)
		})
	}
}

// TestClusterFaultsMoveTheBotsSlotToItsReplicaKeepingTheData: on a real
// cluster of three primaries with one replica each (append-only), with
// 2,000 keys of the bot's hash tag written and replicated, a
// cluster-kill-9 fault kills the primary of the bot's slot (a new run id
// once it is back: it was restarted) and a cluster-failover fails it over
// (the same run id: it was not); after either, the cluster client finds
// the slot served by the former replica, the former primary is its
// replica (linked, caught up), every key holds its value, a write
// succeeds and reaches the new replica; then the valkey-busy and
// valkey-oom faults hit the new primary (primaryNode): a write of the
// bot's tag through the cluster client is answered BUSY, then OOM.
func TestClusterFaultsMoveTheBotsSlotToItsReplicaKeepingTheData(t *testing.T) {
	if _, err := valkeyserver.Binary(); err != nil {
		testkit.SkipOrFail(t, "no valkey-server: "+err.Error())
	}
	tests := []struct {
		name      string
		apply     func(st *stack, ctx context.Context) error
		restarted bool // the former primary runs a new process
	}{
		{faultClusterKill, func(st *stack, ctx context.Context) error {
			lag, err := st.killSlotPrimary(ctx)
			if err == nil && lag != 0 {
				err = fmt.Errorf("the replica had %d bytes to acknowledge at the kill, though caught up before it", lag)
			}
			return err
		}, true},
		{faultClusterFailover, (*stack).clusterFailover, false},
	}
	const keys = 2000
	value := strings.Repeat("v", 200)
	names := make([]string, keys)
	for i := range names {
		names[i] = "{" + tag + "}:k" + strconv.Itoa(i)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := valkeytest.StartClusterWith(t, valkeytest.ClusterOptions{Primaries: clusterPrimaries, Replicas: 1, AppendOnly: true})
			c := srv.Client(t)
			st := &stack{t: t, cluster: srv.Server, cc: c}
			t.Cleanup(st.closeNodeClients)
			for _, k := range names {
				require.NoError(t, c.Do(ctx, c.B().Set().Key(k).Value(value).Build()).Error())
			}
			primary, replica, err := st.pair(ctx)
			require.NoError(t, err, "the slot's primary and its replica")
			require.True(t, waitFor(ctx, 20*time.Second, func() bool { return st.follows(ctx, replica, primary) }), "the replica caught up before the fault")
			runID := func(n *valkeyserver.Server) string {
				nc, err := st.nodeClient(n)
				require.NoError(t, err)
				id, err := infoString(ctx, nc, "server", "run_id")
				require.NoError(t, err)
				return id
			}
			before := runID(primary)

			require.NoError(t, tt.apply(st, ctx), "the fault applied")
			var now, follower *valkeyserver.Server
			require.True(t, waitFor(ctx, 20*time.Second, func() bool {
				now, follower, err = st.slotOwner(ctx)
				return err == nil && now.Addr == replica.Addr && follower != nil && follower.Addr == primary.Addr
			}), "the cluster names %s the slot's primary and %s its replica (now %v, replica %v, %v)", replica.Addr, primary.Addr, now, follower, err)
			require.Equal(t, tt.restarted, runID(primary) != before, "the former primary's process restarted: %v", tt.restarted)
			var got []string
			require.True(t, waitFor(ctx, 20*time.Second, func() bool {
				got, err = c.Do(ctx, c.B().Mget().Key(names...).Build()).AsStrSlice()
				return err == nil
			}), "the keys read through the cluster client: %v", err)
			require.Equal(t, slices.Repeat([]string{value}, keys), got, "every key written before the fault holds its value")
			require.NoError(t, c.Do(ctx, c.B().Set().Key("{"+tag+"}:after").Value("1").Build()).Error(), "a write after the fault")
			require.True(t, waitFor(ctx, 20*time.Second, func() bool { return st.follows(ctx, primary, replica) }), "the write after the fault replicated to the former primary")

			for _, f := range []struct {
				name   string
				apply  func(*stack, context.Context, time.Duration) error
				prefix string
			}{{faultBusy, (*stack).busy, "BUSY"}, {faultOOM, (*stack).outOfMemory, "OOM"}} {
				done := make(chan error, 1)
				go func() { done <- f.apply(st, ctx, time.Second) }()
				var refused error
				require.True(t, waitFor(ctx, 10*time.Second, func() bool {
					refused = c.Do(ctx, c.B().Set().Key("{"+tag+"}:during").Value("1").Build()).Error()
					return refused != nil && strings.HasPrefix(refused.Error(), f.prefix)
				}), "%s: a write of the bot's tag answered %s on the new primary (last: %v)", f.name, f.prefix, refused)
				require.NoError(t, <-done, "%s applied and undone", f.name)
			}
		})
	}
}

// TestClusterRunMapsTheValkeyFaultsAndLeavesOutTheNetworks: forCluster
// turns a valkey-restart into a cluster-kill-9 and a valkey-failover into a
// cluster-failover at the same time, leaves out net-cut, net-slow and
// valkey-readonly (returned apart, in order) and keeps every other fault
// as drawn.
func TestClusterRunMapsTheValkeyFaultsAndLeavesOutTheNetworks(t *testing.T) {
	s := time.Second
	in := []fault{
		{At: 3 * s, Kind: faultKill, Target: "worker-1", For: s},
		{At: 4 * s, Kind: faultRestart, Target: "valkey"},
		{At: 5 * s, Kind: faultCut, Target: "valkey", For: 2 * s},
		{At: 6 * s, Kind: faultFailover, Target: "valkey"},
		{At: 7 * s, Kind: faultSlow, Target: faultSlow, For: 3 * s, N: 80},
		{At: 8 * s, Kind: faultBusy, Target: "valkey", For: 2 * s},
		{At: 9 * s, Kind: faultReadonly, Target: "valkey", For: 2 * s},
		{At: 10 * s, Kind: faultOOM, Target: "valkey", For: 2 * s},
	}
	kept, left := forCluster(in)
	require.Equal(t, []fault{
		{At: 3 * s, Kind: faultKill, Target: "worker-1", For: s},
		{At: 4 * s, Kind: faultClusterKill, Target: "valkey"},
		{At: 6 * s, Kind: faultClusterFailover, Target: "valkey"},
		{At: 8 * s, Kind: faultBusy, Target: "valkey", For: 2 * s},
		{At: 10 * s, Kind: faultOOM, Target: "valkey", For: 2 * s},
	}, kept)
	require.Equal(t, []fault{in[2], in[4], in[6]}, left)
}
