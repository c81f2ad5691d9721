package worker_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/worker"
)

// The budgets of twoBudgets (per 1 s): bulk (notifier.Limits.GlobalPerSecond),
// replies (ReplyPerSecond), each private chat (PrivatePerSecond).
const budgetBulk, budgetReplies, budgetPerChat = 10, 20, 5

// Two budgets (notifier.Limits.ReplyPerSecond): a broadcast to 300 chats
// fills the bulk budget (10/s, so it lasts at least 29 s) while replies
// (with reply_to, so the emulator counts them against its own reply budget
// of 20/s) wait on 40 chats, 3 each. The test waits for the replies (the
// environment's 50 s at most), not for a time: every reply is delivered,
// in order per chat; the broadcast keeps going while they go (at least one
// bulk budget's worth of copies between the first reply and the last: a
// reply does not take the bulk budget) and copies were still waiting when
// the last reply arrived (replies do not queue behind the broadcast); the
// emulator, enforcing the same two budgets and 5/s per chat, never answers
// 429 (so no 1 s window held more than either budget). With two worker
// processes (two stores and workers on clients of their own, one tag) the
// budgets are shared: the same holds. How fully each budget is used is a
// throughput figure, which a loaded host stretches
// (BenchmarkTwoBudgetsUse; this test asserted replies at 0.85 of their cap
// until issue 32).
func TestTwoBudgetsRepliesKeepTheirCapDuringABroadcast(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d worker processes", procs), func(t *testing.T) {
			// Not parallel: two workers at 64 senders each.
			r := runTwoBudgets(t, procs, 300)
			for c, texts := range r.replies {
				require.Equal(t, []string{"reply 0", "reply 1", "reply 2"}, texts, "chat %d's replies in order", c)
			}
			from, to := r.replyTimes[0], r.replyTimes[len(r.replyTimes)-1]
			inSpan := 0
			for _, bt := range r.bulkTimes {
				if !bt.Before(from) && !bt.After(to) {
					inSpan++
				}
			}
			t.Logf("replies %d over %v, bulk copies meanwhile %d, by the last reply %d of %d; 429s %d",
				len(r.replyTimes), to.Sub(from).Round(time.Millisecond), inSpan, r.bulkByLastReply, r.audience, r.tooMany)
			// No 1 s window over either budget: the emulator refuses a send
			// over one (the delivered times cannot show more), so none refused.
			require.Zero(t, r.tooMany, "429s answered by the emulator")
			require.GreaterOrEqual(t, inSpan, budgetBulk, "the broadcast keeps its budget while replies go")
			require.Less(t, r.bulkByLastReply, r.audience, "copies still waiting when the last reply arrived")
		})
	}
}

// BenchmarkTwoBudgetsUse: how fully the worker uses two budgets at once
// (runTwoBudgets with a 1,000-chat broadcast, one worker process): metric
// reply_use, the replies' rate over their run ÷ their budget (20/s), and
// bulk_use, the bulk copies over the same span ÷ the bulk budget (10/s),
// medians over b.N runs (1 is the whole budget). TestTwoBudgets... asserted
// reply_use >= 0.85 and bulk_use >= 0.7 until issue 32: a loaded host gave
// 0.845.
// Run: go test -run '^$' -bench TwoBudgetsUse -benchtime 3x ./worker/
func BenchmarkTwoBudgetsUse(b *testing.B) {
	var replyUse, bulkUse []float64
	for range b.N {
		r := runTwoBudgets(b, 1, 1000)
		from, to := r.replyTimes[0], r.replyTimes[len(r.replyTimes)-1]
		span := to.Sub(from).Seconds()
		inSpan := 0
		for _, bt := range r.bulkTimes {
			if !bt.Before(from) && !bt.After(to) {
				inSpan++
			}
		}
		replyUse = append(replyUse, float64(len(r.replyTimes)-1)/span/budgetReplies)
		bulkUse = append(bulkUse, float64(inSpan)/span/budgetBulk)
	}
	sort.Float64s(replyUse)
	sort.Float64s(bulkUse)
	b.ReportMetric(replyUse[len(replyUse)/2], "reply_use")
	b.ReportMetric(bulkUse[len(bulkUse)/2], "bulk_use")
}

// twoBudgetsRun is what runTwoBudgets saw by the time every reply was
// delivered: the replies' and bulk copies' acceptance times (sorted), each
// reply chat's reply texts in delivery order, the copies delivered by the
// last reply of audience sent, and the emulator's 429s.
type twoBudgetsRun struct {
	replyTimes, bulkTimes []time.Time
	replies               map[int64][]string
	bulkByLastReply       int
	audience              int
	tooMany               int
}

// runTwoBudgets broadcasts "bulk" to audience chats, enqueues 3 replies to
// each of 40 other chats, then runs procs worker processes (64 senders,
// ClaimRate 30/s) against an emulator with the same budgets
// (budgetBulk, budgetReplies apart, budgetPerChat per chat) until every
// reply is delivered (the environment's 50 s at most). Errors fail tb.
func runTwoBudgets(tb testing.TB, procs, audience int) twoBudgetsRun {
	tb.Helper()
	limits := notifier.Limits{GlobalPerSecond: budgetBulk, ReplyPerSecond: budgetReplies, PrivatePerSecond: budgetPerChat, Slack: notifier.DefaultSlack}
	e := newEnv(tb, envOpts{
		limits: limits,
		emuLimits: tgemu.Limits{
			Global:  tgemu.Rate{Messages: budgetBulk, Per: time.Second},
			Reply:   tgemu.Rate{Messages: budgetReplies, Per: time.Second},
			Private: tgemu.Rate{Messages: budgetPerChat, Per: time.Second},
			Replies: tgemu.RepliesApart, // the bot's reply budget is apart from bulk
		},
	})
	chats := make([]int64, audience)
	for i := range chats {
		chats[i] = int64(1000 + i)
	}
	_, err := e.n.Broadcast(e.ctx, chats, notifier.Message{Text: "bulk"})
	require.NoError(tb, err)
	const replyChats, perReply = 40, 3
	for i := range perReply {
		for c := int64(1); c <= replyChats; c++ {
			_, err := e.n.Notify(e.ctx, c, notifier.Message{Text: fmt.Sprintf("reply %d", i), Class: notifier.Reply, ReplyTo: 7})
			require.NoError(tb, err)
		}
	}
	cfg := e.config()
	cfg.Senders, cfg.ClaimRate = 64, budgetBulk+budgetReplies
	e.start(cfg)
	for range procs - 1 {
		c := valkeytest.Shared(tb).Client(tb)
		store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(e.store.Tag()))
		require.NoError(tb, err)
		n, err := notifier.New(c, store, notifier.Config{})
		require.NoError(tb, err)
		w, err := worker.New(n, cfg)
		require.NoError(tb, err)
		ctx, cancel := context.WithCancel(e.ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		tb.Cleanup(func() { cancel(); require.NoError(tb, <-done) })
	}
	for c := int64(1); c <= replyChats; c++ {
		e.waitMsgs(c, perReply)
	}
	r := twoBudgetsRun{replies: map[int64][]string{}, audience: audience, tooMany: e.emu.Stats().TooManyRequests}
	for _, m := range e.emu.AllMessages() {
		switch {
		case strings.HasPrefix(m.Text, "reply"):
			r.replyTimes = append(r.replyTimes, m.Time)
			r.replies[m.ChatID] = append(r.replies[m.ChatID], m.Text)
		case m.Text == "bulk":
			r.bulkTimes = append(r.bulkTimes, m.Time)
		}
	}
	sort.Slice(r.replyTimes, func(i, j int) bool { return r.replyTimes[i].Before(r.replyTimes[j]) })
	sort.Slice(r.bulkTimes, func(i, j int) bool { return r.bulkTimes[i].Before(r.bulkTimes[j]) })
	last := r.replyTimes[len(r.replyTimes)-1]
	for _, bt := range r.bulkTimes {
		if !bt.After(last) {
			r.bulkByLastReply++
		}
	}
	return r
}
