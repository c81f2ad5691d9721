package worker_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/worker"
)

// farTransport puts its process d further from the Bot API each way: it
// holds every request d before sending it and d after its answer.
type farTransport struct{ d time.Duration }

func (f farTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(f.d)
	resp, err := http.DefaultTransport.RoundTrip(r)
	time.Sleep(f.d)
	return resp, err
}

// regGauge is the value of gauge name in reg (0 when absent).
func regGauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// Two worker processes on one store at different distances from the Bot
// API (the emulator at 20 ms; the far process's transport adds 500 ms each
// way), 16 chats x 6 replies at 1/s per chat: the far process settles with
// the near one's floor (the store's, lanes.Store.ShareFloor), not its own
// (over 1 s), so its sends count from no later than they arrived, the near
// process never sends a chat's next message inside the window of the far
// one's, and the emulator answers no 429; every chat gets its replies in
// order. With each process settling with its own floor the same run got
// 5-11 x 429.
func TestFarProcessSettlesWithTheNearFloorSoNoChatIsSentTooEarly(t *testing.T) {
	// Not parallel: the per-chat limit must bind, against the emulator's clock.
	limits := notifier.Limits{GlobalPerSecond: 30, PrivatePerSecond: 1, Slack: notifier.DefaultSlack}
	e := newEnv(t, envOpts{limits: limits, emuLimits: tgemu.ScaledLimits(30, 1, 20), latency: 20 * time.Millisecond})
	const chats, per = 16, 6
	for i := range per {
		for c := 1; c <= chats; c++ {
			e.notify(int64(c), orderedText(c, i), notifier.Reply)
		}
	}
	cfg := e.config()
	cfg.Senders, cfg.MinSenders, cfg.ClaimRate = 32, 4, 30
	c := valkeytest.Shared(t).Client(t)
	store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(e.store.Tag()))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	farCfg := cfg
	farReg := prometheus.NewRegistry()
	farCfg.Registerer = farReg
	farCfg.HTTPClient = &http.Client{Transport: farTransport{500 * time.Millisecond}}
	far, err := worker.New(n, farCfg)
	require.NoError(t, err)
	e.start(cfg)
	testkit.RunInBackground(t, "far worker", 20*time.Second, far.Run)

	e.requireEachChatInOrder(chats, per)
	// No chat sent twice in one window: the emulator refuses the second
	// (an accepted count cannot exceed 1); none refused.
	testkit.Require429s(t, e.emu, 0)
	farOwn := regGauge(t, farReg, "codemojex_worker_rtt_floor_own_seconds")
	farUsed := regGauge(t, farReg, "codemojex_worker_rtt_floor_seconds")
	nearUsed := e.gauge("codemojex_worker_rtt_floor_seconds")
	require.GreaterOrEqual(t, farOwn, 1.0, "the far process's own floor: 2 x 500 ms more")
	require.Positive(t, farUsed, "the far process settled with a floor")
	require.Less(t, farUsed, 0.5, "the far process settled with the near one's floor")
	require.Positive(t, nearUsed)
	require.Less(t, nearUsed, 0.5)
	t.Logf("far process: own floor %.3f s, settled with %.3f s; near process settled with %.3f s", farOwn, farUsed, nearUsed)
}

// A worker process that died stops lowering the others' floor once its
// published floor expires (two floor epochs at most): while a claimer
// publishes 5 ms, a live worker (its own floor about the emulator's 20 ms)
// settles its sends with 5 ms; after the claimer stops, within two epochs
// plus one share period, with its own.
func TestDeadProcessFloorStopsCountingAfterItsExpiry(t *testing.T) {
	t.Parallel()
	const epoch = 200 * time.Millisecond
	e := newEnv(t, envOpts{latency: 20 * time.Millisecond})
	c := valkeytest.Shared(t).Client(t)
	opts := []lanes.Option{lanes.WithTag(e.store.Tag()), lanes.WithFloorEpoch(epoch)}
	store, err := notifier.NewStore(c, notifier.Limits{}, 0, opts...)
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)

	// The "dead" process, alive at first: publishes 5 ms every 50 ms.
	ctx, stopDead := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopDead()
	_, err = store.ShareFloor(ctx, "dead-process", 5*time.Millisecond)
	require.NoError(t, err)
	wg.Go(func() {
		for ctx.Err() == nil {
			_, _ = store.ShareFloor(ctx, "dead-process", 5*time.Millisecond)
			time.Sleep(50 * time.Millisecond)
		}
	})

	w, err := worker.New(n, e.config())
	require.NoError(t, err)
	testkit.RunInBackground(t, "worker", 20*time.Second, w.Run)
	_, err = n.Notify(e.ctx, 1, notifier.Message{Text: "while alive", Class: notifier.Reply})
	require.NoError(t, err)
	e.waitMsgs(1, 1)
	settled := func() bool { return e.gauge("codemojex_worker_rtt_floor_seconds") != 0 } // set once the answer is read
	require.Eventually(t, settled, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 0.005, e.gauge("codemojex_worker_rtt_floor_seconds"), "settled with the other process's floor")

	stopDead()
	wg.Wait()
	time.Sleep(2*epoch + time.Second + 300*time.Millisecond) // expiry, one share period, a margin
	_, err = n.Notify(e.ctx, 1, notifier.Message{Text: "after its expiry", Class: notifier.Reply})
	require.NoError(t, err)
	e.waitMsgs(1, 2)
	require.Eventually(t, func() bool { return e.gauge("codemojex_worker_rtt_floor_seconds") >= 0.02 }, 5*time.Second, 10*time.Millisecond,
		"settled with its own floor again (the emulator's 20 ms at least)")
	used := e.gauge("codemojex_worker_rtt_floor_seconds")
	own := e.gauge("codemojex_worker_rtt_floor_own_seconds")
	require.GreaterOrEqual(t, own, used)
	t.Logf("floor after the expiry %.3f s (own %.3f s)", used, own)
}
