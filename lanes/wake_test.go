package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// A Waiter wakes when another connection enqueues, and when an ack frees a
// saturated lane; it does not wake for nothing.
func TestWaiterWakesOnEnqueue(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: 1}))
	other := sibling(t, s, lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: 1}))
	w, err := s.NewWaiter(ctx)
	require.NoError(t, err)
	require.False(t, w.Wait(ctx, 20*time.Millisecond), "no wake-up without work")

	m := lanes.NewMinter()
	res, err := other.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: m.New()}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added)
	require.True(t, w.Wait(ctx, 20*time.Second), "enqueue from another connection wakes")

	_, err = other.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: m.New()}})
	require.NoError(t, err)
	w.Wait(ctx, 0) // drain: the lane was in the ring already, no new wake-up is due
	j := claimOne(t, s, time.Minute, "q")
	require.Empty(t, claim(t, s, 1, time.Minute, "q").Jobs, "lane at its limit")
	require.NoError(t, other.Ack(ctx, j.Lease))
	require.True(t, w.Wait(ctx, 20*time.Second), "an ack that frees the lane wakes")

	cancel()
	select {
	case <-w.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("waiter did not stop with its context")
	}
}

// An idle worker (Claim said RetryIn -1, it waits on its Waiter) wakes and
// gets the job for each of: an enqueue from another connection; a lane parked from another connection while the worker idles,
// when it falls due (RetryIn); the global budget refilling (RetryIn); a
// retry's delay ending (RetryIn). While idle it makes no claims. (Each job
// is waited for up to 20 s: unwoken, the worker would wait for ever.)
func TestWaiterWakesIdleClaimerForEveryEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = time.Minute
	s := newStore(t, lanes.WithGlobalRate(2, 300*time.Millisecond))
	other := sibling(t, s, lanes.WithGlobalRate(2, 300*time.Millisecond))
	m := lanes.NewMinter()
	// The worker acks every job, except that it nacks lane d0's first attempt
	// for 250 ms.
	w := startClaimLoop(t, s, lanes.ClaimRequest{Queues: []string{"q"}, Lease: lease, Max: 1}, func(j lanes.Job) error {
		if j.Group == "d0" && j.Attempts == 0 {
			_, err := s.Nack(ctx, j.Lease, 250*time.Millisecond, "flaky")
			return err
		}
		return s.Ack(ctx, j.Lease)
	})

	// Idle: no claims while nothing happens (at most one, for a stale signal).
	w.WaitIdle(t)
	n0 := w.Claims.Load()
	time.Sleep(300 * time.Millisecond)
	require.LessOrEqual(t, w.Claims.Load()-n0, int64(1), "an idle worker must not poll")

	t.Run("enqueue", func(t *testing.T) {
		w.WaitIdle(t)
		_, err := other.Enqueue(ctx, "q", []lanes.Item{{Group: "a", ID: m.New()}})
		require.NoError(t, err)
		require.Equal(t, "a", w.Next(t, 20*time.Second).Group)
	})

	t.Run("parked lane falls due", func(t *testing.T) {
		// While the worker waits with no timer, another process parks a lane
		// (a 429) and a job arrives for it: the worker must learn the new
		// due time and claim the job when the park ends.
		w.WaitIdle(t)
		end, err := other.Inspector().Park(ctx, "q", "b", 300*time.Millisecond)
		require.NoError(t, err)
		_, err = other.Enqueue(ctx, "q", []lanes.Item{{Group: "b", ID: m.New()}})
		require.NoError(t, err)
		j := w.Next(t, 20*time.Second)
		require.Equal(t, "b", j.Group)
		late := claimedAt(j, lease) - end.UnixMilli()
		t.Logf("claimed %d ms after the park ended", late)
		require.GreaterOrEqual(t, late, int64(0))
	})

	t.Run("global budget refills", func(t *testing.T) {
		w.WaitIdle(t)
		fillLanes(t, other, m, "q", "c", 3, 1)
		var at []int64
		for i := 0; i < 3; i++ {
			at = append(at, claimedAt(w.Next(t, 20*time.Second), lease))
		}
		t.Logf("claims at +0, +%d, +%d ms (2 per 300 ms window)", at[1]-at[0], at[2]-at[0])
		require.GreaterOrEqual(t, at[2]-at[0], int64(300))
	})

	t.Run("retry delay ends", func(t *testing.T) {
		w.WaitIdle(t)
		_, err := other.Enqueue(ctx, "q", []lanes.Item{{Group: "d0", ID: m.New()}})
		require.NoError(t, err)
		j := w.Next(t, 20*time.Second) // nacked for 250 ms
		j2 := w.Next(t, 20*time.Second)
		require.Equal(t, j.ID, j2.ID)
		require.Equal(t, 1, j2.Attempts)
		late := claimedAt(j2, lease) - claimedAt(j, lease) - 250
		t.Logf("retried %d ms after its delay ended", late)
		require.GreaterOrEqual(t, late, int64(0))
	})

	w.WaitIdle(t)
	n0 = w.Claims.Load()
	time.Sleep(300 * time.Millisecond)
	require.LessOrEqual(t, w.Claims.Load()-n0, int64(1), "an idle worker must not poll")
}

// A Resume wakes workers idle under an indefinite pause, and a ResumeLane
// wakes them for a lane parked until resumed.
func TestWaiterWakesOnResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	other := sibling(t, s)
	m := lanes.NewMinter()
	require.NoError(t, other.Inspector().Pause(ctx, -1))
	_, err := other.Inspector().Park(ctx, "q", "p", -1)
	require.NoError(t, err)
	fillLanes(t, other, m, "q", "p", 1, 1) // lane p0, not parked
	_, err = other.Inspector().Park(ctx, "q", "p0", -1)
	require.NoError(t, err)
	w := startClaimLoop(t, s, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1}, nil)
	w.WaitIdle(t)
	n := w.Claims.Load()
	require.NoError(t, other.Inspector().Resume(ctx))
	// It wakes, claims, finds the lane parked until resumed: idle again.
	deadline := time.Now().Add(5 * time.Second)
	for w.Claims.Load() == n {
		require.True(t, time.Now().Before(deadline), "Resume did not wake the worker")
		time.Sleep(time.Millisecond)
	}
	w.WaitIdle(t)
	require.NoError(t, other.Inspector().ResumeLane(ctx, "q", "p0"))
	j := w.Next(t, 20*time.Second)
	require.Equal(t, "p0", j.Group)
}

// A Waiter whose context ends while Valkey is busy with a script (every
// command answered BUSY) stops, and its client serves again once the
// script ends: its subscribed connection is closed, not handed back to
// the client's pool, where valkey-go unsubscribes it and, those
// unsubscribes answered BUSY, panicked ("protocol bug, message handled out
// of order"), crashing a bot process stopped during a BUSY spell.
func TestAWaiterEndedWhileValkeyIsBusyStopsWithoutCrashingItsClient(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Start(t, valkeytest.Options{})
	c := srv.Client(t)
	s, err := lanes.New(c, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.NewWaiter(ctx)
	require.NoError(t, err)

	end := valkeytest.Busy(t, srv, 50*time.Millisecond)
	cancel()
	select {
	case <-w.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the waiter did not stop with its context while Valkey was busy")
	}
	end()

	bg := context.Background()
	require.NoError(t, c.Do(bg, c.B().Ping().Build()).Error(), "the client serves once the script ended")
	again, err := s.NewWaiter(bg)
	require.NoError(t, err, "a new waiter subscribes")
	res, err := s.Enqueue(bg, "q", []lanes.Item{{Group: "g", ID: lanes.NewMinter().New()}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added)
	require.True(t, again.Wait(bg, 20*time.Second), "and wakes on an enqueue")
}
