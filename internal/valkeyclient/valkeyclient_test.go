package valkeyclient_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeyclient"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// stormFor is how long each case reads while connections are killed:
// without Pinned, -race reports the race in every run of 5 s seen (732
// connections killed in one).
const stormFor = 5 * time.Second

// TestRetriedReadsRaceNothingWhenConnectionsBreak: HGETALLs (read-only,
// so valkey-go retries them) sent through a Pinned client by 8 goroutines,
// by Do and by DoMulti, while another client kills every other connection
// of the server every 2 ms (CLIENT KILL TYPE normal SKIPME yes), race
// nothing under -race, and every read that succeeds reads the hash as
// written. Without Pinned the race detector reports valkey-go's command
// Builder writing a recycled command slice that a dead connection's
// writer (_backgroundWrite, writeCmd) read (see the package comment).
func TestRetriedReadsRaceNothingWhenConnectionsBreak(t *testing.T) {
	if !testkit.RaceEnabled {
		t.Skip("proves a data race absent: needs go test -race")
	}
	want := map[string]string{"a": "1", "b": "2"}
	for _, tc := range []struct {
		name string
		read func(ctx context.Context, c valkey.Client, key string) []valkey.ValkeyResult
	}{
		{"Do", func(ctx context.Context, c valkey.Client, key string) []valkey.ValkeyResult {
			return []valkey.ValkeyResult{c.Do(ctx, c.B().Hgetall().Key(key).Build())}
		}},
		{"DoMulti", func(ctx context.Context, c valkey.Client, key string) []valkey.ValkeyResult {
			return c.DoMulti(ctx, c.B().Hgetall().Key(key).Build(), c.B().Hgetall().Key(key).Build())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := valkeytest.Start(t, valkeytest.Options{})
			raw, err := srv.NewClient()
			require.NoError(t, err)
			t.Cleanup(raw.Close)
			c := valkeyclient.Pinned(raw)
			killer := srv.Client(t)
			ctx := t.Context()
			key := valkeytest.Namespace(t) + ":h"
			require.NoError(t, killer.Do(ctx, killer.B().Hset().Key(key).FieldValue().FieldValue("a", "1").FieldValue("b", "2").Build()).Error())

			stop := time.Now().Add(stormFor)
			var ok atomic.Int64
			var wrong sync.Map
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for time.Now().Before(stop) {
						rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
						for _, r := range tc.read(rctx, c, key) {
							if m, err := r.AsStrMap(); err == nil {
								ok.Add(1)
								if len(m) != len(want) || m["a"] != want["a"] || m["b"] != want["b"] {
									wrong.Store(len(m), m)
								}
							}
						}
						cancel()
					}
				})
			}
			kills := int64(0)
			for time.Now().Before(stop) {
				if n, err := killer.Do(ctx, killer.B().ClientKill().TypeNormal().SkipmeYes().Build()).AsInt64(); err == nil {
					kills += n
				}
				time.Sleep(2 * time.Millisecond)
			}
			wg.Wait()
			t.Logf("%d reads succeeded, %d connections killed", ok.Load(), kills)
			require.Positive(t, kills, "connections killed")
			require.Positive(t, ok.Load(), "reads succeeded")
			wrong.Range(func(_, m any) bool {
				t.Errorf("a read returned %v, want %v", m, want)
				return true
			})
		})
	}
}

// TestNewClientIsPinnedOnce: New's client is a Pinned one that reads and
// writes, Pinned wraps a plain valkey-go client, and Pinned of a Pinned
// client is that client (no second layer).
func TestNewClientIsPinnedOnce(t *testing.T) {
	srv := valkeytest.Shared(t)
	opt := valkey.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true}
	p, err := valkeyclient.New(opt)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	require.Equal(t, p, valkeyclient.Pinned(p), "Pinned(New(opt))")
	raw, err := valkey.NewClient(opt)
	require.NoError(t, err)
	t.Cleanup(raw.Close)
	require.NotEqual(t, raw, valkeyclient.Pinned(raw), "Pinned(valkey.NewClient(opt))")
	ctx := t.Context()
	key := valkeytest.Namespace(t) + ":k"
	require.NoError(t, p.Do(ctx, p.B().Set().Key(key).Value("v").Build()).Error())
	got, err := p.Do(ctx, p.B().Get().Key(key).Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, "v", got)
}
