package lanes_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A claimer whose heartbeat stopped loses its leases to RecoverDead
// however long they are: its job goes back to its lane (an attempt
// counted), another claimer gets it, and its own late ack is stale; a
// claimer that keeps beating keeps its job; nothing is recovered while
// every claimer beats; a bad claimer id is refused.
func TestRecoverDeadReturnsADeadClaimersLeasesOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	for _, g := range []string{"a", "b"} {
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: g, ID: m.New(), Payload: []byte(g)}})
		require.NoError(t, err)
	}
	claim := func(claimer string) lanes.Job {
		t.Helper()
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1, Claimer: claimer})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		return c.Jobs[0]
	}
	require.NoError(t, s.Heartbeat(ctx, "dies", "q"))
	require.NoError(t, s.Heartbeat(ctx, "lives", "q"))
	dying, living := claim("dies"), claim("lives")
	const ttl = 300 * time.Millisecond
	n, err := s.RecoverDead(ctx, ttl, "q")
	require.NoError(t, err)
	require.Zero(t, n, "both beat within the ttl")

	// "lives" beats on; "dies" stops beating.
	deadline := time.Now().Add(2 * ttl)
	for time.Now().Before(deadline) {
		require.NoError(t, s.Heartbeat(ctx, "lives", "q"))
		time.Sleep(ttl / 6)
	}
	n, err = s.RecoverDead(ctx, ttl, "q")
	require.NoError(t, err)
	require.Equal(t, 1, n, "the dead claimer's lease only")
	n, err = s.RecoverDead(ctx, ttl, "q")
	require.NoError(t, err)
	require.Zero(t, n, "a dead claimer is recovered once")

	again := claim("other")
	require.Equal(t, dying.ID, again.ID, "the dead claimer's job is claimable again, an hour before its lease's end")
	require.Equal(t, 1, again.Attempts, "recovered as an expired lease: one attempt counted")
	require.ErrorIs(t, s.Ack(ctx, dying.Lease), lanes.ErrStaleLease, "the dead claimer's late ack")
	require.NoError(t, s.Ack(ctx, living.Lease), "the living claimer's lease held")
	require.NoError(t, s.Ack(ctx, again.Lease))

	require.ErrorIs(t, s.Heartbeat(ctx, "no spaces", "q"), lanes.ErrInvalid)
	_, err = s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1, Claimer: "{bad}"})
	require.ErrorIs(t, err, lanes.ErrInvalid)
	_, err = s.RecoverDead(ctx, 0, "q")
	require.ErrorIs(t, err, lanes.ErrInvalid)
}

// RecoverDead wakes idle claimers (a lanes Waiter), which would otherwise
// sleep until the recovered leases' old deadlines.
func TestRecoverDeadWakesIdleClaimers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "a", ID: lanes.NewMinter().New(), Payload: []byte("x")}})
	require.NoError(t, err)
	require.NoError(t, s.Heartbeat(ctx, "dies", "q"))
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1, Claimer: "dies"})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)
	w, err := s.NewWaiter(ctx)
	require.NoError(t, err)
	for w.Wait(ctx, 200*time.Millisecond) { // drain the subscription's own first notice
	}
	woken := make(chan bool, 1)
	go func() { woken <- w.Wait(ctx, 10*time.Second) }()
	time.Sleep(400 * time.Millisecond) // "dies" silent past the ttl below
	n, err := s.RecoverDead(ctx, 300*time.Millisecond, "q")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.True(t, <-woken, "the idle claimer is woken, not left to its lease's end (an hour)")
}

// A dead claimer of two queues is recovered in each by the sweep of that
// queue: a sweep of one (the handlers' update queue) does not forget it in
// the other (the worker's).
func TestRecoverDeadForgetsAClaimerOnlyInTheQueuesItSwept(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}), lanes.WithQueue("r", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	for _, q := range []string{"q", "r"} {
		_, err := s.Enqueue(ctx, q, []lanes.Item{{Group: "a", ID: m.New(), Payload: []byte(q)}})
		require.NoError(t, err)
		require.NoError(t, s.Heartbeat(ctx, "dies", q))
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{q}, Lease: time.Hour, Max: 1, Claimer: "dies"})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
	}
	time.Sleep(400 * time.Millisecond)
	for _, q := range []string{"q", "r"} {
		n, err := s.RecoverDead(ctx, 300*time.Millisecond, q)
		require.NoError(t, err)
		require.Equal(t, 1, n, "queue %s", q)
	}
}

// A dead claimer's send in flight is counted in its lane's pace from when
// the claimer stopped (its last beat + ttl/5), not from the recovery: the
// claim right after RecoverDead serves the job again although its lane is
// paced (1 per 200 ms, shorter than ttl - ttl/5), so a resend waits for the
// dead claimer's ttl only, not a pace period more. A lease that merely
// expired (its claimer never beat, so nothing is known of when it
// stopped) still counts its send from the reclaim: its lane (1 per 10 s) is
// parked for the pace period.
func TestADeadClaimersSendIsPacedFromItsLastBeat(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	for _, tc := range []struct {
		name      string
		beats     bool          // the claimer beat before its claim
		lease     time.Duration // its claim's lease
		pace      time.Duration // the lane's pace period (1 send in it)
		recovered int           // RecoverDead's count after the claimer's silence
		served    bool          // the next claim gets the job again
	}{
		{name: "dead claimer recovered", beats: true, lease: time.Hour, pace: 200 * time.Millisecond, recovered: 1, served: true},
		// The in-flight entry lives lease + pace: the reclaim comes well within it.
		{name: "lease expired", beats: false, lease: 50 * time.Millisecond, pace: 10 * time.Second, recovered: 0, served: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}),
				lanes.WithLanePace(lanes.Pace{Limit: 1, Period: tc.pace}))
			_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "chat", ID: lanes.NewMinter().New(), Payload: []byte("x")}})
			require.NoError(t, err)
			if tc.beats {
				require.NoError(t, s.Heartbeat(ctx, "dies", "q"))
			}
			first, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: tc.lease, Max: 1, Claimer: "dies"})
			require.NoError(t, err)
			require.Len(t, first.Jobs, 1)
			time.Sleep(ttl + 100*time.Millisecond) // silent past the ttl (and the short lease)
			n, err := s.RecoverDead(ctx, ttl, "q")
			require.NoError(t, err)
			require.Equal(t, tc.recovered, n)

			again, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1, Claimer: "other"})
			require.NoError(t, err)
			require.ErrorIs(t, s.Ack(ctx, first.Jobs[0].Lease), lanes.ErrStaleLease, "the first claimer's late ack")
			if !tc.served {
				require.Empty(t, again.Jobs, "the reclaimed send counted from now parks its lane")
				require.Positive(t, again.RetryIn, "parked until the pace allows")
				return
			}
			require.Len(t, again.Jobs, 1, "served at once: the lane's pace counts the dead claimer's send from its last beat")
			require.Equal(t, first.Jobs[0].ID, again.Jobs[0].ID)
			require.Equal(t, 1, again.Jobs[0].Attempts, "recovered as an expired lease: one attempt counted")
			require.NoError(t, s.Ack(ctx, again.Jobs[0].Lease))
		})
	}
}
