package notifier_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A Broadcast repeated with the same key returns the first one's id and
// fans out nothing; Notify keys and Broadcast keys do not collide.
func TestBroadcastKeyIdempotent(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	chats := []int64{1, 2, 3, 4}
	id, err := n.Broadcast(ctx, chats, notifier.Message{Text: "hello", Key: "upd:99"})
	require.NoError(t, err)
	again, err := n.Broadcast(ctx, append(chats, 5, 6), notifier.Message{Text: "hello", Key: "upd:99"})
	require.NoError(t, err)
	require.Equal(t, id, again)
	require.Equal(t, 4, pending(t, n, tgjob.QueueNotify), "fanned out once")
	p, err := n.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, notifier.Progress{ID: id, Total: 4, Queued: 4, Failed: map[string]int{}, Remaining: 4}, p)

	// The same key string for a Notify is a different key.
	ids, err := n.Notify(ctx, 1, notifier.Message{Text: "reply", Key: "upd:99"})
	require.NoError(t, err)
	require.Len(t, ids, 1)
	// A broadcast without a key, or with another one, fans out again.
	other, err := n.Broadcast(ctx, chats, notifier.Message{Text: "hello"})
	require.NoError(t, err)
	require.NotEqual(t, id, other)
	third, err := n.Broadcast(ctx, chats, notifier.Message{Text: "hello", Key: "upd:100"})
	require.NoError(t, err)
	require.NotEqual(t, id, third)
	require.Equal(t, 12, pending(t, n, tgjob.QueueNotify))
}

// StopBroadcast removes exactly the copies still waiting: a copy in flight
// is left to its claimer and counted when it settles, so Sent + Cancelled
// = Total with nothing counted twice; a second stop cancels nothing more;
// the notification queue holds no copy afterwards.
func TestStopBroadcastCancelsTheWaitingCopies(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	chats := make([]int64, 25)
	for i := range chats {
		chats[i] = int64(1000 + i)
	}
	id, err := n.Broadcast(ctx, chats, notifier.Message{Text: "stop me"})
	require.NoError(t, err)
	s := n.Store()
	// Three copies are claimed: in flight at the stop.
	var held []lanes.Job
	for len(held) < 3 {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueNotify}, Lease: time.Minute, Max: 1})
		require.NoError(t, err)
		held = append(held, c.Jobs...)
	}
	p, err := n.StopBroadcast(ctx, id)
	require.NoError(t, err)
	require.Equal(t, notifier.Progress{ID: id, Total: 25, Queued: 25, Cancelled: 22, Stopped: true, StopFinished: true, StopCounted: true, StopInFlight: 3, StoppedAt: p.StoppedAt, Failed: map[string]int{}, Remaining: 3}, p)
	require.WithinDuration(t, time.Now(), p.StoppedAt, time.Minute)
	require.Zero(t, pending(t, n, tgjob.QueueNotify), "no copy is left on a lane")
	require.False(t, p.Done(), "three copies are still in flight")

	tally, err := n.SentTally(id, false)
	require.NoError(t, err)
	for _, j := range held { // delivered: acked and counted by the worker
		require.NoError(t, s.Ack(ctx, j.Lease, lanes.Counting(tally)))
	}
	p, err = n.StopBroadcast(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 22, p.Cancelled, "a second stop cancels nothing more")
	require.Equal(t, 3, p.Sent)
	require.Equal(t, p.Total, p.Sent+p.Cancelled)
	require.True(t, p.Done())

	_, err = n.StopBroadcast(ctx, "bc_01ARZ3NDEKTSV4RRFFQ69G5FAV")
	require.ErrorIs(t, err, notifier.ErrUnknownBroadcast)
	_, err = n.StopBroadcast(ctx, "nope")
	require.ErrorIs(t, err, notifier.ErrInvalid)
}

// A stop while Broadcast is still fanning out (batches of 10 chats): the
// fan-out notices it within its next batch, cancels the batches it enqueued
// since and counts the copies it never enqueued as cancelled, so no copy
// stays on a lane and Cancelled = Total (nothing was claimed).
func TestStopBroadcastDuringFanOut(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	n, id, done := startFanOut(t, 10, 5000, 0)
	_, err := n.StopBroadcast(ctx, id)
	require.NoError(t, err)
	require.NoError(t, <-done)
	p, err := n.Progress(ctx, id)
	require.NoError(t, err)
	t.Logf("stopped during the fan-out: %d of %d copies had been queued", p.Queued, p.Total)
	require.Less(t, p.Queued, p.Total, "the fan-out stopped early")
	require.Equal(t, p.Total, p.Cancelled)
	require.Zero(t, pending(t, n, tgjob.QueueNotify), "no copy is left on a lane")
}

// Once StopBroadcast has returned, no copy of the broadcast is on a lane
// and none gets there later, wherever in the fan-out the stop lands: the
// fan-out's batches are enqueued unless the stop key exists, and the stop
// cancels every copy recorded before it.
func TestStopBroadcastLeavesNoCopyOnALaneOnceItReturns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		queued int // stop once more than this many copies were queued (-1: as soon as the broadcast exists)
	}{
		{"as soon as it exists", -1},
		{"after the first batches", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			n, id, done := startFanOut(t, 500, 20000, tc.queued)
			_, err := n.StopBroadcast(ctx, id)
			require.NoError(t, err)
			for {
				require.Zero(t, pending(t, n, tgjob.QueueNotify), "no copy on a lane after the stop returned")
				select {
				case err := <-done:
					require.NoError(t, err)
					require.Zero(t, pending(t, n, tgjob.QueueNotify))
					p, err := n.Progress(ctx, id)
					require.NoError(t, err)
					require.Equal(t, p.Total, p.Cancelled, "nothing was claimed: every copy cancelled")
					return
				case <-time.After(time.Millisecond):
				}
			}
		})
	}
}

// Nothing of a broadcast is sent after StopBroadcast, not even a copy in
// flight at the stop whose send does not end in an ack: three copies whose
// leases expire (their worker died, froze or hung), one given back for a
// retry (a 5xx) and one for good (a 403) are dropped by the store and
// counted cancelled, never claimed again; only the copy acked is counted
// sent (it was delivered). The progress adds up: Sent + Failed + Cancelled
// = Total, Remaining 0; what the stop recorded stays (0 sent before it, 6
// in flight at it), a later StopBroadcast included.
func TestStopBroadcastSendsNoCopyThatWasInFlightAfterTheStop(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	chats := make([]int64, 12)
	for i := range chats {
		chats[i] = int64(2000 + i)
	}
	id, err := n.Broadcast(ctx, chats, notifier.Message{Text: "stop me"})
	require.NoError(t, err)
	s := n.Store()
	claimed := func(lease time.Duration) lanes.Job {
		t.Helper()
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueNotify}, Lease: lease, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		return c.Jobs[0]
	}
	const lease = 300 * time.Millisecond
	expiring := []lanes.Job{claimed(lease), claimed(lease), claimed(lease)}
	retried, forbidden, delivered := claimed(time.Minute), claimed(time.Minute), claimed(time.Minute)

	p, err := n.StopBroadcast(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 6, p.Cancelled, "the copies waiting")
	require.Equal(t, 6, p.Remaining, "the copies in flight")

	sent, err := n.SentTally(id, false)
	require.NoError(t, err)
	require.NoError(t, s.Ack(ctx, delivered.Lease, lanes.Counting(sent)))
	maxAttempts, err := n.FailedTally(id, "max attempts")
	require.NoError(t, err)
	out, err := s.Nack(ctx, retried.Lease, 0, "transient: 502", lanes.Counting(maxAttempts))
	require.NoError(t, err)
	require.Equal(t, lanes.Cancelled, out, "not retried")
	dead, err := n.FailedTally(id, "forbidden")
	require.NoError(t, err)
	require.NoError(t, s.Dead(ctx, forbidden.Lease, "403", lanes.Counting(dead)))

	time.Sleep(lease + 100*time.Millisecond) // the three leases expire
	claimNone := func() {
		t.Helper()
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueNotify}, Lease: time.Minute, Max: 16, Lanes: 16})
		require.NoError(t, err)
		require.Empty(t, c.Jobs, "no copy is claimed (sent) after the stop")
	}
	claimNone() // its maintenance reclaims the expired leases
	st, err := s.Inspector().Stats(ctx, tgjob.QueueNotify, 0)
	require.NoError(t, err)
	require.Zero(t, st.Pending, "nothing went back to a lane")
	require.Zero(t, st.InFlight)
	require.Zero(t, st.Dead, "nothing was dead-lettered")
	// Past the chats' pace (1 a second), which would hold a copy put back.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		claimNone()
	}
	for _, j := range expiring {
		require.ErrorIs(t, s.Ack(ctx, j.Lease, lanes.Counting(sent)), lanes.ErrNoJob, "dropped at its lease's expiry")
	}

	p, err = n.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, notifier.Progress{ID: id, Total: 12, Queued: 12, Sent: 1, Cancelled: 11, Stopped: true, StopFinished: true, StopCounted: true, StopInFlight: 6,
		StoppedAt: p.StoppedAt, Failed: map[string]int{}, Remaining: 0}, p)
	require.True(t, p.Done())
	again, err := n.StopBroadcast(ctx, id)
	require.NoError(t, err)
	require.Equal(t, p, again, "a stop called again records nothing more: the copy delivered after the stop stays one of the 6 in flight at it")
}

// A paid copy in flight at the stop that the bot then cannot pay for halts
// nothing (HaltPaid answers false, the paid queue is not halted: nobody
// would lift it, the stop having lifted the last halt already), and given
// back it is dropped, counted cancelled.
func TestAPaidCopyInFlightAtTheStopThatCannotBePaidForHaltsNothing(t *testing.T) {
	t.Parallel()
	n := newNotifier(t)
	ctx := t.Context()
	id, err := n.Broadcast(ctx, []int64{31, 32, 33}, notifier.Message{Text: "paid news", Paid: true})
	require.NoError(t, err)
	s := n.Store()
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueuePaid}, Lease: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)
	_, err = n.StopBroadcast(ctx, id)
	require.NoError(t, err)

	halted, err := n.HaltPaid(ctx, id)
	require.NoError(t, err)
	require.False(t, halted)
	bc, err := n.PaidHalted(ctx)
	require.NoError(t, err)
	require.Empty(t, bc, "the paid queue is not halted")
	require.NoError(t, s.Release(ctx, c.Jobs[0].Lease))
	require.Zero(t, pending(t, n, tgjob.QueuePaid), "the copy given back is dropped")

	p, err := n.Progress(ctx, id)
	require.NoError(t, err)
	require.False(t, p.Halted)
	require.Equal(t, 3, p.Cancelled)
	require.Zero(t, p.Remaining)
	require.Equal(t, p.Total, p.Sent+p.Cancelled)
}
