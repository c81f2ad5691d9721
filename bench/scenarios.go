package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

const (
	burstChat  = int64(1)
	burstSize  = 1000
	quietChats = 10
	quietEvery = 250 * time.Millisecond
	quietFor   = 5 * time.Second
)

// fairRun is one fairness run: when each message was enqueued and when the
// emulator accepted it.
type fairRun struct {
	start    time.Time
	enqueued map[string]time.Time
	msgs     []tgemu.Message
}

func (r fairRun) quietLatencies() []time.Duration {
	var out []time.Duration
	for _, m := range r.msgs {
		if m.ChatID != burstChat {
			out = append(out, m.Time.Sub(r.enqueued[m.Text]))
		}
	}
	return out
}

// series returns, per chat, the delivery times in seconds since the start.
func (r fairRun) series() map[int64][]float64 {
	out := map[int64][]float64{}
	for _, m := range r.msgs {
		out[m.ChatID] = append(out[m.ChatID], m.Time.Sub(r.start).Seconds())
	}
	return out
}

// fairness drives one run: a burst of 1,000 messages to one chat, then 10
// quiet chats each sending a message every 250 ms for 5 s, all on one
// queue class, until everything is delivered.
func fairness(ctx context.Context, emu *tgemu.Emulator, enqueue func(ctx context.Context, chat int64, text string) error) (fairRun, error) {
	r := fairRun{enqueued: map[string]time.Time{}}
	var mu sync.Mutex
	send := func(chat int64, text string) error {
		mu.Lock()
		r.enqueued[text] = time.Now()
		mu.Unlock()
		return enqueue(ctx, chat, text)
	}
	r.start = time.Now()
	for i := range burstSize {
		if err := send(burstChat, fmt.Sprintf("burst #%d", i)); err != nil {
			return r, err
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, quietChats)
	for q := range quietChats {
		chat := int64(101 + q)
		wg.Go(func() {
			// Stagger the chats over one period.
			sleepCtx(ctx, time.Duration(q)*quietEvery/quietChats)
			tick := time.NewTicker(quietEvery)
			defer tick.Stop()
			for i := range int(quietFor / quietEvery) {
				if err := send(chat, fmt.Sprintf("quiet %d #%d", chat, i)); err != nil {
					errs <- err
					return
				}
				select {
				case <-tick.C:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return r, err
	}
	total := burstSize + quietChats*int(quietFor/quietEvery)
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	msgs, err := emu.WaitForTotalMessages(wctx, total)
	r.msgs = msgs
	if err != nil {
		return r, err
	}
	return r, nil
}

func benchFairness(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	// codemojex: notifier + lanes + the real worker.
	emu, err := newEmulator()
	if err != nil {
		return err
	}
	p, err := newPipeline(srv, "fair")
	if err != nil {
		emu.Close()
		return err
	}
	stop, err := p.runWorker(ctx, emu)
	if err != nil {
		return err
	}
	cm, err := fairness(ctx, emu, func(ctx context.Context, chat int64, text string) error {
		_, err := p.n.Notify(ctx, chat, notifier.Message{Text: text, Class: notifier.Notification})
		return err
	})
	if e := stop(); e != nil && err == nil {
		err = e
	}
	st := emu.Stats()
	p.Close()
	emu.Close()
	if err != nil {
		return fmt.Errorf("codemojex run: %w", err)
	}
	cfg.log.Info("fairness codemojex", "429s", st.TooManyRequests)

	// FIFO: one list, same limits, same senders.
	emu, err = newEmulator()
	if err != nil {
		return err
	}
	defer emu.Close()
	c, err := newClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := newFIFO(c, emu)
	if err != nil {
		return err
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.run(fctx) }()
	ff, err := fairness(ctx, emu, f.push)
	cancel()
	if e := <-done; e != nil && err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("fifo run: %w", err)
	}
	fst := emu.Stats()
	cfg.log.Info("fairness fifo", "429s", fst.TooManyRequests)

	cl, fl := cm.quietLatencies(), ff.quietLatencies()
	c50, c95, f50, f95 := percentile(cl, 0.5), percentile(cl, 0.95), percentile(fl, 0.5), percentile(fl, 0.95)
	cfg.log.Info("quiet latency", "codemojex p50", c50, "p95", c95, "fifo p50", f50, "p95", f95)
	t.add(fmt.Sprintf("quiet-chat message latency p50 (p95) while chat 1 bursts %s messages; %d quiet chats, one message each per %v (lower is better)",
		commas(burstSize), quietChats, quietEvery),
		fmt.Sprintf("%s (%s)", ms(c50), ms(c95)), fmt.Sprintf("FIFO %s (%s)", ms(f50), ms(f95)), ratio(float64(c50), float64(f50)))
	t.add("burst fully delivered after (same limits, so about equal)",
		fmt.Sprintf("%.1f s", lastOf(cm, burstChat)), fmt.Sprintf("FIFO %.1f s", lastOf(ff, burstChat)), ratio(lastOf(cm, burstChat), lastOf(ff, burstChat)))
	if err := burstChart(filepath.Join(cfg.docs, "bench-burst.png"), cm.series(), ff.series()); err != nil {
		return err
	}
	t.chart("bench-burst.png", "messages delivered per chat over time during the burst: codemojex beside the FIFO")
	return nil
}

func lastOf(r fairRun, chat int64) float64 {
	s := r.series()[chat]
	if len(s) == 0 {
		return 0
	}
	return slices.Max(s)
}

// benchWeights: 30 chats with backlogs, the global rate binds, chat 201 has
// weight 5, set once for every queue; its delivered messages against the
// median chat's over a window, for a backlog of replies and then for one of
// notifications (each run on a fresh emulator and empty queues).
func benchWeights(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	p, err := newPipeline(srv, "weights")
	if err != nil {
		return err
	}
	defer p.Close()
	chats := make([]int64, 30)
	for i := range chats {
		chats[i] = int64(201 + i)
	}
	heavy := chats[0]
	if err := p.store.Inspector().SetWeight(ctx, itoa(heavy), 5); err != nil {
		return err
	}
	run := 6 * time.Second
	if cfg.quick {
		run = 3 * time.Second
	}
	for _, q := range []struct{ queue, what string }{{tgjob.QueueReply, "replies"}, {tgjob.QueueNotify, "notifications"}} {
		counts, rate, err := weightedRun(ctx, p, q.queue, chats, run)
		if err != nil {
			return err
		}
		var others []int
		for _, ch := range chats[1:] {
			others = append(others, counts[ch])
		}
		slices.Sort(others)
		med := others[len(others)/2]
		cfg.log.Info("weights", "queue", q.queue, "heavy", counts[heavy], "median", med, "msg/s", rate)
		t.add(fmt.Sprintf("weighted share of %s: 30 chats with backlogs, global %d/s binding (%.0f msg/s delivered), one chat at weight 5: its messages vs the median chat's",
			q.what, benchGlobal, rate),
			fmt.Sprintf("%d msgs", counts[heavy]), fmt.Sprintf("median %d msgs", med), ratio(float64(counts[heavy]), float64(med)))
		if q.queue == tgjob.QueueReply {
			if err := weightsChart(filepath.Join(cfg.docs, "bench-weights.png"), chats, counts, heavy); err != nil {
				return err
			}
			t.chart("bench-weights.png", "messages each chat got in the steady window, the weight-5 chat in red (replies)")
		}
	}
	return nil
}

// weightedRun queues a backlog of 400 messages per chat on queue, runs the
// worker for run and returns the messages each chat got in the steady
// window (from 1 s after the start to the stop) and the delivered rate
// (msg/s). It leaves the queue empty (what is left is dead-lettered).
func weightedRun(ctx context.Context, p *pipeline, queue string, chats []int64, run time.Duration) (map[int64]int, float64, error) {
	emu, err := newEmulator()
	if err != nil {
		return nil, 0, err
	}
	defer emu.Close()
	if err := p.backlog(ctx, queue, chats, 400); err != nil {
		return nil, 0, err
	}
	stop, err := p.runWorker(ctx, emu)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	sleepCtx(ctx, run)
	if err := stop(); err != nil {
		return nil, 0, err
	}
	if err := emu.Stats().TooManyRequests; err != 0 {
		return nil, 0, fmt.Errorf("weights: %d 429s", err)
	}
	from := start.Add(time.Second)
	counts := map[int64]int{}
	var times []time.Time
	for _, m := range emu.AllMessages() {
		if !m.Time.Before(from) {
			counts[m.ChatID]++
			times = append(times, m.Time)
		}
	}
	for _, ch := range chats {
		if _, err := p.store.Inspector().DeadLane(ctx, queue, tgjob.Group(ch), "bench: run over"); err != nil {
			return nil, 0, err
		}
	}
	return counts, slope(times), nil
}

// benchBudget: delivered messages/s over the configured global limit with
// one and with two worker processes.
func benchBudget(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	run := 8 * time.Second
	if cfg.quick {
		run = 4 * time.Second
	}
	for _, procs := range []int{1, 2} {
		if err := flush(ctx, srv); err != nil {
			return err
		}
		emu, err := newEmulator()
		if err != nil {
			return err
		}
		tag := fmt.Sprintf("budget%d", procs)
		p, err := newPipeline(srv, tag)
		if err != nil {
			emu.Close()
			return err
		}
		chats := make([]int64, 300)
		for i := range chats {
			chats[i] = int64(1001 + i)
		}
		if err := p.backlog(ctx, tgjob.QueueNotify, chats, 15); err != nil {
			return err
		}
		stop, err := startWorkerProcs(ctx, procs, srv, emu, tag)
		if err != nil {
			return err
		}
		// The window starts at the first delivery plus 1 s (process start
		// and warm-up excluded).
		if _, err := emu.WaitForTotalMessages(ctx, 1); err != nil {
			_ = stop()
			return err
		}
		first := time.Now()
		sleepCtx(ctx, run+time.Second)
		from, to := first.Add(time.Second), time.Now()
		stopErr := stop()
		var times []time.Time
		for _, m := range emu.AllMessages() {
			if !m.Time.Before(from) && m.Time.Before(to) {
				times = append(times, m.Time)
			}
		}
		n := len(times)
		st := emu.Stats()
		if cfg.debug {
			hist := map[int]int{}
			for _, m := range emu.AllMessages() {
				hist[int(m.Time.Sub(first)/time.Second)]++
			}
			cfg.log.Debug("budget per second", "hist", hist, "n", n, "from", from.Sub(first), "to", to.Sub(first))
		}
		p.Close()
		emu.Close()
		if stopErr != nil {
			return fmt.Errorf("worker processes: %w", stopErr)
		}
		// Deliveries come in steps (the budget refills as a sliding window),
		// so the rate is the least-squares slope of the cumulative count,
		// not count/window, which an edge step skews by up to 1/window.
		got := slope(times)
		cfg.log.Info("budget", "procs", procs, "msg/s", got, "429s", st.TooManyRequests, "max/s", st.MaxPerSecond)
		t.add(fmt.Sprintf("Telegram budget use, %d worker process(es): delivered msg/s vs the global limit; %d 429s, busiest 1 s window %d",
			procs, st.TooManyRequests, st.MaxPerSecond),
			fmt.Sprintf("%.0f msg/s", got), fmt.Sprintf("limit: %d msg/s", benchGlobal), ratio(got, benchGlobal))
	}
	return nil
}

// slope is the least-squares slope (per second) of i against times[i].
func slope(times []time.Time) float64 {
	if len(times) < 2 {
		return 0
	}
	t0 := times[0]
	var sx, sy, sxx, sxy float64
	for i, t := range times {
		x, y := t.Sub(t0).Seconds(), float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(times))
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}
