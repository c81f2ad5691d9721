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
// count). (Replies on a budget of their own start within the bulk window:
// TestRepliesApartStartWithinTheBulkWindowAndAnswered429sTakeTheProbeBack.)
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

// 429s from several chats are Telegram's bot-wide signal: the worker
// pauses every queue for the retry_after either way, but halves the budget
// only when it binds (lanes Store.LowerBudget). Five messages answered 429
// at once, with the budget of 60/s far from spent, lower nothing (chaos
// seed 7: such bursts took the reply budget to 4/s while replies ran at
// 7/s); the same five 429s at the end of 120 messages sent at the budget's
// rate halve it, unless clean epochs at the rate proved it first (180
// messages, epochs of 500 ms): then the burst is forgiven. Every message
// is delivered after the pause.
func TestBotWide429sLowerOnlyABudgetThatBinds(t *testing.T) {
	cases := []struct {
		name         string
		msgs         int
		epoch        time.Duration // lanes.LearnConfig.Epoch (0: its 10 s)
		wantDecrease bool
	}{
		// Epochs of a day: no epoch ends during the sends, so none proves
		// a rate (with the 10-s default, 120 sends straddling an epoch's
		// end proved 50 of them, and the burst went down to 50, not 30:
		// a busy CI run).
		{name: "5 sends, all answered 429", msgs: 5, epoch: 24 * time.Hour},
		{name: "120 sends, the last 5 answered 429", msgs: 120, epoch: 24 * time.Hour, wantDecrease: true},
		// 3 s at the budget's rate: clean epochs of 500 ms proved it.
		{name: "180 sends, the last 5 answered 429, after clean epochs", msgs: 180, epoch: 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			limits := notifier.Limits{GlobalPerSecond: 60, Slack: notifier.DefaultSlack}
			e := newEnv(t, envOpts{limits: limits, emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: 10_000, Per: time.Second}},
				storeOpts:  []lanes.Option{lanes.WithLearning(lanes.LearnConfig{Every: time.Hour, Epoch: tc.epoch})},
				counts429s: "the test injects them"})
			const first = 10_000
			for i := range 5 {
				e.emu.InjectFault(tgemu.TooManyRequests(1).For("sendMessage").ForChat(int64(first + tc.msgs - 5 + i)))
			}
			for i := range tc.msgs {
				e.notify(int64(first+i), "m", notifier.Notification)
			}
			cfg := e.config()
			cfg.Senders, cfg.ClaimRate = 64, limits.GlobalPerSecond
			e.start(cfg)
			for i := range tc.msgs {
				e.waitMsgs(int64(first+i), 1)
			}
			require.Zero(t, e.emu.PendingFaults(), "every 429 answered")
			e.requireMetric(1, "codemojex_worker_global_pauses_total", "", "")
			got := learnedBudget(t, e.ctx, e.store, "")
			if !tc.wantDecrease {
				require.Zero(t, got.Decreases, "a budget far from spent, or proved at its rate, is left alone")
				require.Equal(t, 60, got.Rate)
				e.requireMetric(0, "codemojex_worker_budget_decreases_total", "queue", tgjob.QueueNotify)
				if tc.epoch < time.Hour {
					require.Equal(t, int64(1), got.Forgiven, "the proof forgave the burst")
					require.Contains(t, e.logs.String(), "budget kept: a clean epoch proved its rate")
				}
				return
			}
			require.Zero(t, got.Forgiven)
			require.Equal(t, int64(1), got.Decreases)
			require.Equal(t, worker.WhyFlood, got.Why)
			require.Equal(t, 60, got.Hit)
			require.Equal(t, 30, got.Rate)
			e.requireMetric(1, "codemojex_worker_budget_decreases_total", "queue", tgjob.QueueNotify)
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

// Replies on a budget of their own (TELEGRAM_REPLY_RATE 60) with the bulk
// rate at Telegram's bot-wide window (20/s), against a Telegram that counts
// replies in that window (tgemu.RepliesInGlobal): replies and bulk together
// start at 20/s, so the only 429s are a probe's answer (the total raised
// while replies waited), which takes the total back to 20 at once (reason
// worker.WhyProbe, counted), with no global pause; while the hold runs,
// 200 more replies bring no 429.
func TestRepliesApartStartWithinTheBulkWindowAndAnswered429sTakeTheProbeBack(t *testing.T) {
	const window = 20
	limits := notifier.Limits{GlobalPerSecond: window, ReplyPerSecond: 60, PrivatePerSecond: 1, Slack: notifier.DefaultSlack}
	e := newEnv(t, envOpts{limits: limits,
		emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: window, Per: time.Second},
			Reply: tgemu.Rate{Messages: 60, Per: time.Second}, Replies: tgemu.RepliesInGlobal},
		storeOpts:  []lanes.Option{lanes.WithLearning(lanes.LearnConfig{Probe: 300 * time.Millisecond, Hold: time.Hour})},
		counts429s: "a probe above the window is answered with 429s by design"})
	const chats = 1000
	for i := range chats {
		_, err := e.n.Notify(e.ctx, int64(10_000+i), notifier.Message{Text: "m", Class: notifier.Reply, ReplyTo: 7})
		require.NoError(t, err)
	}
	cfg := e.config()
	cfg.Senders, cfg.ClaimRate = 64, limits.GlobalPerSecond+limits.ReplyPerSecond
	w, _ := e.start(cfg)
	var got lanes.LearnedBudget
	require.Eventually(t, func() bool {
		got = learnedBudget(t, e.ctx, e.store, "")
		return got.Decreases > 0
	}, 40*time.Second, 20*time.Millisecond, "a probe answered with a 429")
	require.Equal(t, worker.WhyProbe, got.Why)
	require.Equal(t, window, got.Rate, "back to the total that held")
	require.Equal(t, window, got.Cap, "held there")
	require.Equal(t, window, got.Start)
	require.Positive(t, e.emu.Stats().TooManyRequests)
	e.requireMetric(float64(got.Decreases), "codemojex_worker_budget_decreases_total", "reason", worker.WhyProbe)
	require.Zero(t, learnedBudget(t, e.ctx, e.store, tgjob.QueueReply).Decreases, "the replies' own budget was not lowered")
	before := e.emu.Stats()
	require.Eventually(t, func() bool { return e.emu.Stats().Sent >= before.Sent+200 }, 40*time.Second, 20*time.Millisecond)
	after := e.emu.Stats()
	t.Logf("learned %+v; 429s %d before, sends after %d, 429s after %d", got, before.TooManyRequests,
		after.Sent-before.Sent, after.TooManyRequests-before.TooManyRequests)
	require.Equal(t, before.TooManyRequests, after.TooManyRequests, "no 429 while the hold runs")
	require.Zero(t, w.LastPause(), "no global pause")
}

// Against a Telegram whose reply window is apart from the bulk one and far
// higher (tgemu.RepliesApart at 1,000/s): replies waiting with the total
// spent raise it probe by probe (20, 21, 23, 27, 35, 51, 80) to its
// ceiling, bulk rate + reply rate, with no 429 at all.
func TestRepliesApartClimbToTheirCeilingAgainstASeparateReplyWindow(t *testing.T) {
	limits := notifier.Limits{GlobalPerSecond: 20, ReplyPerSecond: 60, PrivatePerSecond: 1, Slack: notifier.DefaultSlack}
	e := newEnv(t, envOpts{limits: limits,
		emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: 20, Per: time.Second},
			Reply: tgemu.Rate{Messages: 1000, Per: time.Second}, Replies: tgemu.RepliesApart},
		storeOpts: []lanes.Option{lanes.WithLearning(lanes.LearnConfig{Probe: 200 * time.Millisecond, Hold: time.Hour})}})
	for i := range 3000 {
		_, err := e.n.Notify(e.ctx, int64(10_000+i), notifier.Message{Text: "m", Class: notifier.Reply, ReplyTo: 7})
		require.NoError(t, err)
	}
	cfg := e.config()
	cfg.Senders, cfg.ClaimRate = 64, limits.GlobalPerSecond+limits.ReplyPerSecond
	e.start(cfg)
	var seen []int
	require.Eventually(t, func() bool {
		b := learnedBudget(t, e.ctx, e.store, "")
		if len(seen) == 0 || seen[len(seen)-1] != b.Rate {
			seen = append(seen, b.Rate)
		}
		return b.Rate == 80
	}, 60*time.Second, 5*time.Millisecond, "the total climbs to its ceiling")
	t.Logf("rates seen: %v", seen)
	require.Subset(t, []int{20, 21, 23, 27, 35, 51, 80}, seen, "one raise at a time, the step doubling")
	require.Zero(t, e.emu.Stats().TooManyRequests)
}
