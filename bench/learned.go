package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/worker"
)

// Budgets that learn (issue 28, docs/delivery.md "Budgets that learn"): a
// reply burst against an emulator whose one global window counts replies
// (tgemu.RepliesInGlobal, no reply window of its own), 300 ms answers,
// Telegram's 1/s per chat. codemojex: the default config (TELEGRAM_GLOBAL_RATE=30,
// TELEGRAM_REPLY_RATE=100 apart, TELEGRAM_CHAT_RATE=1; the worker sizes its
// senders and claims at global + reply, as internal/app sets it), which
// learns the window from the 429s; baseline: a fixed rate that knows the
// window (TELEGRAM_REPLY_RATE=0, TELEGRAM_GLOBAL_RATE = the window), same
// run. Learning itself has no off switch (lanes.WithLearning's zero value is
// the defaults), so the baseline is the configuration a user who knew the
// limit would write.
const (
	learnedChats   = 40
	learnedPer     = 10
	learnedLatency = 300 * time.Millisecond
	learnedQuiet   = 10 * time.Second // 429s after this much of the run: goal 0
	learnedTimeout = 90 * time.Second
)

// learnedCell is one run's figures.
type learnedCell struct {
	delivered, sends, tooMany, tooManyLate int
	took                                   time.Duration // first send to the last acceptance
	learned                                string        // the reply budget's learned rate at the end
}

// perMille is 429s per 1,000 sends.
func perMille(n, sends int) float64 { return float64(n) * 1000 / float64(max(sends, 1)) }

func (c learnedCell) rate() float64 { return float64(c.delivered) / max(c.took.Seconds(), 1e-9) }

func benchLearned(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	for _, window := range []int{30, 50} {
		a, err := learnedRun(ctx, cfg, srv, window, notifier.DefaultLimits().GlobalPerSecond, 100)
		if err != nil {
			return err
		}
		b, err := learnedRun(ctx, cfg, srv, window, window, 0)
		if err != nil {
			return err
		}
		reach := min(window, learnedChats) // the chats' own 1/s bounds a 40-chat burst at 40/s
		t.add(fmt.Sprintf("%d replies from %d chats, Telegram's one window at %d/s counting replies, 300 ms answers: 429s per 1,000 sends over the whole run; after its first 10 s (sends; reply budget learned at the end); default config vs fixed `TELEGRAM_REPLY_RATE=0`, `TELEGRAM_GLOBAL_RATE=%d`",
			learnedChats*learnedPer, learnedChats, window, window),
			fmt.Sprintf("%.1f; %.1f (%d sends; %s)", perMille(a.tooMany, a.sends), perMille(a.tooManyLate, a.sends), a.sends, a.learned),
			fmt.Sprintf("%.1f; %.1f (%d sends)", perMille(b.tooMany, b.sends), perMille(b.tooManyLate, b.sends), b.sends),
			"goal ≤ 5; 0: "+verdict(perMille(a.tooMany, a.sends) <= 5 && a.tooManyLate == 0))
		t.add(fmt.Sprintf("the same, delivered ÷ true limit (%d delivered over first send to last acceptance, ÷ %d/s; in brackets ÷ %d/s, the lower of the window and %d chats at 1/s each)",
			learnedChats*learnedPer, window, reach, learnedChats),
			fmt.Sprintf("%.2f (%.2f; %.1f msg/s over %v)", a.rate()/float64(window), a.rate()/float64(reach), a.rate(), a.took.Round(10*time.Millisecond)),
			fmt.Sprintf("%.2f (%.2f; %.1f msg/s over %v)", b.rate()/float64(window), b.rate()/float64(reach), b.rate(), b.took.Round(10*time.Millisecond)),
			ratio(a.rate(), b.rate())+"; goal ≥ 0.9 of the limit (the bracket: the window or the chats' 1/s, whichever binds): "+verdict(a.rate()/float64(reach) >= 0.9))
	}
	return benchLearnedClimb(ctx, cfg, srv, t)
}

// The climb against a Telegram whose reply window is apart and higher
// (tgemu.RepliesApart): climbChats chats with climbPer replies each keep the
// replies waiting well above the ceiling, so the probed total climbs.
const (
	climbChats   = 300
	climbPer     = 40
	climbWindow  = 200 // the emulator's reply window, messages/s
	climbReply   = 100 // TELEGRAM_REPLY_RATE's default: the reply ceiling
	climbTimeout = 90 * time.Second
)

// benchLearnedClimb runs the default config against a separate reply
// window and reports how long the reply rate takes to reach 0.9 of the
// lower of its ceiling and the window (goal: within 60 s).
func benchLearnedClimb(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	if err := flush(ctx, srv); err != nil {
		return err
	}
	emu, err := tgemu.New(tgemu.WithLimits(tgemu.Limits{
		Global:  tgemu.Rate{Messages: 30, Per: time.Second},
		Reply:   tgemu.Rate{Messages: climbWindow, Per: time.Second},
		Replies: tgemu.RepliesApart,
		Private: tgemu.Rate{Messages: 1, Per: time.Second},
		Group:   tgemu.Rate{Messages: 20, Per: time.Minute},
	}), tgemu.WithAllowAnyChat(), tgemu.WithLatency(learnedLatency))
	if err != nil {
		return err
	}
	defer emu.Close()
	c, err := newClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	const tag = "climb"
	limits := notifier.DefaultLimits()
	limits.ReplyPerSecond, limits.ReplyLaneDepth = climbReply, climbPer
	store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(tag))
	if err != nil {
		return err
	}
	n, err := notifier.New(c, store, notifier.Config{})
	if err != nil {
		return err
	}
	for i := range climbPer {
		for ch := range climbChats {
			if _, err := n.Notify(ctx, int64(9001+ch), notifier.Message{Text: fmt.Sprintf("help %d", i), Class: notifier.Reply, ReplyTo: 7}); err != nil {
				return err
			}
		}
	}
	target := int(0.9 * float64(min(climbReply, climbWindow)))
	stop, err := startWorkerProcs(ctx, 1, srv, emu, tag, "-global", strconv.Itoa(limits.GlobalPerSecond), "-chat", "1",
		"-reply", strconv.Itoa(climbReply), "-senders", strconv.Itoa(worker.DefaultSenders))
	if err != nil {
		return err
	}
	var reached, peak, tooMany int
	var took time.Duration
	deadline := time.Now().Add(climbTimeout)
	for time.Now().Before(deadline) && reached == 0 {
		time.Sleep(500 * time.Millisecond)
		took, peak, tooMany, reached = climbSoFar(emu.Requests(), target)
	}
	learned := ""
	if lb, err := store.Inspector().Learned(ctx); err == nil {
		var parts []string
		for _, b := range lb {
			parts = append(parts, fmt.Sprintf("%s %d/%d", budgetLabel(b.Queue), b.Rate, b.Configured))
		}
		learned = strings.Join(parts, ", ")
	}
	if err := stop(); err != nil {
		return fmt.Errorf("worker process: %w", err)
	}
	cfg.log.Info("learned climb", "target", target, "reached", reached, "took", took, "peak", peak, "429s", tooMany, "learned", learned)
	got := fmt.Sprintf("%.1f s (reached %d msg/s; 429s %d; %s)", took.Seconds(), reached, tooMany, learned)
	if reached == 0 {
		got = fmt.Sprintf("≥ %v (peak %d msg/s; 429s %d; %s)", climbTimeout, peak, tooMany, learned)
	}
	t.add(fmt.Sprintf("%d chats × %d replies, Telegram's reply window apart from the bulk one and higher (%d/s; bulk 30/s), 300 ms answers, default config: first send → the reply rate reaches %d msg/s (0.9 × the lower of `TELEGRAM_REPLY_RATE`=%d and the window) in a 1 s window",
		climbChats, climbPer, climbWindow, target, climbReply),
		got, "limit: 60 s", "goal ≤ 60 s, 0 × 429: "+verdict(reached > 0 && took <= 60*time.Second && tooMany == 0))
	return nil
}

// climbSoFar reads the emulator's requests: from the first sendMessage to
// the end of the first 1 s window holding at least target acceptances
// (took; reached that window's count, 0 while none), the busiest 1 s
// window's count so far, and the 429s.
func climbSoFar(reqs []tgemu.Request, target int) (took time.Duration, peak, tooMany, reached int) {
	var first time.Time
	var acc []time.Time
	for _, r := range reqs {
		if !strings.EqualFold(r.Method, "sendMessage") || r.Canceled {
			continue
		}
		if first.IsZero() {
			first = r.Time
		}
		switch {
		case r.HTTPStatus == 429:
			tooMany++
		case r.MessageID != 0:
			acc = append(acc, r.Time)
		}
	}
	lo := 0
	for hi, at := range acc {
		for at.Sub(acc[lo]) >= time.Second {
			lo++
		}
		n := hi - lo + 1
		peak = max(peak, n)
		if n >= target && reached == 0 {
			reached, took = n, at.Sub(first)
		}
	}
	return took, peak, tooMany, reached
}

// learnedRun enqueues the burst, runs one worker process (flags as the
// default config's, -global global, -reply reply) until every reply is
// accepted or learnedTimeout, and reads the emulator's request log.
func learnedRun(ctx context.Context, cfg config, srv *valkeyserver.Server, window, global, reply int) (learnedCell, error) {
	var cell learnedCell
	if err := flush(ctx, srv); err != nil {
		return cell, err
	}
	emu, err := tgemu.New(tgemu.WithLimits(tgemu.Limits{
		Global:  tgemu.Rate{Messages: window, Per: time.Second},
		Private: tgemu.Rate{Messages: 1, Per: time.Second},
		Group:   tgemu.Rate{Messages: 20, Per: time.Minute},
		Replies: tgemu.RepliesInGlobal,
	}), tgemu.WithAllowAnyChat(), tgemu.WithLatency(learnedLatency))
	if err != nil {
		return cell, err
	}
	defer emu.Close()
	c, err := newClient(srv)
	if err != nil {
		return cell, err
	}
	defer c.Close()
	const tag = "learn"
	limits := notifier.DefaultLimits()
	limits.GlobalPerSecond, limits.ReplyPerSecond, limits.ReplyLaneDepth = global, reply, 100
	store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(tag))
	if err != nil {
		return cell, err
	}
	n, err := notifier.New(c, store, notifier.Config{})
	if err != nil {
		return cell, err
	}
	for i := range learnedPer {
		for ch := range learnedChats {
			if _, err := n.Notify(ctx, int64(7001+ch), notifier.Message{Text: fmt.Sprintf("help %d", i), Class: notifier.Reply, ReplyTo: 7}); err != nil {
				return cell, err
			}
		}
	}
	total := learnedChats * learnedPer
	stop, err := startWorkerProcs(ctx, 1, srv, emu, tag, "-global", strconv.Itoa(global), "-chat", "1",
		"-reply", strconv.Itoa(reply), "-senders", strconv.Itoa(worker.DefaultSenders))
	if err != nil {
		return cell, err
	}
	wctx, cancel := context.WithTimeout(ctx, learnedTimeout)
	_, werr := emu.WaitForTotalMessages(wctx, total)
	cancel()
	if lb, err := store.Inspector().Learned(ctx); err == nil {
		var parts []string
		for _, b := range lb {
			parts = append(parts, fmt.Sprintf("%s %d/%d", budgetLabel(b.Queue), b.Rate, b.Configured))
		}
		cell.learned = strings.Join(parts, ", ")
	}
	if err := stop(); err != nil {
		return cell, fmt.Errorf("worker process: %w", err)
	}
	var first, last time.Time
	for _, r := range emu.Requests() {
		if !strings.EqualFold(r.Method, "sendMessage") || r.Canceled {
			continue
		}
		if first.IsZero() {
			first = r.Time
		}
		cell.sends++
		switch {
		case r.HTTPStatus == 429:
			cell.tooMany++
			if r.Time.Sub(first) >= learnedQuiet {
				cell.tooManyLate++
			}
		case r.MessageID != 0:
			cell.delivered++
			last = r.Time
		}
	}
	cell.took = last.Sub(first)
	cfg.log.Info("learned", "window", window, "global", global, "reply", reply, "delivered", cell.delivered, "sends", cell.sends,
		"429s", cell.tooMany, "429s after 10s", cell.tooManyLate, "took", cell.took, "learned", cell.learned, "wait", werr)
	if werr != nil {
		return cell, fmt.Errorf("%d of %d replies delivered in %v: %w", cell.delivered, total, learnedTimeout, werr)
	}
	return cell, nil
}

// budgetLabel names a learned budget: its queue, or "global".
func budgetLabel(queue string) string {
	if queue == "" {
		return "global"
	}
	return queue
}
