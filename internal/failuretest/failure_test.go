package failuretest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/notifier"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// TestFailures builds cmd/bot once and runs every failure scenario against
// it, each with its own Valkey and emulator: a standalone server, or under
// VALKEYTEST_MODE=cluster (make test runs both) a cluster of three
// primaries with one replica each, which adds the failover scenarios.
func TestFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("failure tests run the real bot processes")
	}
	bin := testkit.BuildBot(t)
	t.Run("WorkerKilledMidBurst", func(t *testing.T) { testWorkerKilled(t, bin) })
	t.Run("ValkeyRestartedMidBurst", func(t *testing.T) { testValkeyRestart(t, bin) })
	t.Run("ScriptFlushMidBurst", func(t *testing.T) { testScriptFlush(t, bin) })
	t.Run("TwoWorkersOneGlobalLimit", func(t *testing.T) { testTwoWorkers(t, bin) })
	t.Run("ValkeyOutage", func(t *testing.T) { testOutage(t, bin) })
	t.Run("BotKilledMidHandling", func(t *testing.T) { testKilledMidHandling(t, bin, false) })
	t.Run("HandlerKilledMidHandling", func(t *testing.T) { testKilledMidHandling(t, bin, true) })
	t.Run("BroadcastStarterAndSenderKilled", func(t *testing.T) { testBroadcastKilled(t, bin) })
	// A cluster only (VALKEYTEST_MODE=cluster): a replica takes over.
	t.Run("PrimaryKilledMidBurst", func(t *testing.T) { testPrimaryFailover(t, bin, primaryKilled) })
	t.Run("PrimaryFailedOverMidBurst", func(t *testing.T) { testPrimaryFailover(t, bin, manualFailover) })
}

// testWorkerKilled: SIGKILL the only worker process in the middle of a
// burst, start another: nothing is lost, the duplicates are at most the
// jobs that were in flight (under a lease) when it died, and /metrics
// counts those leases recovered.
func testWorkerKilled(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{})
	emu := newEmulator(t)
	p := newProducer(t, srv)
	want := p.burst(ctx, t, 1001, 10, 20) // 200 messages
	w1 := startBot(t, bin, "worker-1", "worker", srv, emu, longLeases...)
	waitDelivered(ctx, t, emu, 70)
	// From now on Telegram answers each message 500 ms after taking it, so
	// the kill lands while sends are in flight: delivered, not yet acked.
	emu.InjectFault(tgemu.Delay(500 * time.Millisecond).For("sendMessage").Processed().Times(-1))
	time.Sleep(300 * time.Millisecond)
	inFlight, err := p.inFlight(ctx)
	require.NoError(t, err)
	w1.Kill()
	emu.ClearFaults()
	atKill := count(emu, want).Delivered
	// The dead worker's leases: what the next one recovers.
	held, err := p.inFlight(ctx)
	require.NoError(t, err)
	inFlight = max(inFlight, held)
	w2 := startBot(t, bin, "worker-2", "worker", srv, emu, longLeases...)
	deliveredAll(ctx, t, emu, want)
	dead := p.settled(ctx, t)
	tl := count(emu, want)
	t.Logf("kill -9 after %d of %d delivered, %d jobs in flight at the kill; after restart: %+v, dead letters %d",
		atKill, tl.Expected, inFlight, tl, dead)
	require.Zero(t, tl.Lost, "lost")
	require.Zero(t, dead, "dead letters")
	require.LessOrEqual(t, tl.Duplicates, inFlight, "duplicates are at most the jobs in flight at the kill")
	require.Zero(t, tl.Unexpected)
	require.Zero(t, tl.OutOfOrder, "per-chat order")
	require.False(t, w2.Exited(), "the new worker is still running")
	// /metrics counts each lease the dead worker held as recovered once
	// (codemojex_queue_leases_recovered_total, all queues, from Valkey).
	recovered, err := w2.metricSum(ctx, "codemojex_queue_leases_recovered_total")
	require.NoError(t, err)
	require.Equal(t, float64(held), recovered, "leases recovered: those the killed worker held")
}

// testValkeyRestart: Valkey (append-only, fsync always) restarted in the
// middle of a burst: the worker stays up, reconnects, nothing is lost.
func testValkeyRestart(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{AppendOnly: true})
	emu := newEmulator(t)
	p := newProducer(t, srv)
	want := p.burst(ctx, t, 2001, 10, 20)
	w := startBot(t, bin, "worker", "worker", srv, emu)
	waitDelivered(ctx, t, emu, 70)
	inFlight, err := p.inFlight(ctx)
	require.NoError(t, err)
	t0 := time.Now()
	srv.Restart(t)
	t.Logf("Valkey restarted in %v with %d jobs in flight", time.Since(t0).Round(time.Millisecond), inFlight)
	deliveredAll(ctx, t, emu, want)
	dead := p.settled(ctx, t)
	tl := count(emu, want)
	t.Logf("after the restart: %+v, dead letters %d", tl, dead)
	require.False(t, w.Exited(), "the worker stays up: %v", w.ExitErr())
	require.Zero(t, tl.Lost, "lost")
	require.Zero(t, dead, "dead letters")
	require.LessOrEqual(t, tl.Duplicates, senders, "duplicates are at most the sends in flight")
	require.Zero(t, tl.Unexpected)
	require.Zero(t, tl.OutOfOrder, "per-chat order")
}

// testScriptFlush: SCRIPT FLUSH three times during a burst: scripts are
// reloaded transparently; nothing lost, nothing duplicated, nothing dead,
// no error text reaches a chat.
func testScriptFlush(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{})
	emu := newEmulator(t)
	p := newProducer(t, srv)
	want := p.burst(ctx, t, 3001, 10, 20)
	w := startBot(t, bin, "worker", "worker", srv, emu)
	for _, n := range []int{40, 80, 120} {
		waitDelivered(ctx, t, emu, n)
		// Every node's scripts (a cluster's too: any of them may run one).
		for addr, node := range p.c.Nodes() {
			require.NoError(t, node.Do(ctx, node.B().ScriptFlush().Build()).Error(), "SCRIPT FLUSH on %s", addr)
		}
	}
	// Enqueue more after the last flush (the producer's scripts are gone too).
	more := p.burst(ctx, t, 3101, 5, 4)
	deliveredAll(ctx, t, emu, want)
	deliveredAll(ctx, t, emu, more)
	dead := p.settled(ctx, t)
	tl, tm := count(emu, want), count(emu, more)
	t.Logf("3 SCRIPT FLUSHes during the burst: %+v; enqueued after: %+v; dead letters %d", tl, tm, dead)
	require.Zero(t, tl.Lost+tm.Lost, "lost")
	require.Zero(t, tl.Duplicates+tm.Duplicates, "duplicates")
	require.Zero(t, tl.Unexpected+tm.Unexpected, "messages nobody enqueued (errors) reached a chat")
	require.Zero(t, dead, "dead letters")
	require.Zero(t, tl.OutOfOrder+tm.OutOfOrder, "per-chat order")
	require.NotContains(t, w.Out.String(), "NOSCRIPT", "NOSCRIPT never surfaces")
	require.False(t, w.Exited())
}

// testTwoWorkers: two worker processes share one global limit: the
// emulator's busiest one-second window stays within it, it answers no 429,
// and both processes sent. (lanes counts a send against the global budget
// from its claim until one window after it settles, so the claim-to-arrival
// jitter of either process cannot crowd a Telegram window.)
func testTwoWorkers(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{})
	emu := newEmulator(t)
	p := newProducer(t, srv)
	want := p.burst(ctx, t, 4001, 50, 5) // 250 messages, about 5 s at the limit
	t0 := time.Now()
	w1 := startBot(t, bin, "worker-1", "worker", srv, emu)
	w2 := startBot(t, bin, "worker-2", "worker", srv, emu, longLeases...)
	deliveredAll(ctx, t, emu, want)
	took := time.Since(t0)
	p.settled(ctx, t)
	st := emu.Stats()
	s1, err1 := w1.sent(ctx)
	s2, err2 := w2.sent(ctx)
	require.NoError(t, err1)
	require.NoError(t, err2)
	tl := count(emu, want)
	t.Logf("two workers, global limit %d/s: %d messages in %v; emulator's busiest 1 s: %d; 429s: %d; sent by worker 1: %d, worker 2: %d; %+v",
		globalRate, tl.Delivered, took.Round(time.Millisecond), emu.MaxAccepted(time.Second), st.TooManyRequests, s1, s2, tl)
	// Never over the global limit: the emulator refuses a send over it (the
	// busiest second cannot show more), so none refused.
	testkit.Require429s(t, emu, 0)
	require.Zero(t, tl.Lost)
	require.Zero(t, tl.Duplicates)
	require.Positive(t, s1, "worker 1 sent")
	require.Positive(t, s2, "worker 2 sent")
}

// testOutage: the whole bot (BOT_ROLE=all) through a Valkey outage of a
// few seconds (SIGKILL, then restart from the append-only file): enqueues
// during it fail with an error, the bot does not exit, answers a /start
// sent during the outage and one sent after it.
func testOutage(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{AppendOnly: true})
	emu := newEmulator(t)
	p := newProducer(t, srv)
	b := startBot(t, bin, "bot", "all", srv, emu)
	require.NoError(t, startCommand(ctx, emu, 5001), "the bot answers before the outage")

	srv.Kill()
	down := time.Now()
	ectx, ecancel := context.WithTimeout(ctx, 3*time.Second)
	_, err := p.n.Notify(ectx, 5002, notifier.Message{Text: "during the outage", Class: notifier.Notification})
	ecancel()
	require.Error(t, err, "an enqueue during the outage fails")
	t.Logf("enqueue during the outage failed after %v: %v", time.Since(down).Round(time.Millisecond), err)
	requireClearOutageError(t, err, emu.Token(), 5002)
	during := len(emu.Messages(5003))
	_, err = emu.InjectMessage(tgemuText(5003, "/start"))
	require.NoError(t, err)
	time.Sleep(3*time.Second - time.Since(down))
	require.False(t, b.Exited(), "the bot is still running during the outage: %v", b.ExitErr())

	srv.Restart(t)
	up := time.Now()
	t.Logf("Valkey was down %v", up.Sub(down).Round(time.Millisecond))
	require.NoError(t, waitWelcome(ctx, emu, 5003, during), "the /start sent during the outage is answered")
	t.Logf("the /start sent during the outage was answered %v after Valkey came back", time.Since(up).Round(time.Millisecond))
	t1 := time.Now()
	require.NoError(t, startCommand(ctx, emu, 5004), "the bot answers after the outage")
	t.Logf("a /start sent after the outage was answered in %v", time.Since(t1).Round(time.Millisecond))
	_, err = p.n.Notify(ctx, 5002, notifier.Message{Text: "after the outage", Class: notifier.Notification})
	require.NoError(t, err, "enqueues work again")
	_, err = emu.WaitForMessages(ctx, 5002, 1)
	require.NoError(t, err)
	require.False(t, b.Exited(), "the bot did not exit: %v", b.ExitErr())
	testkit.RequireNoToken(t, b.Out.String(), emu.Token(), "the bot's log")
}
