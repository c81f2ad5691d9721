package chaos

import (
	"context"
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
