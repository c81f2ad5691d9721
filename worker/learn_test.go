package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

// learnedBudget reads the learned state of the budget of queue (""
// the store's global one) from store.
func learnedBudget(t testing.TB, ctx context.Context, store *lanes.Store, queue string) lanes.LearnedBudget {
	t.Helper()
	ls, err := store.Inspector().Learned(ctx)
	require.NoError(t, err)
	for _, b := range ls {
		if b.Queue == queue {
			return b
		}
	}
	t.Fatalf("no budget of queue %q in %+v", queue, ls)
	return lanes.LearnedBudget{}
}

// A bot configured at 60/s against a Telegram whose bot-wide window is
// 20/s: the first seconds bring 429s from many chats at once; each such
// signal halves the budget whose queue got them, until what it may climb
// back to (the hold's cap) is at most the window. Then a new process (a
// new store and worker on a client of its own: a restart) starts from the
// learned rate, and 200 more sends bring no 429 at all (the emulator's
// count). The same whether the budget is the one global rate or the
// replies' own (TELEGRAM_REPLY_RATE) against a Telegram that counts
// replies in its global window (tgemu.RepliesInGlobal).
func TestLearnedBudgetStopsBotWide429sAndARestartKeepsIt(t *testing.T) {
	const window = 20 // Telegram's bot-wide messages per second
	cases := []struct {
		name   string
		limits notifier.Limits
		emu    tgemu.Limits
		class  notifier.Class
		queue  string // whose budget learns ("" the global one)
	}{
		{
			name:   "global budget 60/s",
			limits: notifier.Limits{GlobalPerSecond: 60, Slack: notifier.DefaultSlack},
			emu:    tgemu.Limits{Global: tgemu.Rate{Messages: window, Per: time.Second}},
			class:  notifier.Notification,
		},
		{
			name:   "replies apart at 60/s, Telegram counting them in its global window",
			limits: notifier.Limits{GlobalPerSecond: window, ReplyPerSecond: 60, Slack: notifier.DefaultSlack},
			emu: tgemu.Limits{Global: tgemu.Rate{Messages: window, Per: time.Second},
				Reply: tgemu.Rate{Messages: 60, Per: time.Second}, Replies: tgemu.RepliesInGlobal},
			class: notifier.Reply,
			queue: tgjob.QueueReply,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			learn := lanes.WithLearning(lanes.LearnConfig{Every: 200 * time.Millisecond, Hold: time.Hour})
			e := newEnv(t, envOpts{limits: tc.limits, emuLimits: tc.emu, storeOpts: []lanes.Option{learn},
				counts429s: "the first seconds bring 429s by design; the test counts those after the budget learned"})
			const chats = 1000
			for i := range chats {
				_, err := e.n.Notify(e.ctx, int64(10_000+i), notifier.Message{Text: "m", Class: tc.class, ReplyTo: 7})
				require.NoError(t, err)
			}
			cfg := e.config()
			cfg.Senders, cfg.ClaimRate = 64, tc.limits.GlobalPerSecond+tc.limits.ReplyPerSecond
			_, stop := e.start(cfg)
			var got lanes.LearnedBudget
			require.Eventually(t, func() bool {
				got = learnedBudget(t, e.ctx, e.store, tc.queue)
				return got.Cap <= window
			}, 40*time.Second, 20*time.Millisecond, "the budget learns a rate within Telegram's window")
			require.NoError(t, stop())
			require.Positive(t, e.emu.Stats().TooManyRequests, "the first seconds were over the window")
			require.Equal(t, worker.WhyFlood, got.Why)
			require.Positive(t, got.Decreases)
			// Each decrease counted (reason: worker.WhyFlood, the one there is).
			e.requireMetric(float64(got.Decreases), "codemojex_worker_budget_decreases_total", "queue", cmpQueue(tc.queue, tc.class))

			// A restart: a new process on a client of its own.
			before := e.emu.Stats()
			c := valkeytest.Shared(t).Client(t)
			store, err := notifier.NewStore(c, tc.limits, 0, lanes.WithTag(e.store.Tag()), learn)
			require.NoError(t, err)
			n, err := notifier.New(c, store, notifier.Config{})
			require.NoError(t, err)
			require.LessOrEqual(t, learnedBudget(t, e.ctx, store, tc.queue).Rate, window, "the new process reads the learned rate")
			cfg.Registerer = prometheus.NewRegistry()
			w, err := worker.New(n, cfg)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(e.ctx)
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			require.Eventually(t, func() bool { return e.emu.Stats().Sent >= before.Sent+200 }, 40*time.Second, 20*time.Millisecond)
			cancel()
			require.NoError(t, <-done)
			after := e.emu.Stats()
			t.Logf("learned %+v; 429s %d before the restart, sends after it %d, 429s after it %d",
				got, before.TooManyRequests, after.Sent-before.Sent, after.TooManyRequests-before.TooManyRequests)
			require.Equal(t, before.TooManyRequests, after.TooManyRequests, "no 429 once the budget has learned")
		})
	}
}

// cmpQueue is the queue of class's messages when queue is "" (the global
// budget: its 429s come from the queue the messages go on).
func cmpQueue(queue string, class notifier.Class) string {
	if queue != "" {
		return queue
	}
	if class == notifier.Reply {
		return tgjob.QueueReply
	}
	return tgjob.QueueNotify
}

// Once Telegram stops pushing back (its window lifted after the budget went
// down), the learned rate climbs back to the configured 60/s and no higher,
// while the worker keeps sending.
func TestLearnedBudgetClimbsBackOnceTheLimitIsLifted(t *testing.T) {
	limits := notifier.Limits{GlobalPerSecond: 60, Slack: notifier.DefaultSlack}
	e := newEnv(t, envOpts{limits: limits, emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: 20, Per: time.Second}},
		storeOpts:  []lanes.Option{lanes.WithLearning(lanes.LearnConfig{Every: 100 * time.Millisecond, Hold: time.Second})},
		counts429s: "429s bring the decrease the test starts from"})
	for i := range 2000 {
		e.notify(int64(10_000+i), "m", notifier.Notification)
	}
	cfg := e.config()
	cfg.Senders, cfg.ClaimRate = 64, 60
	e.start(cfg)
	require.Eventually(t, func() bool { return learnedBudget(t, e.ctx, e.store, "").Decreases > 0 },
		40*time.Second, 20*time.Millisecond, "a decrease")
	e.emu.SetLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 10_000, Per: time.Second}})
	require.Eventually(t, func() bool {
		b := learnedBudget(t, e.ctx, e.store, "")
		require.LessOrEqual(t, b.Rate, 60, "never above the configured rate")
		return b.Rate == 60
	}, 40*time.Second, 20*time.Millisecond, "back to the configured rate")
}

// A chat's own 429s (its pace set above Telegram's 1/s for private chats)
// park only that chat: the budget does not go down, whatever their number.
func TestPerChat429sDoNotLowerTheBudget(t *testing.T) {
	limits := notifier.Limits{GlobalPerSecond: 60, PrivatePerSecond: 5, Slack: notifier.DefaultSlack}
	e := newEnv(t, envOpts{limits: limits,
		emuLimits:  tgemu.Limits{Global: tgemu.Rate{Messages: 1000, Per: time.Second}, Private: tgemu.Rate{Messages: 1, Per: time.Second}},
		counts429s: "the chat's pace is above Telegram's on purpose"})
	const chat, msgs = 42, 6
	for i := range msgs {
		e.notify(chat, fmt.Sprintf("n%d", i), notifier.Notification)
	}
	e.start(e.config())
	got := e.waitMsgs(chat, msgs)
	want := make([]string, msgs)
	for i := range want {
		want[i] = fmt.Sprintf("n%d", i)
	}
	require.Equal(t, want, texts(got), "in order")
	require.Positive(t, e.emu.Stats().TooManyRequestsByChat[chat], "the chat's own 429s")
	b := learnedBudget(t, e.ctx, e.store, "")
	require.Equal(t, 60, b.Rate)
	require.Zero(t, b.Decreases)
	e.requireMetric(0, "codemojex_worker_budget_decreases_total", "queue", tgjob.QueueNotify)
}
