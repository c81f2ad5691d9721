package failuretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// How the failover test takes the bot's primary away.
const (
	// primaryKilled: SIGKILL of the primary; its replica takes over once
	// the other primaries mark it failing (cluster-node-timeout, 2 s) and
	// vote. Replication is asynchronous: a write acknowledged by the dead
	// primary and not yet on the replica is gone.
	primaryKilled = "kill"
	// manualFailover: CLUSTER FAILOVER on the replica: the primary stops
	// taking writes, the replica catches up and takes over; nothing
	// acknowledged is lost.
	manualFailover = "manual"
)

// testPrimaryFailover: the whole bot (BOT_ROLE=all) on a three-primary
// cluster with one replica each, and in the middle of a burst the primary
// holding the bot's keys (one hash tag: one slot) is replaced by its
// replica (how: primaryKilled or manualFailover). The bot's client follows
// the new topology: every message arrives, in order per chat, none dead,
// duplicates at most the sends in flight at the failover (jobs under a
// lease before it, or on the promoted replica after it), and the bot still
// answers a /start sent after it.
func testPrimaryFailover(t *testing.T, bin, how string) {
	if !valkeytest.ClusterMode() {
		t.Skip("needs a cluster with replicas: VALKEYTEST_MODE=cluster (make test runs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{})
	emu := newEmulator(t)
	p := newProducer(t, srv)
	want := p.burst(ctx, t, 6001, 10, 30) // 300 messages, about 6 s at the limit
	b := startBot(t, bin, "bot", "all", srv, emu)
	waitDelivered(ctx, t, emu, 80)

	var primary, replica *valkeyserver.Server
	var err error
	require.NoError(t, poll(ctx, func() bool {
		primary, replica, err = srv.Owner(ctx, p.c, inboxOffset)
		return err == nil
	}), "the primary of the bot's slot and its replica: %v", err)
	rc := valkeytest.NodeClient(t, replica)
	// From now on Telegram answers each message 500 ms after taking it, so
	// the failover lands while sends are in flight: delivered, not yet
	// acked (their acks meet the old primary or none).
	emu.InjectFault(tgemu.Delay(500 * time.Millisecond).For("sendMessage").Processed().Times(-1))
	time.Sleep(300 * time.Millisecond)
	inFlight, err := p.inFlight(ctx)
	require.NoError(t, err)
	t0 := time.Now()
	switch how {
	case primaryKilled:
		primary.Kill()
	case manualFailover:
		require.NoError(t, rc.Do(ctx, rc.B().Arbitrary("CLUSTER", "FAILOVER").Build()).Error())
	default:
		t.Fatalf("failover %q: want %q or %q", how, primaryKilled, manualFailover)
	}
	emu.ClearFaults()
	atFailover := len(emu.AllMessages())

	// The replica is promoted: its own view names it the slot's primary.
	require.NoError(t, poll(ctx, func() bool {
		now, _, err := srv.Owner(ctx, rc, inboxOffset)
		return (err == nil || errors.Is(err, valkeyserver.ErrNoReplica)) && now != nil && now.Addr == replica.Addr
	}), "replica %s promoted", replica.Addr)
	promoted := time.Since(t0)
	atPromotion := len(emu.AllMessages())
	// What the promoted replica holds under a lease may be sent again.
	require.NoError(t, poll(ctx, func() bool {
		n, err := p.inFlight(ctx)
		inFlight = max(inFlight, n)
		return err == nil
	}), "the producer's client follows the new primary")
	require.NoError(t, poll(ctx, func() bool { return len(emu.AllMessages()) > atPromotion }), "delivery resumes")
	resumed := time.Since(t0)

	deliveredAll(ctx, t, emu, want)
	dead := p.settled(ctx, t)
	require.NoError(t, startCommand(ctx, emu, 6500), "the bot answers a /start after the failover")
	tl := count(emu, want)
	t.Logf("failover (%s) of primary %s to replica %s after %d of %d delivered, %d jobs in flight: promoted in %v, delivery resumed %v after it began; received %d, %+v, dead letters %d",
		how, primary.Addr, replica.Addr, atFailover, tl.Expected, inFlight, promoted.Round(time.Millisecond), resumed.Round(time.Millisecond),
		tl.Delivered+tl.Duplicates+tl.Unexpected, tl, dead)
	require.Zero(t, tl.Lost, "lost")
	require.Zero(t, dead, "dead letters")
	require.LessOrEqual(t, tl.Duplicates, inFlight, "duplicates are at most the sends in flight at the failover")
	require.Zero(t, tl.Unexpected, "messages nobody enqueued reached a chat")
	require.Zero(t, tl.OutOfOrder, "per-chat order")
	require.False(t, b.Exited(), "the bot stays up: %v", b.ExitErr())
}
