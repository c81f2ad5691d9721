package worker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
)

// The seed's promise: a chat with a deep backlog does not delay the others.
// Chat A has 200 replies queued, then chats B..K get one each; with
// Telegram's limits (30/s overall, 1/s per chat) enforced by the emulator,
// each of B..K is delivered within 2 s while A drains at about 1/s, and the
// emulator never answers 429.
func TestSeedPromiseBacklogDoesNotDelayOthers(t *testing.T) {
	// Not parallel: it measures timing against the emulator's limits, and
	// CPU contention with other tests would eat the 100 ms slack.
	e := newEnv(t, envOpts{limits: notifier.DefaultLimits(), emuLimits: tgemu.DefaultLimits()})
	const chatA = int64(1000)
	for i := range 200 {
		e.notify(chatA, "A "+itoa(i), notifier.Reply)
	}
	_, stop := e.start(e.config())
	e.waitMsgs(chatA, 2) // A is draining

	others := make([]int64, 10) // B..K
	for i := range others {
		others[i] = chatA + 1 + int64(i)
	}
	sentAt := time.Now()
	for _, c := range others {
		e.notify(c, "hello "+itoa(int(c)), notifier.Reply)
	}
	var worst time.Duration
	for _, c := range others {
		m := e.waitMsgs(c, 1)[0]
		worst = max(worst, m.Time.Sub(sentAt))
	}
	require.LessOrEqual(t, worst, 2*time.Second, "slowest of B..K")

	// Let A drain for a few seconds more, then measure its rate.
	time.Sleep(5 * time.Second)
	require.NoError(t, stop())
	msgsA := e.emu.Messages(chatA)
	require.GreaterOrEqual(t, len(msgsA), 4)
	span := msgsA[len(msgsA)-1].Time.Sub(msgsA[0].Time)
	rate := float64(len(msgsA)-1) / span.Seconds()
	for i, m := range msgsA {
		require.Equal(t, "A "+itoa(i), m.Text, "A's order")
	}
	st := e.emu.Stats()
	t.Logf("B..K slowest delivery %v; A sent %d at %.3f msg/s; 429s answered %d; max/s overall %d, per chat %d",
		worst, len(msgsA), rate, st.TooManyRequests, st.MaxPerSecond, st.MaxPerSecondByChat[chatA])
	require.InDelta(t, 1.0, rate, 0.15, "A's drain rate (msg/s)")
	require.Zero(t, st.TooManyRequests, "429s answered by the emulator")
	for _, r := range e.emu.SendRequests() {
		require.True(t, r.Accepted(), "rejected request: %+v", r)
	}
	require.LessOrEqual(t, e.emu.MaxAcceptedChat(chatA, time.Second), 1)
}
