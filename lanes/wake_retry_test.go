package lanes_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// A claimer that starts while Valkey is away waits for it instead of
// failing: NewWaiterRetry reports each failed subscription and tries again
// until the server is back, then returns a live Waiter that a later
// enqueue wakes; NewWaiter alone fails at once.
func TestNewWaiterRetryWaitsForValkeyToComeBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := valkeytest.Start(t, valkeytest.Options{})
	s, err := lanes.New(srv.Client(t), lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	srv.Kill()
	_, err = s.NewWaiter(ctx)
	require.Error(t, err, "the server is away: the plain subscription fails")

	var failures atomic.Int32
	type result struct {
		w   *lanes.Waiter
		err error
	}
	done := make(chan result, 1)
	go func() {
		w, err := s.NewWaiterRetry(ctx, func(error, time.Duration) { failures.Add(1) })
		done <- result{w, err}
	}()
	require.Eventually(t, func() bool { return failures.Load() >= 2 }, 20*time.Second, 10*time.Millisecond, "it tried again")
	select {
	case r := <-done:
		require.Failf(t, "returned while the server was away", "%v", r.err)
	default:
	}
	srv.Restart(t)
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no live waiter 30 s after the server came back")
	}
	require.NoError(t, r.err)
	m := lanes.NewMinter()
	require.Eventually(t, func() bool { // the client's old connection may answer EOF once
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: m.New(), Payload: []byte("x")}})
		return err == nil
	}, 20*time.Second, 50*time.Millisecond)
	require.True(t, r.w.Wait(ctx, 20*time.Second), "the live waiter is woken by an enqueue")
}
