package consumer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// extendRecorder is a store as the keeper's Extender: it signals each
// Extend's start and records the error its context had once it returned.
type extendRecorder struct {
	s       *lanes.Store
	started chan struct{}
	mu      sync.Mutex
	ends    []error
}

func (r *extendRecorder) Extend(ctx context.Context, l lanes.Lease, d time.Duration) (time.Time, error) {
	select {
	case r.started <- struct{}{}:
	default:
	}
	t, err := r.s.Extend(ctx, l, d)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends = append(r.ends, ctx.Err())
	return t, err
}

func (r *extendRecorder) endsSoFar() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.ends...)
}

// Stop cuts the keeper's extension in progress (its context is cancelled,
// not left to its own bound of a third of the lease), returns once it
// returned, and no extension starts after it: the server is made busy so
// the keeper's first Extend waits on it.
func TestStopCutsTheExtensionInProgressAndNoneStartsAfter(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Start(t, valkeytest.Options{})
	s := newStore(t, srv)
	enqueue(t, s, unordered, "kept", 1)
	jobs := claimAll(t, s, unordered, time.Minute, 1)
	rec := &extendRecorder{s: s, started: make(chan struct{}, 1)}
	// Each command waits up to 3 s on the busy server: past the Extend's
	// own bound (length/3 = 1 s).
	end := valkeytest.Busy(t, srv, 3*time.Second)
	const length = 3 * time.Second
	k := consumer.Keep(context.Background(), rec, leasesOf(jobs), length, time.Now(), nil)
	select {
	case <-rec.started:
	case <-time.After(10 * time.Second):
		t.Fatal("no extension within 10 s of a lease of 3 s")
	}
	time.Sleep(100 * time.Millisecond) // the Extend waits on the server
	k.Stop()
	require.Equal(t, []error{context.Canceled}, rec.endsSoFar(), "the Extend in progress had its context cancelled by Stop, and returned before Stop did")
	end()
	time.Sleep(length/3 + 500*time.Millisecond)
	require.Len(t, rec.endsSoFar(), 1, "no extension after Stop")
}
