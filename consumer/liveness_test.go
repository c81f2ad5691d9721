package consumer_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/lanes"
)

// KeepAlive at its defaults (consumer.DefaultLivenessTTL) takes over the
// job of a claimer that died (its KeepAlive ended, as with kill -9) long
// before its hour-long lease ends: a surviving claimer's sweep recovers
// that lease alone, the job is served again (one attempt counted) and the
// dead claimer's late ack is refused. A claimer that is alive but slow (it
// holds its job throughout, beating) keeps its lease, and so does one
// frozen for a quarter of the ttl (its beats stopped, then resumed, as
// with SIGSTOP and SIGCONT) while the dead one went unheard: both acks
// still land, and nothing more is recovered a further ttl later.
func TestKeepAliveTakesADeadClaimersJobAndLeavesLiveOnesTheirs(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: every KeepAlive ends with ctx
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s := newStore(t, nil)
	m := lanes.NewMinter()
	for _, g := range []string{"a", "b", "c"} {
		_, err := s.Enqueue(ctx, ordered, []lanes.Item{{Group: g, ID: m.New(), Payload: []byte(g)}})
		require.NoError(t, err)
	}
	queues := []string{ordered}
	// live starts claimer's KeepAlive until its returned stop (or the test's end).
	live := func(claimer string, recovered func(int)) (stop func()) {
		kctx, kcancel := context.WithCancel(ctx)
		wg.Go(func() { consumer.KeepAlive(kctx, s, claimer, 0, queues, nil, recovered) })
		return kcancel
	}
	// Registered (a first beat) before it claims.
	claim := func(claimer string) lanes.Job {
		t.Helper()
		require.NoError(t, s.Heartbeat(ctx, claimer, queues...))
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: queues, Lease: time.Hour, Max: 1, Claimer: claimer})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		return c.Jobs[0]
	}

	// Every live claimer sweeps: whichever recovers a lease tells.
	var total atomic.Int64
	first := make(chan int, 1)
	recovered := func(n int) {
		if total.Add(int64(n)) == int64(n) {
			first <- n
		}
	}
	live("survivor", recovered)
	kill := live("dead", recovered)
	dead := claim("dead")
	live("slow", recovered)
	slow := claim("slow")
	freeze := live("frozen", recovered)
	frozen := claim("frozen")

	kill()
	freeze()
	time.Sleep(consumer.DefaultLivenessTTL / 4) // frozen, well under the ttl
	live("frozen", recovered)                   // thawed: it beats again

	select {
	case n := <-first:
		require.Equal(t, 1, n, "the dead claimer's lease alone")
	case <-ctx.Done():
		require.FailNow(t, "the dead claimer's lease was never recovered")
	}
	again, err := s.Claim(ctx, lanes.ClaimRequest{Queues: queues, Lease: time.Hour, Max: 1, Claimer: "survivor"})
	require.NoError(t, err)
	require.Len(t, again.Jobs, 1, "the dead claimer's job is served again, an hour before its lease's end")
	require.Equal(t, dead.ID, again.Jobs[0].ID)
	require.Equal(t, 1, again.Jobs[0].Attempts, "recovered as an expired lease: one attempt counted")
	require.ErrorIs(t, s.Ack(ctx, dead.Lease), lanes.ErrStaleLease, "the dead claimer's late ack")

	time.Sleep(consumer.DefaultLivenessTTL) // the survivor sweeps on while the others beat
	require.Equal(t, int64(1), total.Load(), "no live claimer's lease recovered")
	require.NoError(t, s.Ack(ctx, slow.Lease), "the slow claimer's lease held")
	require.NoError(t, s.Ack(ctx, frozen.Lease), "the briefly frozen claimer's lease held")
	require.NoError(t, s.Ack(ctx, again.Jobs[0].Lease))
}

// slowFirstBeat is the store with its first heartbeat answered late (as on
// a loaded host): StartKeepAlive must still not return before it landed.
type slowFirstBeat struct {
	consumer.Liveness
	once  sync.Once
	delay time.Duration
}

func (b *slowFirstBeat) Heartbeat(ctx context.Context, claimer string, queues ...string) error {
	b.once.Do(func() { time.Sleep(b.delay) })
	return b.Liveness.Heartbeat(ctx, claimer, queues...)
}

// A consumer is known to the sweeps from before its first claim:
// StartKeepAlive returns only once its first beat landed, so a claimer that
// dies right after its first claim (its KeepAlive ended before another
// beat, as with kill -9) still has its lease recovered by another's sweep,
// not left to its hour-long end.
func TestStartKeepAliveRegistersTheClaimerBeforeItsFirstClaim(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, nil)
	_, err := s.Enqueue(ctx, ordered, []lanes.Item{{Group: "a", ID: lanes.NewMinter().New(), Payload: []byte("a")}})
	require.NoError(t, err)
	queues := []string{ordered}

	var wg sync.WaitGroup
	kctx, kill := context.WithCancel(ctx)
	consumer.StartKeepAlive(kctx, &wg, &slowFirstBeat{Liveness: s, delay: 200 * time.Millisecond}, "short-lived", time.Second, queues, nil, nil)
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: queues, Lease: time.Hour, Max: 1, Claimer: "short-lived"})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)
	kill() // dies right after its first claim
	wg.Wait()

	require.Eventually(t, func() bool {
		n, err := s.RecoverDead(ctx, 50*time.Millisecond, queues...)
		require.NoError(t, err)
		return n == 1
	}, 10*time.Second, 20*time.Millisecond, "the short-lived claimer's lease was never recovered")
}

// failingBeats is the store with every heartbeat after the first failing
// (as while its process or host stalls: every call past its deadline).
type failingBeats struct {
	consumer.Liveness
	calls atomic.Int64
}

func (b *failingBeats) Heartbeat(ctx context.Context, claimer string, queues ...string) error {
	if b.calls.Add(1) > 1 {
		return context.DeadlineExceeded
	}
	return b.Liveness.Heartbeat(ctx, claimer, queues...)
}

// A consumer whose beats fail does not sweep: its own last beat is the
// one past the ttl, and a sweep would take back the lease it still works
// (a busy CI run: the sweep after a failed beat recovered the process's
// own two leases, and their broadcast copies went out twice). Its lease
// holds through 5 ttls of failed beats, and its ack lands.
func TestAConsumerWhoseBeatsFailDoesNotTakeItsOwnLeases(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s := newStore(t, nil)
	_, err := s.Enqueue(ctx, ordered, []lanes.Item{{Group: "a", ID: lanes.NewMinter().New(), Payload: []byte("a")}})
	require.NoError(t, err)
	queues := []string{ordered}
	const ttl = 100 * time.Millisecond
	var wg sync.WaitGroup
	kctx, stop := context.WithCancel(ctx)
	var recovered atomic.Int64
	consumer.StartKeepAlive(kctx, &wg, &failingBeats{Liveness: s}, "stalled", ttl, queues, nil, func(n int) { recovered.Add(int64(n)) })
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: queues, Lease: time.Hour, Max: 1, Claimer: "stalled"})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)
	time.Sleep(5 * ttl) // about 50 ticks, every beat failing
	stop()
	wg.Wait()
	require.Zero(t, recovered.Load(), "no sweep took its own lease")
	require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease), "its lease held")
}
