package chaos

import (
	"context"
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
// a valkey-oom fault holds it, answered OOM (a read still answered); once
// the fault ends the write succeeds and the settings it changed are back
// at the values they had before (not the defaults).
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := valkeytest.Start(t, valkeytest.Options{})
			c, err := srv.NewClient()
			require.NoError(t, err)
			defer c.Close()
			other, err := srv.NewClient()
			require.NoError(t, err)
			defer other.Close()
			for k, v := range tt.config {
				require.NoError(t, configSet(ctx, c, k, v))
			}
			for i := range 2000 { // some memory in use, as the bot's
				require.NoError(t, c.Do(ctx, c.B().Set().Key("k"+strconv.Itoa(i)).Value(strings.Repeat("v", 200)).Build()).Error())
			}
			st := &stack{nodes: [2]*valkeyserver.Server{srv.Server}, clients: [2]valkey.Client{c}}

			done := make(chan error, 1)
			go func() { done <- tt.apply(st, ctx, 2*time.Second) }()
			var refused string
			require.True(t, waitFor(ctx, 10*time.Second, func() bool {
				err := other.Do(ctx, other.B().Set().Key("during").Value("1").Build()).Error()
				if err != nil && strings.HasPrefix(err.Error(), tt.prefix) {
					refused = err.Error()
					if tt.prefix == "OOM" {
						require.NoError(t, other.Do(ctx, other.B().Get().Key("k1").Build()).Error(), "a read under OOM")
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
		})
	}
}
