package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/notifier"
)

// A paid broadcast (docs/delivery.md, "Paid broadcasts"; issue 20): one
// worker process with TELEGRAM_PAID_BROADCAST_RATE=1000 sends a paid
// broadcast to 20,000 chats, enqueued with notifier.Broadcast (Paid) as the
// app does, while 50 other chats each get a reply once a second. The
// emulator enforces Telegram's limits (30/s bulk, 1/s per chat, 1,000/s for
// sends with allow_paid_broadcast; replies on a window of their own of
// reply + bulk, see tgemu.Limits.Reply) and answers every request after
// paidLatency. Measured twice: the worker as internal/app configures it
// (ClaimRate = TELEGRAM_GLOBAL_RATE + TELEGRAM_REPLY_RATE +
// TELEGRAM_PAID_BROADCAST_RATE), and the baseline with the paid rate left
// out of ClaimRate (the app before); the replies' baseline is the same
// replies without a broadcast.
const (
	paidRate, paidBulk, paidReply = 1000, 30, 100
	paidAudience                  = 20_000
	paidReplyChats                = 50 // each gets a reply once a second
	paidLatency                   = 300 * time.Millisecond
	paidIdeal                     = time.Duration(paidAudience / paidRate * int(time.Second))
	// paidAfter is how long replies go on after the last copy (their own
	// way out), and how late a reply may be delivered to be counted.
	paidAfter = 2 * time.Second
	// paidReplyWindow is how long after the enqueue's start the replies
	// are measured, in every run (the baseline, without a broadcast, runs
	// that long).
	paidReplyWindow = 10 * time.Second
)

// paidResult is one run's figures.
type paidResult struct {
	last      time.Duration // enqueue start to the last paid copy (projected when not all arrived by the cap)
	done      bool          // every copy arrived before the cap
	copies    int           // paid copies delivered (to the audience)
	unflagged int           // copies to the audience without allow_paid_broadcast
	flagged   int           // replies sent with allow_paid_broadcast (must be 0)
	tooMany   int           // the emulator's 429s
	lat       latencies     // reply latency, enqueue to acceptance, replies enqueued in the reply window
	replies   int           // replies enqueued in the reply window
	late      int           // of those, not delivered by the end of the run
}

func benchPaidBroadcast(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	appRate := paidBulk + paidReply + paidRate
	runs := []struct {
		claimRate int
		limit     time.Duration
	}{
		{appRate, 30 * time.Second},             // as internal/app sets it: every budget
		{paidBulk + paidReply, paidReplyWindow}, // the baseline: claims spread for bulk + replies only (the app before); projected from its rate when it cannot finish
	}
	var res [2]paidResult
	for i, r := range runs {
		pr, err := paidRunOnce(ctx, cfg, srv, r.claimRate, r.limit, true)
		if err != nil {
			return err
		}
		res[i] = pr
	}
	// The replies' baseline: the same replies, no broadcast.
	base, err := paidRunOnce(ctx, cfg, srv, appRate, paidReplyWindow, false)
	if err != nil {
		return err
	}
	for i, r := range runs {
		pr := res[i]
		how, took, rt := "all arrived", fmt.Sprintf("%.1f s", pr.last.Seconds()), ratio(pr.last.Seconds(), paidIdeal.Seconds())
		if !pr.done {
			how = fmt.Sprintf("not finished: %s copies by %v, the time projected at that rate", commas(pr.copies), runs[i].limit)
			took, rt = "projection: "+took, "projection: "+rt
		}
		t.add(fmt.Sprintf("paid broadcast to %s chats at %d/s, Telegram answering after %v, one worker process with ClaimRate %d/s (%s): time from the enqueue to the last copy vs the ideal %v (%s; %s copies delivered, %d 429s, %d copies without allow_paid_broadcast, %d replies with it)",
			commas(paidAudience), paidRate, paidLatency, r.claimRate, claimRateName(r.claimRate, appRate), paidIdeal, how, commas(pr.copies), pr.tooMany, pr.unflagged, pr.flagged),
			took, fmt.Sprintf("limit: %.0f s (%s copies ÷ %d/s)", paidIdeal.Seconds(), commas(paidAudience), paidRate), rt)
	}
	for i, r := range runs {
		pr := res[i]
		t.add(fmt.Sprintf("reply latency p50 / p99 (enqueue to Telegram), %d chats × 1 reply/s, the first %v of the paid broadcast, ClaimRate %d/s vs the same replies without a broadcast (replies enqueued %s / %s, not delivered by the run's end %d / %d)",
			paidReplyChats, paidReplyWindow, r.claimRate, commas(pr.replies), commas(base.replies), pr.late, base.late),
			fmt.Sprintf("%v / %v", pr.lat.quantile(0.50), pr.lat.quantile(0.99)),
			fmt.Sprintf("%v / %v", base.lat.quantile(0.50), base.lat.quantile(0.99)),
			boundRatio(pr.lat.quantile(0.99), base.lat.quantile(0.99)))
	}
	return nil
}

func claimRateName(rate, appRate int) string {
	if rate == appRate {
		return "as internal/app sets it: TELEGRAM_GLOBAL_RATE + TELEGRAM_REPLY_RATE + TELEGRAM_PAID_BROADCAST_RATE"
	}
	return "baseline: TELEGRAM_GLOBAL_RATE + TELEGRAM_REPLY_RATE only, the paid rate left out of the claims' spreading"
}

// paidRunOnce runs one paid broadcast (without broadcast: the replies
// alone, the baseline of their latency) with the worker's ClaimRate set to claimRate, for at most
// limit after the enqueue starts (at least paidReplyWindow).
func paidRunOnce(ctx context.Context, cfg config, srv *valkeyserver.Server, claimRate int, limit time.Duration, broadcast bool) (paidResult, error) {
	var res paidResult
	rig, err := newPaidRig(ctx, srv, "paid"+strconv.Itoa(claimRate)+strconv.FormatBool(broadcast), paidLatency, claimRate)
	if err != nil {
		return res, err
	}
	defer rig.Close()
	emu, p := rig.emu, rig.p

	// Replies: chat 1 + i%paidReplyChats, paidReplyChats per second in all.
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	var mu sync.Mutex
	sent := map[string]time.Time{}
	var rwg sync.WaitGroup
	var rerr error
	rwg.Go(func() {
		tick := time.NewTicker(time.Second / paidReplyChats)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-tick.C:
			case <-rctx.Done():
				return
			}
			text := fmt.Sprintf("reply %d", i)
			at := time.Now()
			if _, err := p.n.Notify(rctx, int64(1+i%paidReplyChats), notifier.Message{Text: text, Class: notifier.Reply, ReplyTo: 1}); err != nil {
				if rctx.Err() == nil {
					rerr = fmt.Errorf("reply: %w", err)
				}
				return
			}
			mu.Lock()
			sent[text] = at
			mu.Unlock()
		}
	})
	// The worker is up once it delivered a reply.
	if _, err := emu.WaitForTotalMessages(ctx, 1); err != nil {
		return res, err
	}
	sleepCtx(ctx, 2*time.Second) // replies in their steady state

	audience := make([]int64, paidAudience)
	chat := map[int64]bool{}
	for i := range audience {
		audience[i] = int64(200_001 + i)
		chat[audience[i]] = true
	}
	t0 := time.Now()
	var enqueued time.Duration
	if broadcast {
		if _, err := p.n.Broadcast(ctx, audience, notifier.Message{Text: "paid announcement", Paid: true}); err != nil {
			return res, fmt.Errorf("paid broadcast: %w", err)
		}
		enqueued = time.Since(t0)
	}
	deadline := t0.Add(max(limit, paidReplyWindow))
	for time.Now().Before(deadline) && (!broadcast || emu.PaidSent() < paidAudience) && ctx.Err() == nil {
		sleepCtx(ctx, 50*time.Millisecond)
	}
	end := time.Now()
	for time.Now().Before(t0.Add(paidReplyWindow)) && ctx.Err() == nil { // the replies' window
		sleepCtx(ctx, 50*time.Millisecond)
	}
	sleepCtx(ctx, paidAfter)
	rcancel()
	stopAt := time.Now()
	rwg.Wait()
	if err := rig.stopWorker(); err != nil {
		return res, fmt.Errorf("worker process: %w", err)
	}
	if rerr != nil {
		return res, rerr
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}

	lastCopy := res.tally(emu.AllMessages(), chat, sent, t0, end, stopAt)
	res.done = res.copies >= paidAudience || !broadcast
	switch {
	case res.done:
		res.last = lastCopy.Sub(t0)
	case res.copies > 0:
		// Projected at the rate of the copies so far.
		res.last = time.Duration(float64(end.Sub(t0)) * paidAudience / float64(res.copies))
	}
	res.tooMany = emu.Stats().TooManyRequests
	if !broadcast {
		cfg.log.Info("replies without a broadcast", "429s", res.tooMany, "replies", res.replies, "p50", res.lat.quantile(0.50), "p99", res.lat.quantile(0.99), "late", res.late)
		return res, nil
	}
	cfg.log.Info("paid broadcast", "claim rate", claimRate, "enqueue", enqueued.Round(time.Millisecond), "copies", res.copies, "done", res.done,
		"last", res.last.Round(time.Millisecond), "ratio", fmt.Sprintf("%.2f", res.last.Seconds()/paidIdeal.Seconds()), "429s", res.tooMany,
		"unflagged", res.unflagged, "flagged replies", res.flagged, "replies", res.replies, "p50", res.lat.quantile(0.50), "p99", res.lat.quantile(0.99), "late", res.late)
	return res, nil
}

// tally counts a run's messages into res: the copies to the audience
// (chat) accepted by end, those without the paid flag, the replies (sent:
// text -> enqueued at) with it, the latency of each reply enqueued in the
// window from t0 (one not delivered: how long it had waited at stopAt).
// It returns the last copy's acceptance.
func (res *paidResult) tally(msgs []tgemu.Message, chat map[int64]bool, sent map[string]time.Time, t0, end, stopAt time.Time) time.Time {
	var lastCopy time.Time
	delivered := map[string]bool{}
	for _, m := range msgs {
		switch {
		case chat[m.ChatID]:
			if !m.Time.After(end) {
				res.copies++
			}
			if !m.Paid {
				res.unflagged++
			}
			if m.Time.After(lastCopy) {
				lastCopy = m.Time
			}
		default:
			if m.Paid {
				res.flagged++
			}
			if at, ok := sent[m.Text]; ok && inWindow(at, t0) && !delivered[m.Text] {
				delivered[m.Text] = true
				res.lat.delivered = append(res.lat.delivered, m.Time.Sub(at))
			}
		}
	}
	// A reply not delivered had waited until the end of the run, at least.
	for text, at := range sent {
		if inWindow(at, t0) {
			res.replies++
			if !delivered[text] {
				res.late++
				res.lat.waited = append(res.lat.waited, stopAt.Sub(at))
			}
		}
	}
	return lastCopy
}

// inWindow reports whether a reply enqueued at at falls in the replies'
// measured window, paidReplyWindow from t0.
func inWindow(at, t0 time.Time) bool {
	return !at.Before(t0) && at.Before(t0.Add(paidReplyWindow))
}

// paidRig is the rig of a paid broadcast run (this section's and the lazy
// section's): a flushed server; the emulator enforcing Telegram's limits
// (30/s bulk, 1/s per chat, 1,000/s paid; replies on a window of their own
// of reply + bulk) and answering every request after lat; a pipeline on tag;
// one worker process at the same budgets (TELEGRAM_PAID_BROADCAST_RATE=1000)
// with ClaimRate claimRate (extra: more flags of the worker role).
type paidRig struct {
	emu     *tgemu.Emulator
	p       *pipeline
	proc    *exec.Cmd // the worker process
	stop    func() error
	stopped bool
}

// newPaidRig sets the rig up (see paidRig). Errors: the server's, the
// emulator's, the worker process's start.
func newPaidRig(ctx context.Context, srv *valkeyserver.Server, tag string, lat time.Duration, claimRate int, extra ...string) (*paidRig, error) {
	if err := flush(ctx, srv); err != nil {
		return nil, err
	}
	emu, err := tgemu.New(tgemu.WithLimits(paidEmuLimits()), tgemu.WithAllowAnyChat(), tgemu.WithLatency(lat))
	if err != nil {
		return nil, err
	}
	p, err := newPipeline(srv, tag)
	if err != nil {
		emu.Close()
		return nil, err
	}
	args := append([]string{"-global", strconv.Itoa(paidBulk), "-chat", "1",
		"-reply", strconv.Itoa(paidReply), "-paid", strconv.Itoa(paidRate), "-claim-rate", strconv.Itoa(claimRate),
		"-senders", strconv.Itoa(deliveryCap)}, extra...)
	stop, procs, err := startWorkerCmds(ctx, 1, srv, emu, tag, args...)
	if err != nil {
		p.Close()
		emu.Close()
		return nil, err
	}
	return &paidRig{emu: emu, p: p, proc: procs[0], stop: stop}, nil
}

// paidEmuLimits are Telegram's limits as the paid rig's emulator enforces
// them: 30/s bulk, 1/s per chat, 1,000/s paid, and replies on a window of
// their own of reply + bulk (tgemu.Limits.Reply, tgemu.RepliesApart).
func paidEmuLimits() tgemu.Limits {
	limits := tgemu.DefaultLimits()
	limits.Reply = tgemu.Rate{Messages: paidReply + paidBulk, Per: time.Second}
	limits.Replies = tgemu.RepliesApart
	return limits
}

// stopWorker stops the worker process (SIGTERM, then waits for it) once;
// later calls return nil. Errors: the process's exit.
func (r *paidRig) stopWorker() error {
	if r.stopped {
		return nil
	}
	r.stopped = true
	return r.stop()
}

// Close stops the worker process if it still runs and closes the pipeline
// and the emulator.
func (r *paidRig) Close() {
	_ = r.stopWorker()
	r.p.Close()
	r.emu.Close()
}
