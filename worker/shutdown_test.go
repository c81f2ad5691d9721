package worker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// pending counts jobs still in the lanes (pending or in flight) of both
// queues.
func (e *env) pending() (pending, inflight int) {
	e.t.Helper()
	for _, q := range tgjob.Queues() {
		st, err := e.store.Stats(e.ctx, q, 0)
		require.NoError(e.t, err)
		pending += st.Pending + st.Delayed
		inflight += st.InFlight
	}
	return pending, inflight
}

// Shutdown mid-burst: every job is either delivered (and acked) or still in
// the lanes; a second worker then delivers the rest, each exactly once and
// in order.
func TestShutdownMidBurstLosesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const chats, per = 30, 10
	e.emu.InjectFault(tgemu.Delay(20 * time.Millisecond).For("sendMessage").Times(-1))
	for i := range per {
		for c := 1; c <= chats; c++ {
			e.notify(int64(c), fmt.Sprintf("%d-%d", c, i), notifier.Notification)
		}
	}
	_, stop := e.start(e.config())
	_, err := e.emu.WaitForTotalMessages(e.ctx, 80)
	require.NoError(t, err)
	require.NoError(t, stop())

	delivered := e.emu.Stats().Sent
	pending, inflight := e.pending()
	t.Logf("at shutdown: %d delivered, %d still queued, %d in flight", delivered, pending, inflight)
	require.Zero(t, inflight, "every lease settled")
	require.Equal(t, chats*per, delivered+pending, "nothing lost")
	require.Less(t, delivered, chats*per, "stopped mid-burst")

	e.emu.ClearFaults()
	e.start(e.config())
	for c := 1; c <= chats; c++ {
		msgs := e.waitMsgs(int64(c), per)
		want := make([]string, per)
		for i := range want {
			want[i] = fmt.Sprintf("%d-%d", c, i)
		}
		require.Equal(t, want, texts(msgs), "chat %d: once each, in order", c)
	}
}

// A send still running when ShutdownGrace ends is cut and its job released,
// not lost nor counted as an attempt.
func TestShutdownCutsSlowSendAndReleases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.emu.InjectFault(tgemu.Delay(10 * time.Second).ForChat(7))
	e.notify(7, "slow", notifier.Reply)
	cfg := e.config()
	cfg.SendTimeout = 20 * time.Second
	cfg.ShutdownGrace = 200 * time.Millisecond
	_, stop := e.start(cfg)
	require.Eventually(t, func() bool { _, inf := e.pending(); return inf == 1 }, 5*time.Second, 5*time.Millisecond)
	t0 := time.Now()
	require.NoError(t, stop())
	require.Less(t, time.Since(t0), 2*time.Second)
	pending, inflight := e.pending()
	require.Equal(t, 1, pending)
	require.Zero(t, inflight)
	require.Empty(t, e.emu.Messages(7))
	e.start(e.config())
	require.Equal(t, "slow", e.waitMsgs(7, 1)[0].Text)
}
