package worker_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

// farLatency is a bot hosted far from Telegram's data centres: every Bot
// API call answered 300 ms after it was sent.
const farLatency = 300 * time.Millisecond

// At 300 ms latency, with the global and per-chat limits enforced by the
// emulator and by lanes: the worker runs more senders than the old fixed 8
// (rate 40/s × 0.3 s × 1.25 + 2), every chat gets its messages in enqueue
// order (weights > 1, replies and notifications mixed), the emulator never
// answers 429 and no window holds more than the limits.
func TestOrderAndLimitsHoldAtHighLatency(t *testing.T) {
	t.Parallel()
	const global, perChat = 40, 5
	e := newEnv(t, envOpts{
		limits:    notifier.Limits{GlobalPerSecond: global, PrivatePerSecond: perChat, Slack: notifier.DefaultSlack},
		emuLimits: tgemu.ScaledLimits(global, perChat, 20),
		latency:   farLatency,
	})
	const chats, per = 24, 8
	for c := 1; c <= chats; c++ {
		if c%4 == 0 {
			require.NoError(t, e.store.Inspector().SetWeight(e.ctx, itoa(c), 3))
		}
	}
	for i := range per {
		for c := 1; c <= chats; c++ {
			class := notifier.Reply
			if c%2 == 0 {
				class = notifier.Notification
			}
			e.notify(int64(c), orderedText(c, i), class)
		}
	}
	cfg := e.config()
	cfg.Senders, cfg.MinSenders, cfg.ClaimRate = 64, 4, global
	e.start(cfg)
	e.requireEachChatInOrder(chats, per)
	senders := e.gauge("codemojex_worker_senders")
	require.GreaterOrEqual(t, senders, 16.0, "senders sized for 40/s at 300 ms")
	// No window over either limit: the emulator refuses a send over one
	// (so a count of accepted sends cannot exceed it); none refused.
	testkit.Require429s(t, e.emu, 0)
	require.Empty(t, e.dead(tgjob.QueueReply))
	require.Empty(t, e.dead(tgjob.QueueNotify))
	t.Logf("senders %v, max/s overall %d", senders, e.emu.MaxAccepted(time.Second))
}

// At 300 ms latency, while the global rate binds, a chat of weight 2 gets
// about twice the messages of a chat of weight 1. The ring is long (31
// chats at 10/s: a turn of the ring takes about 3.2 s) against the 0.6 s
// the weighted chat needs for its turn of two ordered sends, so the share
// does not depend on the machine's speed as BenchmarkWeightShareAtHighLatency's
// does (its ring turns in 1 s). Over the first half of the deliveries
// (about 8 turns) the weighted chat gets 15-16 where the median chat gets 8;
// measured 1.75-2.0 on an idle machine (the lane rejoins the ring when its
// sends settle and misses about one turn in eight). The assertion asks
// >= 1.5 (two turns missed in eight still pass: 12/8), well above the 1.0
// of no weight at all.
func TestWeightHoldsAtHighLatencyWhileTheRingIsLong(t *testing.T) {
	t.Parallel()
	const global, light, per = 10, 30, 16
	e := newEnv(t, envOpts{limits: notifier.Limits{GlobalPerSecond: global, Slack: notifier.DefaultSlack},
		emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: global, Per: time.Second}}, latency: farLatency})
	const heavy = int64(100)
	require.NoError(t, e.store.Inspector().SetWeight(e.ctx, itoa(int(heavy)), 2))
	chats := []int64{heavy}
	for c := range light {
		chats = append(chats, int64(c+1))
	}
	require.NoError(t, e.store.Inspector().Pause(e.ctx, -1))
	for i := range per {
		for _, c := range chats {
			e.notify(c, orderedText(int(c), i), notifier.Notification)
		}
	}
	require.NoError(t, e.store.Inspector().Resume(e.ctx))
	cfg := e.config()
	cfg.Senders, cfg.MinSenders, cfg.ClaimRate = 64, 4, global
	e.start(cfg)
	half := len(chats) * per / 2
	ctx, cancel := context.WithTimeout(e.ctx, 90*time.Second)
	defer cancel()
	msgs, err := e.emu.WaitForTotalMessages(ctx, half)
	require.NoError(t, err)
	count := map[int64]int{}
	for _, m := range msgs[:half] {
		count[m.ChatID]++
	}
	var others []int
	for _, c := range chats[1:] {
		others = append(others, count[c])
	}
	sort.Ints(others)
	median := float64(others[len(others)/2])
	require.Positive(t, median)
	ratio := float64(count[heavy]) / median
	t.Logf("weight 2 chat / median chat = %.2f (weighted %d, median %v)", ratio, count[heavy], median)
	require.GreaterOrEqual(t, ratio, 1.5, "the weight-2 chat's share against the median chat's")
	testkit.Require429s(t, e.emu, 0)
}

// BenchmarkWeightShareAtHighLatency: at 300 ms latency, while only the
// global rate binds (12/s, 11 chats with 16 messages each, no per-chat
// limit), the messages the chat of weight 2 gets over the first half of
// the deliveries divided by the median chat's (the baseline, same run):
// metric weight2/median (2 is the weight's promise). Measured 2.0 on an
// idle machine, 1.5-1.62 at load 10. It is a share figure, not a unit
// test: a chat's messages go one at a time, in order, so the weighted
// chat's turn of two takes two sends one after the other (0.7-1.1 s apart
// at load 10, against a turn of the ring of about 1.3 s), and a lane
// rejoins the ring when its send settles, so the weighted lane rejoins
// behind the lanes served meanwhile and sometimes misses a turn of the
// ring. The weight's deterministic test is lanes'
// TestWeightHoldsWhileGlobalRateBinds (an ordered queue, the budget
// refilling one job at a time, each cut turn finished: 5.0 for weight 5);
// the order per chat at this latency with weights is
// TestOrderAndLimitsHoldAtHighLatency's.
// Run: go test -run '^$' -bench WeightShareAtHighLatency -benchtime 3x ./worker/
func BenchmarkWeightShareAtHighLatency(b *testing.B) {
	const global, light, per = 12, 10, 16
	var ratios []float64
	for range b.N {
		b.StopTimer()
		e := newEnv(b, envOpts{limits: notifier.Limits{GlobalPerSecond: global, Slack: notifier.DefaultSlack},
			emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: global, Per: time.Second}}, latency: farLatency})
		const heavy = int64(100)
		require.NoError(b, e.store.Inspector().SetWeight(e.ctx, itoa(int(heavy)), 2))
		chats := []int64{heavy}
		for c := range light {
			chats = append(chats, int64(c+1))
		}
		require.NoError(b, e.store.Inspector().Pause(e.ctx, -1))
		for i := range per {
			for _, c := range chats {
				e.notify(c, fmt.Sprintf("%d-%d", c, i), notifier.Notification)
			}
		}
		require.NoError(b, e.store.Inspector().Resume(e.ctx))
		cfg := e.config()
		cfg.Senders, cfg.MinSenders, cfg.ClaimRate = 64, 4, global
		b.StartTimer()
		_, stop := e.start(cfg)
		ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
		msgs, err := e.emu.WaitForTotalMessages(ctx, len(chats)*per/2)
		cancel()
		b.StopTimer()
		require.NoError(b, err)
		require.NoError(b, stop())
		count := map[int64]int{}
		for _, m := range msgs[:len(chats)*per/2] {
			count[m.ChatID]++
		}
		var others []int
		for _, c := range chats[1:] {
			others = append(others, count[c])
		}
		sort.Ints(others)
		median := float64(others[len(others)/2])
		require.Positive(b, median)
		ratios = append(ratios, float64(count[heavy])/median)
		b.Logf("weight 2 chat / median chat = %.2f (counts %v)", ratios[len(ratios)-1], count)
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "weight2/median")
}

// At 300 ms latency a broadcast fills the global budget (10/s, 40 chats),
// then 5 other chats get a reply each: the replies take the next budget
// slots (strict priority): between queueing them and the last one's
// delivery at most one budget window's worth of copies arrive (those
// claimed before the replies were queued, still in flight), and copies are
// still waiting when the replies went. The test waits for the replies, not
// for a time: how soon they arrive (it asserted within 2 s until issue 32)
// is BenchmarkRepliesAheadOfBroadcastAtHighLatency's metric.
func TestRepliesAheadOfBroadcastAtHighLatency(t *testing.T) {
	t.Parallel()
	r := runRepliesAhead(t)
	t.Logf("slowest reply %v; copies delivered meanwhile %d, by then %d of %d", r.worst, r.copiesMeanwhile, r.copiesByThen, r.audience)
	require.LessOrEqual(t, r.copiesMeanwhile, repliesAheadGlobal, "copies delivered between queueing the replies and the last reply")
	require.Less(t, r.copiesByThen, r.audience, "copies were still waiting when the replies went")
}

// BenchmarkRepliesAheadOfBroadcastAtHighLatency: runRepliesAhead's slowest
// reply, from queued to delivered (the promise is 2 s): metric
// replies_worst_s, the median over b.N runs.
// Run: go test -run '^$' -bench RepliesAheadOfBroadcastAtHighLatency -benchtime 3x ./worker/
func BenchmarkRepliesAheadOfBroadcastAtHighLatency(b *testing.B) {
	var worst []float64
	for range b.N {
		worst = append(worst, runRepliesAhead(b).worst.Seconds())
	}
	sort.Float64s(worst)
	b.ReportMetric(worst[len(worst)/2], "replies_worst_s")
}

// repliesAheadGlobal is runRepliesAhead's global budget (per 1 s).
const repliesAheadGlobal = 10

// repliesAheadRun is what runRepliesAhead saw: the slowest reply (queued to
// delivered), the copies delivered after the replies were queued and up to
// the last reply, all copies delivered by the last reply, of audience.
type repliesAheadRun struct {
	worst                         time.Duration
	copiesMeanwhile, copiesByThen int
	audience                      int
}

// runRepliesAhead broadcasts to 40 chats at 300 ms latency under a global
// budget of repliesAheadGlobal, waits for 8 copies (the broadcast under
// way), queues a reply to each of 5 other chats and waits for them (20 s
// at most). Errors fail tb.
func runRepliesAhead(tb testing.TB) repliesAheadRun {
	tb.Helper()
	e := newEnv(tb, envOpts{limits: notifier.Limits{GlobalPerSecond: repliesAheadGlobal, Slack: notifier.DefaultSlack},
		emuLimits: tgemu.Limits{Global: tgemu.Rate{Messages: repliesAheadGlobal, Per: time.Second}}, latency: farLatency})
	var audience []int64
	for c := int64(1000); c < 1040; c++ {
		audience = append(audience, c)
	}
	_, err := e.n.Broadcast(e.ctx, audience, notifier.Message{Text: "news"})
	require.NoError(tb, err)
	cfg := e.config()
	cfg.Senders, cfg.MinSenders, cfg.ClaimRate = 64, 4, repliesAheadGlobal
	e.start(cfg)
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	_, err = e.emu.WaitForTotalMessages(ctx, 8) // the broadcast is under way
	require.NoError(tb, err)
	asked := time.Now()
	for c := int64(1); c <= 5; c++ {
		e.notify(c, "reply", notifier.Reply)
	}
	r := repliesAheadRun{audience: len(audience)}
	var last time.Time
	for c := int64(1); c <= 5; c++ {
		at := e.waitMsgs(c, 1)[0].Time
		r.worst = max(r.worst, at.Sub(asked))
		if at.After(last) {
			last = at
		}
	}
	for _, c := range audience {
		for _, m := range e.emu.Messages(c) {
			if m.Time.After(last) {
				continue
			}
			r.copiesByThen++
			if m.Time.After(asked) {
				r.copiesMeanwhile++
			}
		}
	}
	return r
}

// At 300 ms latency with two worker processes (two stores, notifiers and
// workers on clients of their own, one tag) each settling its sends with its
// round-trip floor (lanes counts a send from settle minus the floor, its
// latest possible arrival, not from its settle): the emulator, enforcing
// exactly the limits lanes applies (20/s overall, 2/s per chat, both
// binding), never answers 429, no 1 s window holds more than either limit,
// and every chat gets its messages in enqueue order. The floor in use is
// about the latency (the emulator holds half of it before counting a
// request and half after, so the legs are exactly half the floor).
func TestArrivalCountingKeepsLimitsAndOrderWithTwoProcessesAtHighLatency(t *testing.T) {
	// Not parallel: both limits must bind, against the emulator's clock.
	const global, perChat = 20, 2
	limits := notifier.Limits{GlobalPerSecond: global, PrivatePerSecond: perChat, Slack: notifier.DefaultSlack}
	e := newEnv(t, envOpts{limits: limits, emuLimits: tgemu.ScaledLimits(global, perChat, 20), latency: farLatency})
	const chats, per = 16, 8
	for i := range per {
		for c := 1; c <= chats; c++ {
			class := notifier.Notification
			if c%3 == 0 {
				class = notifier.Reply
			}
			e.notify(int64(c), orderedText(c, i), class)
		}
	}
	cfg := e.config()
	cfg.Senders, cfg.MinSenders, cfg.ClaimRate = 64, 4, global
	e.start(cfg)
	c := valkeytest.Shared(t).Client(t)
	store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(e.store.Tag()))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	cfg2 := cfg
	reg2 := prometheus.NewRegistry()
	cfg2.Registerer = reg2
	w2, err := worker.New(n, cfg2)
	require.NoError(t, err)
	testkit.RunInBackground(t, "second worker", 20*time.Second, w2.Run)

	e.requireEachChatInOrder(chats, per)
	// No window over either limit: the emulator refuses a send over one
	// (so a count of accepted sends cannot exceed it); none refused.
	testkit.Require429s(t, e.emu, 0)
	floor := e.gauge("codemojex_worker_rtt_floor_seconds")
	require.GreaterOrEqual(t, floor, 0.25, "sends settled with a round-trip floor near the latency")
	require.Less(t, floor, 0.6)
	mfs, err := reg2.Gather()
	require.NoError(t, err)
	sent2 := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "codemojex_worker_sent_total" {
			for _, m := range mf.GetMetric() {
				sent2 += m.GetCounter().GetValue()
			}
		}
	}
	require.Positive(t, sent2, "the second process delivered too")
	require.Empty(t, e.dead(tgjob.QueueReply))
	require.Empty(t, e.dead(tgjob.QueueNotify))
	t.Logf("floor %.3f s, second process sent %.0f of %d, max/s overall %d", floor, sent2, chats*per, e.emu.MaxAccepted(time.Second))
}
