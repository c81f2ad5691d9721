package worker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

// paidEnv is a worker env with a paid budget (400/s) beside bulk and
// replies (100/s each), the emulator's paid window 1,000/s.
func paidEnv(t *testing.T) *env {
	t.Helper()
	return newEnv(t, envOpts{
		limits: notifier.Limits{GlobalPerSecond: 100, ReplyPerSecond: 100, PaidPerSecond: 400, Slack: notifier.DefaultSlack},
		emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: 100, Per: time.Second}, Reply: tgemu.Rate{Messages: 100, Per: time.Second},
			Paid: tgemu.Rate{Messages: 1000, Per: time.Second}, Replies: tgemu.RepliesApart},
	})
}

// paidAudience is n chats from 5000 up.
func paidAudience(n int) []int64 {
	out := make([]int64, 0, n)
	for c := int64(5000); c < 5000+int64(n); c++ {
		out = append(out, c)
	}
	return out
}

// A paid broadcast whose Stars run out: only its copies are sent with
// allow_paid_broadcast (a free broadcast and a reply running beside it are
// not); the emulator's cannot-pay answer halts the paid queue with the
// copies not yet sent kept on it (none lost, none sent while halted, the
// paid and Stars metrics count what was paid); then the admin's choice
// either moves the rest to the free queue, delivered without the parameter
// (every chat gets its copy once), or stops the broadcast like a free one
// (the rest cancelled, the halt lifted).
func TestPaidBroadcastCannotPayHaltsThenContinuesFreeOrStops(t *testing.T) {
	for _, choice := range []string{"continue free", "stop"} {
		t.Run(choice, func(t *testing.T) {
			const chats, balance = 80, 30 // 3 Stars: 30 paid copies
			e := paidEnv(t)
			e.emu.SetStarBalance(balance)
			audience, msg := paidAudience(chats), notifier.Message{Text: "paid news", Paid: true}
			bc, err := e.n.Broadcast(e.ctx, audience, msg)
			require.NoError(t, err)
			free, err := e.n.Broadcast(e.ctx, []int64{7001, 7002, 7003}, notifier.Message{Text: "free news"})
			require.NoError(t, err)
			_, err = e.n.Notify(e.ctx, 42, notifier.Message{Text: "a reply", Class: notifier.Reply})
			require.NoError(t, err)
			e.start(e.config())

			var p notifier.Progress
			require.Eventually(t, func() bool {
				p, err = e.n.Progress(e.ctx, bc)
				require.NoError(t, err)
				fp, err := e.n.Progress(e.ctx, free)
				require.NoError(t, err)
				return p.Halted && fp.Done() && len(e.emu.Messages(42)) == 1
			}, 20*time.Second, 10*time.Millisecond)
			halted, err := e.n.PaidHalted(e.ctx)
			require.NoError(t, err)
			require.Equal(t, bc, halted)
			time.Sleep(300 * time.Millisecond) // a halted queue sends nothing more
			p, err = e.n.Progress(e.ctx, bc)
			require.NoError(t, err)
			require.True(t, p.Paid)
			require.Equal(t, balance, p.Sent, "as many copies as the balance pays for")
			require.Equal(t, balance, p.PaidSent)
			require.Equal(t, balance, p.StarTenths())
			require.Equal(t, chats-balance, p.Remaining, "the rest is kept")
			require.Equal(t, balance, e.emu.PaidSent())
			require.Zero(t, e.emu.StarBalance())
			st, err := e.store.Inspector().Stats(e.ctx, tgjob.QueuePaid, 0)
			require.NoError(t, err)
			require.Equal(t, chats-balance, st.Pending, "the unsent copies wait on the paid queue")
			require.Empty(t, e.dead(tgjob.QueuePaid), "nothing dead-lettered")
			e.requireMetric(balance, "codemojex_worker_paid_sent_total", "", "")
			stars := 0.0
			mfs, err := e.reg.Gather()
			require.NoError(t, err)
			for _, mf := range mfs {
				if mf.GetName() == "codemojex_worker_stars_spent_total" {
					stars = mf.GetMetric()[0].GetCounter().GetValue()
				}
			}
			require.Equal(t, float64(balance)/10, stars, "0.1 Star per paid copy, exact")

			switch choice {
			case "continue free":
				var moved int
				require.Eventually(t, func() bool {
					moved, err = e.n.ContinueFree(e.ctx, bc, msg)
					if errors.Is(err, notifier.ErrPaidInFlight) {
						return false
					}
					require.NoError(t, err)
					return true
				}, 5*time.Second, 20*time.Millisecond)
				require.Equal(t, chats-balance, moved)
				require.Eventually(t, func() bool {
					p, err = e.n.Progress(e.ctx, bc)
					require.NoError(t, err)
					return p.Done()
				}, 20*time.Second, 10*time.Millisecond)
				require.Equal(t, chats, p.Sent)
				require.Equal(t, balance, p.PaidSent, "the free rest costs nothing")
				require.True(t, p.Free)
				require.Equal(t, chats-balance, p.Moved)
				for _, c := range audience {
					require.Equal(t, 1, e.copiesOf(c, "paid news"), "chat %d gets its copy once", c)
				}
			case "stop":
				p, err = e.n.StopBroadcast(e.ctx, bc)
				require.NoError(t, err)
				require.Equal(t, chats-balance, p.Cancelled)
				require.Equal(t, balance, p.Sent)
				require.Zero(t, p.Remaining)
				st, err := e.store.Inspector().Stats(e.ctx, tgjob.QueuePaid, 0)
				require.NoError(t, err)
				require.Zero(t, st.Pending+st.InFlight, "the paid queue is empty")
				time.Sleep(200 * time.Millisecond)
				sent := 0
				for _, c := range audience {
					sent += e.copiesOf(c, "paid news")
				}
				require.Equal(t, balance, sent, "nothing sent after the stop")
			}
			halted, err = e.n.PaidHalted(e.ctx)
			require.NoError(t, err)
			require.Empty(t, halted, "the halt is lifted")
			require.Equal(t, balance, e.emu.PaidSent(), "no paid send after the halt")

			// Only paid copies carry the parameter: every request with it
			// is a paid-queue copy, and every accepted one was charged.
			withParam, accepted := 0, 0
			for _, r := range e.emu.SendRequests() {
				if r.Params["allow_paid_broadcast"] == "true" {
					withParam++
					require.Equal(t, "paid news", r.Params["text"])
					if r.Accepted() {
						accepted++
					}
				}
				if r.Params["text"] != "paid news" {
					require.NotEqual(t, "true", r.Params["allow_paid_broadcast"], "%q is not a paid copy", r.Params["text"])
				}
			}
			require.Equal(t, balance, accepted)
			require.Greater(t, withParam, balance, "the refused paid sends carried it too")
			if choice == "continue free" {
				require.Equal(t, withParam+chats-balance+3+1, len(e.emu.SendRequests()), "the moved copies went without it")
			}
		})
	}
}

// A paid lease lost on a halted queue is taken back: a copy claimed from
// the paid queue by a claimer that is gone without a heartbeat (its answer
// lost to a Valkey failover, say: lanes RecoverDead cannot find it) stays
// in flight until its lease expires, and the paid queue, halted by another
// process, is still kept by the worker's claims (paused in lanes, not
// skipped), so the lease's expiry puts the copy back on its lane: the paid
// copies in flight fall to 0, ▶️ Continue free moves every unsent copy,
// and every chat gets its copy once, none of them paid. Before, no worker
// claimed the halted queue and the copy stayed in flight for good (chaos
// row 48), ContinueFree refusing with ErrPaidInFlight.
func TestALeaseLostOnAHaltedPaidQueueIsTakenBack(t *testing.T) {
	const chats = 5
	e := paidEnv(t)
	audience, msg := paidAudience(chats), notifier.Message{Text: "paid news", Paid: true}
	bc, err := e.n.Broadcast(e.ctx, audience, msg)
	require.NoError(t, err)
	lost, err := e.store.Claim(e.ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueuePaid}, Lease: 500 * time.Millisecond, Max: 1})
	require.NoError(t, err)
	require.Len(t, lost.Jobs, 1, "one paid copy claimed by a claimer that is gone")
	halted, err := e.n.HaltPaid(e.ctx, bc)
	require.NoError(t, err)
	require.True(t, halted, "halted by another process")
	e.start(e.config())

	require.Eventually(t, func() bool {
		fl, err := e.n.PaidInFlight(e.ctx)
		require.NoError(t, err)
		return fl == 0
	}, 10*time.Second, 20*time.Millisecond, "the lost lease is taken back while the queue is halted")
	paused, err := e.store.Inspector().PausedQueues(e.ctx)
	require.NoError(t, err)
	require.Equal(t, worker.PaidHaltWhy+bc, paused[tgjob.QueuePaid], "paused in lanes while halted")
	moved, err := e.n.ContinueFree(e.ctx, bc, msg)
	require.NoError(t, err)
	require.Equal(t, chats, moved)
	require.Eventually(t, func() bool {
		p, err := e.n.Progress(e.ctx, bc)
		require.NoError(t, err)
		return p.Done()
	}, 20*time.Second, 10*time.Millisecond)
	for _, c := range audience {
		require.Equal(t, 1, e.copiesOf(c, "paid news"), "chat %d gets its copy once", c)
	}
	require.Zero(t, e.emu.PaidSent(), "nothing sent paid while halted")
	require.Eventually(t, func() bool {
		paused, err := e.store.Inspector().PausedQueues(e.ctx)
		require.NoError(t, err)
		_, ok := paused[tgjob.QueuePaid]
		return !ok
	}, 5*time.Second, 20*time.Millisecond, "the pause is lifted with the halt")
}

// Paid copies in flight when their broadcast is stopped, which the bot then
// cannot pay for (its Stars balance is 0), halt nothing and are never sent
// again: the stop already lifted the last halt, so a halt now would stop
// the paid queue with nobody to lift it (notifier.HaltPaid refuses a
// stopped broadcast), and each copy given back is dropped by the store
// (marked by the stop's lanes Cancel), counted cancelled: the progress
// ends at 0 sent, every copy cancelled, and the emulator saw each copy
// once.
func TestPaidCopiesInFlightAtTheStopThatCannotBePaidForHaltNothingAndAreNotSentAgain(t *testing.T) {
	const chats, latency = 4, 600 * time.Millisecond
	e := newEnv(t, envOpts{
		limits: notifier.Limits{GlobalPerSecond: 100, ReplyPerSecond: 100, PaidPerSecond: 400, Slack: notifier.DefaultSlack},
		emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: 100, Per: time.Second}, Reply: tgemu.Rate{Messages: 100, Per: time.Second},
			Paid: tgemu.Rate{Messages: 1000, Per: time.Second}, Replies: tgemu.RepliesApart},
		latency: latency,
	})
	e.emu.SetStarBalance(0)
	bc, err := e.n.Broadcast(e.ctx, paidAudience(chats), notifier.Message{Text: "paid news", Paid: true})
	require.NoError(t, err)
	e.start(e.config())
	require.Eventually(t, func() bool {
		fl, err := e.n.PaidInFlight(e.ctx)
		require.NoError(t, err)
		return fl == chats
	}, 5*time.Second, 5*time.Millisecond, "every copy in flight, its answer on its way")
	p, err := e.n.StopBroadcast(e.ctx, bc)
	require.NoError(t, err)
	require.Equal(t, chats, p.Remaining, "stopped with every copy in flight")

	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, bc)
		require.NoError(t, err)
		return p.Done()
	}, 10*time.Second, 10*time.Millisecond, "the copies in flight settle")
	time.Sleep(3 * latency) // a copy given back would be sent again by now
	p, err = e.n.Progress(e.ctx, bc)
	require.NoError(t, err)
	require.Zero(t, p.Sent)
	require.Equal(t, chats, p.Cancelled)
	require.False(t, p.Halted)
	halted, err := e.n.PaidHalted(e.ctx)
	require.NoError(t, err)
	require.Empty(t, halted, "the paid queue is not halted")
	paused, err := e.store.Inspector().PausedQueues(e.ctx)
	require.NoError(t, err)
	require.NotContains(t, paused, tgjob.QueuePaid, "nor paused in lanes")
	st, err := e.store.Inspector().Stats(e.ctx, tgjob.QueuePaid, 0)
	require.NoError(t, err)
	require.Zero(t, st.Pending+st.InFlight, "nothing of it is left on the paid queue")
	e.requireMetric(0, "codemojex_worker_paid_halts_total", "", "")
	sends := 0
	for _, r := range e.emu.SendRequests() {
		if r.Params["text"] == "paid news" {
			sends++
		}
	}
	require.Equal(t, chats, sends, "each copy was tried once, before the stop, and never again")
}
