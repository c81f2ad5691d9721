package worker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A broadcast copy delivered while its lease was lost is counted sent,
// not cancelled (chaos seed 29, rows 87-88: Valkey stalled longer than the
// lease, a claim took the copy back onto its lane while Telegram was
// delivering it, its ack answered ErrStaleLease, and the Stop's Cancel
// then removed it and counted it cancelled: progress said one fewer sent
// than the chats that got a copy). The worker settles what it knows
// (lanes Store.AckLost): the copy leaves its lane, is never sent again,
// and the Stop that follows finds nothing to cancel. The queue is paused
// while the lease is lost, so no claim takes the copy meanwhile (the paid
// queue was halted in the chaos run).
func TestACopyDeliveredWhileItsLeaseWasLostIsCountedSentNotCancelled(t *testing.T) {
	t.Parallel()
	tag := valkeytest.Namespace(t)
	e := newEnv(t, envOpts{storeOpts: []lanes.Option{lanes.WithTag(tag)}})
	const chat = int64(2729)
	const delay = 2 * time.Second
	e.emu.InjectFault(tgemu.Delay(delay).For("sendMessage").ForChat(chat))
	bc, err := e.n.Broadcast(e.ctx, []int64{chat}, notifier.Message{Text: "news"})
	require.NoError(t, err)
	cfg := e.config()
	cfg.SendTimeout = 3 * delay
	e.start(cfg)

	leases := "{" + tag + "}:q:" + tgjob.QueueNotify + ":leases"
	var id string
	require.Eventually(t, func() bool {
		ids, err := e.c.Do(e.ctx, e.c.B().Zrange().Key(leases).Min("0").Max("-1").Build()).AsStrSlice()
		require.NoError(t, err)
		if len(ids) == 1 {
			id = ids[0]
		}
		return id != ""
	}, 5*time.Second, 5*time.Millisecond, "the copy in flight: its send is held by Telegram for the delay")

	// The lease is lost: its deadline passes and a claim's maintenance
	// takes the copy back onto its lane (one of the paused queue: nothing
	// is handed out).
	_, err = e.store.Inspector().PauseQueue(e.ctx, tgjob.QueueNotify, "test: the lease is lost")
	require.NoError(t, err)
	require.NoError(t, e.c.Do(e.ctx, e.c.B().Zadd().Key(leases).Xx().ScoreMember().ScoreMember(1, id).Build()).Error())
	require.NoError(t, e.c.Do(e.ctx, e.c.B().Set().Key("{"+tag+"}:q:"+tgjob.QueueNotify+":due").Value("1").Build()).Error())
	c, err := e.store.Claim(e.ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueNotify}, Lease: time.Hour, Max: 1})
	require.NoError(t, err)
	require.Empty(t, c.Jobs)
	pending, inflight := e.pending()
	require.Equal(t, [2]int{1, 0}, [2]int{pending, inflight}, "the copy waits on its lane again")

	e.waitMsgs(chat, 1)
	require.Eventually(t, func() bool {
		logs := e.logs.String()
		return strings.Contains(logs, "delivered under a lost lease") || strings.Contains(logs, "ack failed after delivery")
	}, 10*time.Second, 10*time.Millisecond, "the delivered copy's ack answered")
	pending, inflight = e.pending()
	require.Zero(t, pending+inflight, "settled as delivered: not on its lane")
	// The admin stops the broadcast: its Cancel finds nothing to cancel.
	p, err := e.n.StopBroadcast(e.ctx, bc)
	require.NoError(t, err)
	_, err = e.store.Inspector().ResumeQueue(e.ctx, tgjob.QueueNotify)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, bc)
		require.NoError(t, err)
		return p.Done()
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, p.Sent, "counted sent")
	require.Zero(t, p.Cancelled, "not cancelled")
	time.Sleep(300 * time.Millisecond) // a copy left on its lane would be sent again by now
	sends := 0
	for _, r := range e.emu.SendRequests() {
		if strings.Contains(r.Params["text"], "news") {
			sends++
		}
	}
	require.Equal(t, 1, sends, "sent once")
	require.Equal(t, 1, e.copiesOf(chat, "news"), "the chat got its copy once")
}
