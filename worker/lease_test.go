package worker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A send slower than the lease: the sender renews the lease (Extend every
// Lease/3) while Telegram takes its time, so a second worker on the same
// store never re-claims the job. Without the renewal the lease would lapse
// after 300 ms, the other worker would claim the job again and send it a
// second time (undelayed), and the chat would get it twice.
func TestSlowSendRenewsLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const x = int64(3003)
	const lease, delay = 300 * time.Millisecond, time.Second
	e.emu.InjectFault(tgemu.Delay(delay).For("sendMessage").ForChat(x))
	e.notify(x, "slow", notifier.Reply)
	e.notify(x, "next", notifier.Reply)
	e.notify(x+1, "other chat", notifier.Reply)
	start := time.Now()
	for range 2 {
		cfg := e.config()
		cfg.Lease = lease
		cfg.SendTimeout = 3 * delay
		cfg.Registerer = e.reg // shared: collectors are reused
		e.start(cfg)
	}
	e.waitMsgs(x+1, 1)
	e.waitMsgs(x, 2)
	// Past the slow send's end, and well past a lapsed lease's reclaim and
	// a second (undelayed) send.
	time.Sleep(time.Until(start.Add(delay + 2*lease)))
	require.Equal(t, []string{"slow", "next"}, texts(e.emu.Messages(x)), "each delivered once, in order")
	var reqs []tgemu.Request
	for _, r := range e.emu.SendRequests() {
		if r.ChatID == x {
			reqs = append(reqs, r)
		}
	}
	require.Len(t, reqs, 2, "one sendMessage per job: the slow one was not re-claimed")
	for _, r := range reqs {
		require.True(t, r.Accepted())
		if r.Params["text"] == "slow" {
			require.Equal(t, tgemu.FaultDelay, r.Fault, "the slow send was delayed")
		}
	}
	require.Empty(t, e.dead(tgjob.QueueReply))
	require.Empty(t, e.dead(tgjob.QueueNotify))
	pending, inflight := e.pending()
	require.Zero(t, pending)
	require.Zero(t, inflight)
	logs := e.logs.String()
	require.NotContains(t, logs, "lease extend failed")
	require.NotContains(t, logs, "ack failed after delivery")
}
