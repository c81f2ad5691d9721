package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
	"github.com/codemojex/codemojex/redact"
	"github.com/codemojex/codemojex/worker"
)

// Every chat receives its messages in enqueue order with 8 concurrent
// senders spread over 4 workers, with weights > 1 (claimed batches) and
// injected 502s and dropped connections on the way.
func TestOrderPerChatWithEightSenders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const chats, per = 20, 15
	for c := 1; c <= chats; c++ {
		if c%3 == 0 {
			require.NoError(t, e.store.Inspector().SetWeight(e.ctx, itoa(c), 4))
		}
	}
	e.emu.InjectFault(tgemu.BadGateway().For("sendMessage").Times(15))
	e.emu.InjectFault(tgemu.DropConnection().For("sendMessage").Times(5))
	for i := range per {
		for c := 1; c <= chats; c++ {
			class := notifier.Reply
			if c%2 == 0 {
				class = notifier.Notification
			}
			e.notify(int64(c), orderedText(c, i), class)
		}
	}
	for range 4 {
		cfg := e.config()
		cfg.Senders = 2
		cfg.Registerer = e.reg // shared: collectors are reused
		e.start(cfg)
	}
	e.requireEachChatInOrder(chats, per)
	require.Empty(t, e.dead(tgjob.QueueReply))
	require.Empty(t, e.dead(tgjob.QueueNotify))
}

// Splitting end to end: parts of at most 4,096 UTF-16 units, in order, valid
// UTF-8, whose concatenation is the input.
func TestSplitDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.start(e.config())

	exact := strings.Repeat("a", 4096)
	e.notify(1, exact, notifier.Reply)
	require.Equal(t, []string{exact}, texts(e.waitMsgs(1, 1)))

	over := strings.Repeat("a", 4095) + "😀"
	e.notify(2, over, notifier.Reply)
	got := texts(e.waitMsgs(2, 2))
	require.Equal(t, []string{strings.Repeat("a", 4095), "😀"}, got)

	var b strings.Builder
	pieces := []string{"漢字かな交じり文", "👩‍👩‍👧‍👦", "🇺🇦", "e\u0301", "한국어 ", "👍🏽", "\n", "plain words ", "🏳️‍🌈", "中文字符"}
	for i := 0; utf8.RuneCountInString(b.String()) < 10000; i++ {
		b.WriteString(pieces[i%len(pieces)])
	}
	mixed := b.String()
	ids, err := e.n.Notify(e.ctx, 3, notifier.Message{Text: mixed})
	require.NoError(t, err)
	require.Greater(t, len(ids), 2)
	msgs := e.waitMsgs(3, len(ids))
	var joined strings.Builder
	for _, m := range msgs {
		require.LessOrEqual(t, tgtext.UTF16Len(m.Text), 4096)
		require.True(t, utf8.ValidString(m.Text))
		joined.WriteString(m.Text)
	}
	require.Equal(t, mixed, joined.String())
	t.Logf("10,000 mixed characters (%d UTF-16 units) arrived as %d parts", tgtext.UTF16Len(mixed), len(msgs))
}

// Broadcast progress: skipped inactive chats, a blocked chat (403) and the
// rest delivered; readable while running; remaining reaches 0.
func TestBroadcastProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	chats := make([]int64, 0, 40)
	for c := int64(100); c < 140; c++ {
		chats = append(chats, c)
	}
	require.NoError(t, e.n.Chats().MarkInactive(e.ctx, 100))
	require.NoError(t, e.n.Chats().MarkInactive(e.ctx, 101))
	e.emu.SetChatStatus(102, tgemu.ChatBlocked)
	e.notify(102, "queued before the broadcast", notifier.Notification)
	id, err := e.n.Broadcast(e.ctx, append(chats, 103, 104), notifier.Message{Text: "news"}) // duplicates dropped
	require.NoError(t, err)
	p, err := e.n.Progress(e.ctx, id)
	require.NoError(t, err)
	require.Equal(t, notifier.Progress{ID: id, Total: 40, Queued: 38, Failed: map[string]int{"inactive": 2}, Remaining: 38}, p)

	e.start(e.config())
	// Progress lives in Valkey, not in the emulator: poll it.
	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, id)
		return err == nil && p.Done()
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 37, p.Sent)
	require.Equal(t, map[string]int{"inactive": 2, "forbidden": 1}, p.Failed)
	require.Zero(t, p.Remaining)
	require.Equal(t, 37, e.emu.Stats().Sent)
}

// The seed's promise: a chat with a deep backlog does not delay the others.
// Chat A has 200 replies queued, then chats B..K get one each; with
// Telegram's limits (30/s overall, 1/s per chat) enforced by the emulator,
// each of B..K is delivered before A's third message after they were
// queued (A, paced to 1/s, gets at most one turn of the ring before each of
// them; one more A message may already be in flight, one more allows a
// slow send of theirs), A keeps draining in order (4 more messages after
// the last of B..K, waited for), and the emulator never answers 429. The
// test waits for progress, not for a time: B..K's delivery time and A's
// drain rate (this test asserted within 2 s and 1.0 ± 0.15 msg/s until
// issue 32) are BenchmarkBacklogDoesNotDelayOthers' metrics.
func TestSeedPromiseBacklogDoesNotDelayOthers(t *testing.T) {
	// Not parallel: B..K's bound counts A's messages at 1/s.
	r := runBacklog(t, 4)
	st := r.e.emu.Stats()
	t.Logf("B..K slowest delivery %v, A's messages meanwhile %d; A sent %d at %.3f msg/s; 429s answered %d; max/s overall %d, per chat %d",
		r.worst, r.aDuring, len(r.msgsA), r.rateA, st.TooManyRequests, st.MaxPerSecond, st.MaxPerSecondByChat[backlogChat])
	require.LessOrEqual(t, r.aDuring, 2, "A's messages between queueing B..K and the last of them delivered")
	for i, m := range r.msgsA {
		require.Equal(t, "A "+itoa(i), m.Text, "A's order")
	}
	testkit.Require429s(t, r.e.emu, 0) // A never sent twice in one of its windows
	for _, q := range r.e.emu.SendRequests() {
		require.True(t, q.Accepted(), "rejected request: %+v", q)
	}
}

// BenchmarkBacklogDoesNotDelayOthers: runBacklog's figures (A's 200-reply
// backlog, then one reply to each of B..K, Telegram's limits): metrics
// others_worst_s (the slowest of B..K from queued to delivered; the promise
// is 2 s) and a_msg/s (A's drain rate over its run; 1 is its pace), medians
// over b.N runs.
// Run: go test -run '^$' -bench BacklogDoesNotDelayOthers -benchtime 3x ./worker/
func BenchmarkBacklogDoesNotDelayOthers(b *testing.B) {
	var worst, rate []float64
	for range b.N {
		r := runBacklog(b, 5)
		worst = append(worst, r.worst.Seconds())
		rate = append(rate, r.rateA)
	}
	sort.Float64s(worst)
	sort.Float64s(rate)
	b.ReportMetric(worst[len(worst)/2], "others_worst_s")
	b.ReportMetric(rate[len(rate)/2], "a_msg/s")
}

// backlogChat is runBacklog's chat A.
const backlogChat = int64(1000)

// backlogRun is what runBacklog saw: its env, the slowest of B..K (queued
// to delivered), A's messages delivered between queueing B..K and the last
// of them, A's messages (worker stopped) and A's rate over them (msg/s).
type backlogRun struct {
	e       *env
	worst   time.Duration
	aDuring int
	msgsA   []tgemu.Message
	rateA   float64
}

// runBacklog queues 200 replies to A, starts a worker (Telegram's limits on
// both sides), queues one reply to each of B..K once A is draining, waits
// for them, then for after more of A's messages, and stops the worker.
// Errors fail tb.
func runBacklog(tb testing.TB, after int) backlogRun {
	tb.Helper()
	e := newEnv(tb, envOpts{limits: notifier.DefaultLimits(), emuLimits: tgemu.DefaultLimits()})
	for i := range 200 {
		e.notify(backlogChat, "A "+itoa(i), notifier.Reply)
	}
	_, stop := e.start(e.config())
	e.waitMsgs(backlogChat, 2) // A is draining

	others := make([]int64, 10) // B..K
	for i := range others {
		others[i] = backlogChat + 1 + int64(i)
	}
	sentAt := time.Now()
	for _, c := range others {
		e.notify(c, "hello "+itoa(int(c)), notifier.Reply)
	}
	r := backlogRun{e: e}
	var last time.Time
	for _, c := range others {
		m := e.waitMsgs(c, 1)[0]
		r.worst = max(r.worst, m.Time.Sub(sentAt))
		if m.Time.After(last) {
			last = m.Time
		}
	}
	for _, m := range e.emu.Messages(backlogChat) {
		if m.Time.After(sentAt) && !m.Time.After(last) {
			r.aDuring++
		}
	}
	byLast := 0
	for _, m := range e.emu.Messages(backlogChat) {
		if !m.Time.After(last) {
			byLast++
		}
	}
	e.waitMsgs(backlogChat, byLast+after) // A keeps draining
	require.NoError(tb, stop())
	r.msgsA = e.emu.Messages(backlogChat)
	span := r.msgsA[len(r.msgsA)-1].Time.Sub(r.msgsA[0].Time)
	r.rateA = float64(len(r.msgsA)-1) / span.Seconds()
	return r
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
// not lost nor counted as an attempt: the stop returns long before the send
// would have ended (a delay of two minutes; the stop gets 20 s, the margin
// of a busy host) and the emulator records the request as given up.
func TestShutdownCutsSlowSendAndReleases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.emu.InjectFault(tgemu.Delay(2 * time.Minute).ForChat(7))
	e.notify(7, "slow", notifier.Reply)
	cfg := e.config()
	cfg.SendTimeout = 3 * time.Minute
	cfg.ShutdownGrace = 200 * time.Millisecond
	_, stop := e.start(cfg)
	require.Eventually(t, func() bool { _, inf := e.pending(); return inf == 1 }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, stop()) // fails the test when Run takes over its 20 s grace, a sixth of the send's delay
	reqs, err := e.emu.WaitForRequests(e.ctx, "sendMessage", 1)
	require.NoError(t, err)
	require.True(t, reqs[0].Canceled, "the send was cut")
	pending, inflight := e.pending()
	require.Equal(t, 1, pending)
	require.Zero(t, inflight)
	require.Empty(t, e.emu.Messages(7))
	e.start(e.config())
	require.Equal(t, "slow", e.waitMsgs(7, 1)[0].Text)
}

// The token never appears in logs, returned errors or dead letters, whatever
// goes wrong: connection resets, 5xx (HTML and JSON), non-JSON bodies, a bad
// server URL.
func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{maxAttempts: 2})
	e.emu.InjectFault(tgemu.DropConnection().ForChat(1).Times(-1))
	e.emu.InjectFault(tgemu.BadGateway().ForChat(2).Times(-1))
	e.emu.InjectFault(tgemu.InternalServerError().ForChat(3).Times(-1))
	e.emu.InjectFault(tgemu.NonJSON().ForChat(4).Times(-1))
	e.emu.InjectFault(tgemu.DropConnection().Processed().ForChat(5).Times(-1))
	for c := int64(1); c <= 5; c++ {
		e.notify(c, "x", notifier.Reply)
	}
	_, stop := e.start(e.config())
	dead := e.waitDead(tgjob.QueueReply, 5)
	require.NoError(t, stop())

	// A worker whose server URL cannot even be parsed: the parse error
	// quotes the whole request URL, token included (tgapi redacts it).
	bad := e.config()
	bad.ServerURL = "http://[::1"
	bad.Registerer = nil
	badLogs := &testkit.LogBuffer{}
	bad.Logger = slog.New(slog.NewJSONHandler(badLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.notify(6, "x", notifier.Notification)
	e.start(bad)
	dead = append(dead, e.waitDead(tgjob.QueueNotify, 1)...)

	for _, d := range dead {
		require.True(t, strings.HasPrefix(d.Reason, "transient: ") || strings.HasPrefix(d.Reason, worker.ReasonUnknownOutcome+": "), d.Reason)
		testkit.RequireNoToken(t, d.Reason, token, "dead letter "+d.Reason)
	}
	testkit.RequireNoToken(t, e.logs.String(), token, "logs")
	testkit.RequireNoToken(t, badLogs.String(), token, "logs")
	require.Contains(t, badLogs.String(), redact.Redacted, "the bad URL's error was logged, redacted")

	// Returned errors: an HTTP client's raw error (go-telegram/bot's here)
	// does carry the token (so the check above means something); the
	// redacted one does not, and still matches with errors.As.
	b, err := bot.New(token, bot.WithServerURL("http://[::1"), bot.WithSkipGetMe())
	require.NoError(t, err)
	_, raw := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: 1, Text: "x"})
	require.ErrorContains(t, raw, secretPart)
	red := redact.New(token).Error(raw)
	testkit.RequireNoToken(t, red.Error(), token, "redacted error")
	var ue *url.Error
	require.True(t, errors.As(red, &ue))

	_, err = worker.New(e.n, worker.Config{Token: " "})
	require.Error(t, err)
	testkit.RequireNoToken(t, err.Error(), token, "New error")
}

// ClaimRate spreads the sends over time: 60 messages for 60 chats, no
// limit anywhere but ClaimRate 40/s, 8 senders: without spreading all 60
// go out within ~50 ms; with it, by any time T at most 1 + claimCredit (4)
// + (T − start) × rate messages have arrived (a message arrives after its
// claim started, and the worker started after start), and the last one
// arrives (60 − 5) / rate after start or later. These bounds are exact
// whatever the machine's load. The claims' own spacing within any 250 ms
// (at most 10 + 4 + 1) is proven on the pacer's clock
// (TestClaimPacerBoundsHoldWhateverTheLoopsDelays): the emulator's arrival
// times add each send's scheduling delay, which bunches arrivals under
// load (16 arrivals in 250 ms seen at load 10).
func TestClaimRateSpreadsSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const n, rate, credit = 60, 40, 4
	for c := 1; c <= n; c++ {
		e.notify(int64(c), "spread", notifier.Notification)
	}
	cfg := e.config()
	cfg.ClaimRate = rate
	start := time.Now()
	e.start(cfg)
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	msgs, err := e.emu.WaitForTotalMessages(ctx, n)
	require.NoError(t, err)
	per := time.Second / rate
	for i, m := range msgs {
		// Message i+1 arrived at m.Time: i+1 claims (one message each)
		// had started by then, the first at start or later.
		require.GreaterOrEqual(t, m.Time.Sub(start), time.Duration(i-credit)*per, "message %d arrived before its claim may start", i+1)
	}
	t.Logf("%d messages over %v after start (at least %v)", n, msgs[n-1].Time.Sub(start).Round(time.Millisecond), time.Duration(n-1-credit)*per)
}

// TestShutdownWithValkeyDownIsBoundedAndLosesNothing: a send is in flight
// (Telegram delivers it and answers 1 s later) with two more messages of
// the chat in the same batch when Valkey goes away and the worker is told
// to stop. Settling (the delivered job's ack, the release of the rest of
// the batch) retries only until the drain deadline (ShutdownGrace + 2 s:
// the worker logs that it gives up there), so Run returns long before the
// 3 min a settle would retry for (SettleFor); with
// Valkey back, the unsettled jobs are claimed again once their leases
// expire, so every message arrives (at least once: the delivered one may
// arrive twice, documented).
func TestShutdownWithValkeyDownIsBoundedAndLosesNothing(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Start(t, valkeytest.Options{AppendOnly: true})
	e := newEnv(t, envOpts{srv: srv})
	const chat = int64(71)
	e.emu.InjectFault(tgemu.Delay(time.Second).Processed().ForChat(chat))
	want := []string{"m1", "m2", "m3"}
	for _, s := range want {
		e.notify(chat, s, notifier.Reply)
	}
	cfg := e.config()
	cfg.Lease = 3 * time.Second
	cfg.ShutdownGrace = 2 * time.Second
	cfg.SettleFor = 3 * time.Minute // what an unbounded settle would retry for
	w, err := worker.New(e.n, cfg)
	require.NoError(t, err)
	stop := testkit.RunInBackground(t, "worker", 2*time.Minute, w.Run)
	_, err = e.emu.WaitForTotalMessages(e.ctx, 1) // delivered, answer held 1 s
	require.NoError(t, err)

	srv.Kill()
	t0 := time.Now()
	require.NoError(t, stop())
	took := time.Since(t0)
	bound := cfg.ShutdownGrace + 2*time.Second // the drain deadline
	t.Logf("Run returned %v after cancel with Valkey down (drain deadline %v)", took.Round(time.Millisecond), bound)
	require.Contains(t, e.logs.String(), "giving up at the shutdown's drain deadline", "bounded by the drain deadline")
	require.Less(t, took, cfg.SettleFor/3, "not SettleFor (a third of it: the margin of a busy host)")

	srv.Restart(t)
	e.start(e.config())
	require.Eventually(t, func() bool {
		for _, s := range want {
			if e.copiesOf(chat, s) == 0 {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "every message arrives once its lease expired")
	require.Eventually(t, func() bool { p, inf := e.pending(); return p == 0 && inf == 0 }, 10*time.Second, 20*time.Millisecond)
	for _, s := range want {
		require.LessOrEqual(t, e.copiesOf(chat, s), 2, "%s: at most twice", s)
	}
	require.Empty(t, e.dead(tgjob.QueueReply))
}
