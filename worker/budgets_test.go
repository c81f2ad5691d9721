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

// Two budgets (notifier.Limits.ReplyPerSecond): a broadcast keeps the bulk
// budget (10/s) full while replies (with reply_to, so the emulator counts
// them against its own reply budget) arrive faster than their cap (20/s):
// replies are delivered at their cap, not slowed by the broadcast, the
// broadcast keeps its own rate (replies no longer take its budget), the
// emulator, enforcing the same two budgets and 5/s per chat, never answers
// 429, and no 1 s window holds more than either budget. With two worker
// processes (two stores and workers on clients of their own, one tag) the
// budgets are shared: the same holds.
func TestTwoBudgetsRepliesKeepTheirCapDuringABroadcast(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d worker processes", procs), func(t *testing.T) {
			// Not parallel: it measures rates against the emulator's limits.
			const bulk, replies, perChat = 10, 20, 5
			limits := notifier.Limits{GlobalPerSecond: bulk, ReplyPerSecond: replies, PrivatePerSecond: perChat, Slack: notifier.DefaultSlack}
			e := newEnv(t, envOpts{
				limits: limits,
				emuLimits: tgemu.Limits{
					Global:  tgemu.Rate{Messages: bulk, Per: time.Second},
					Reply:   tgemu.Rate{Messages: replies, Per: time.Second},
					Private: tgemu.Rate{Messages: perChat, Per: time.Second},
					Replies: tgemu.RepliesApart, // the bot's reply budget is apart from bulk
				},
			})
			var audience []int64
			for c := int64(1000); c < 1100; c++ {
				audience = append(audience, c)
			}
			_, err := e.n.Broadcast(e.ctx, audience, notifier.Message{Text: "bulk"})
			require.NoError(t, err)
			const replyChats, perReply = 40, 3
			for i := range perReply {
				for c := int64(1); c <= replyChats; c++ {
					_, err := e.n.Notify(e.ctx, c, notifier.Message{Text: fmt.Sprintf("reply %d", i), Class: notifier.Reply, ReplyTo: 7})
					require.NoError(t, err)
				}
			}
			cfg := e.config()
			cfg.Senders, cfg.ClaimRate = 64, bulk+replies
			e.start(cfg)
			for range procs - 1 {
				c := valkeytest.Shared(t).Client(t)
				store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(e.store.Tag()))
				require.NoError(t, err)
				n, err := notifier.New(c, store, notifier.Config{})
				require.NoError(t, err)
				w, err := worker.New(n, cfg)
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(e.ctx)
				done := make(chan error, 1)
				go func() { done <- w.Run(ctx) }()
				t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
			}
			for c := int64(1); c <= replyChats; c++ {
				e.waitMsgs(c, perReply)
			}
			var replyTimes, bulkTimes []time.Time
			for _, m := range e.emu.AllMessages() {
				switch {
				case strings.HasPrefix(m.Text, "reply"):
					replyTimes = append(replyTimes, m.Time)
				case m.Text == "bulk":
					bulkTimes = append(bulkTimes, m.Time)
				}
			}
			sort.Slice(replyTimes, func(i, j int) bool { return replyTimes[i].Before(replyTimes[j]) })
			sort.Slice(bulkTimes, func(i, j int) bool { return bulkTimes[i].Before(bulkTimes[j]) })
			// Replies over their whole run; bulk copies over the same span.
			from, to := replyTimes[0], replyTimes[len(replyTimes)-1]
			replyRate := float64(len(replyTimes)-1) / to.Sub(from).Seconds()
			inSpan := 0
			for _, bt := range bulkTimes {
				if !bt.Before(from) && !bt.After(to) {
					inSpan++
				}
			}
			bulkRate := float64(inSpan) / to.Sub(from).Seconds()
			st := e.emu.Stats()
			t.Logf("replies %.1f/s (cap %d), bulk %.1f/s (cap %d) over %v; 429s %d",
				replyRate, replies, bulkRate, bulk, to.Sub(from).Round(time.Millisecond), st.TooManyRequests)
			require.Zero(t, st.TooManyRequests, "429s answered by the emulator")
			require.LessOrEqual(t, maxPerWindow(replyTimes, time.Second), replies, "replies in a 1 s window")
			require.LessOrEqual(t, maxPerWindow(bulkTimes, time.Second), bulk, "bulk copies in a 1 s window")
			require.GreaterOrEqual(t, replyRate, 0.85*replies, "replies at their cap during the broadcast")
			require.GreaterOrEqual(t, bulkRate, 0.7*bulk, "the broadcast keeps its budget while replies go")
		})
	}
}

// maxPerWindow is the most times (sorted) within any window of length d.
func maxPerWindow(times []time.Time, d time.Duration) int {
	best, lo := 0, 0
	for hi := range times {
		for times[hi].Sub(times[lo]) >= d {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}
