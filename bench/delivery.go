package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

// Delivery at Telegram's real speed (issue 20, docs/delivery.md): the
// emulator answers every send after a latency; the worker processes size
// their senders from the budget (rate × measured round trip × 1.25 + 2, at
// most worker.DefaultSenders) and settle each send with their round-trip
// floor (lanes counts it from its latest possible arrival), the baseline is the fixed pool of 8 senders
// the worker had before, in the same run. Per-chat limits are set out of
// the way (100/s) so the global limit is what binds.
const (
	deliveryChat   = 100             // per-chat limit, messages/s (not binding)
	deliverySettle = 1 * time.Second // after the first delivery, before the window
	deliveryCap    = worker.DefaultSenders
	deliveryFixed  = 8                       // the baseline's fixed pool
	deliveryMaxLat = 1000 * time.Millisecond // the slowest cell
)

// deliveryCell is one measured cell.
type deliveryCell struct {
	got, cpuPerMsg  float64 // delivered msg/s; worker+server CPU µs per delivered message
	tooMany, busy   int     // 429s; busiest 1 s window
	rssMiB          float64 // worker processes' resident memory at the window's end
	conns           int     // worker processes' open TCP sockets at the window's end
	delivered       int
	workerCPU, vCPU time.Duration
}

// deliveryRatesEnv narrows the delivery section to some limits (comma-
// separated messages/s, e.g. "1000"; empty: 30 and 1000), and
// deliveryBaselineEnv=0 skips the fixed pool's cells (its columns then read
// 0): for paired runs of two builds of the worker.
const (
	deliveryRatesEnv    = "CODEMOJEX_BENCH_DELIVERY_RATES"
	deliveryBaselineEnv = "CODEMOJEX_BENCH_DELIVERY_BASELINE"
)

// deliveryRates is the limits the delivery section measures (see
// deliveryRatesEnv).
func deliveryRates() ([]int, error) {
	v := strings.TrimSpace(os.Getenv(deliveryRatesEnv))
	if v == "" {
		return []int{30, 1000}, nil
	}
	var rates []int
	for _, f := range strings.Split(v, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("%s=%q: want positive messages/s, comma-separated", deliveryRatesEnv, v)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

func benchDelivery(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	lats := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, deliveryMaxLat}
	rates, err := deliveryRates()
	if err != nil {
		return err
	}
	modes := []bool{false, true}
	if os.Getenv(deliveryBaselineEnv) == "0" {
		modes = modes[:1]
	}
	for _, rate := range rates {
		for _, lat := range lats {
			for _, procs := range []int{1, 2} {
				var cells [2]deliveryCell
				for i, fixed := range modes {
					c, err := deliveryRun(ctx, cfg, srv, rate, lat, procs, fixed)
					if err != nil {
						return err
					}
					cells[i] = c
				}
				a, b := cells[0], cells[1]
				t.add(fmt.Sprintf("delivered ÷ limit, %d/s limit, Telegram answering after %v, %d worker process(es): senders from the budget vs fixed %d (429s %d / %d, busiest 1 s %d / %d)",
					rate, lat, procs, deliveryFixed, a.tooMany, b.tooMany, a.busy, b.busy),
					fmt.Sprintf("%.2f (%.0f msg/s)", a.got/float64(rate), a.got), fmt.Sprintf("%.2f (%.0f msg/s)", b.got/float64(rate), b.got), ratio(a.got, b.got))
				if rate == 1000 && procs == 1 && (lat == 0 || lat == 300*time.Millisecond) {
					t.add(fmt.Sprintf("CPU per delivered message (worker process + server), 1000/s, %v: senders from the budget vs fixed %d (lower is better)", lat, deliveryFixed),
						fmt.Sprintf("%.0f µs", a.cpuPerMsg), fmt.Sprintf("%.0f µs", b.cpuPerMsg), ratio(a.cpuPerMsg, b.cpuPerMsg))
				}
				if rate == 1000 && procs == 1 && lat == deliveryMaxLat {
					t.add(fmt.Sprintf("worker process memory (RSS) and open TCP sockets, 1000/s at %v: senders from the budget vs fixed %d", lat, deliveryFixed),
						fmt.Sprintf("%.0f MiB, %d sockets", a.rssMiB, a.conns), fmt.Sprintf("%.0f MiB, %d sockets", b.rssMiB, b.conns), ratio(a.rssMiB, b.rssMiB))
				}
			}
		}
	}
	return nil
}

// deliveryRun measures one cell: a backlog on many chats, procs worker
// processes, the delivered rate over three steps of the budget (one window
// plus the latency each) once deliverySettle has passed since the first
// delivery.
func deliveryRun(ctx context.Context, cfg config, srv *valkeyserver.Server, rate int, lat time.Duration, procs int, fixed bool) (deliveryCell, error) {
	var cell deliveryCell
	if err := flush(ctx, srv); err != nil {
		return cell, err
	}
	emu, err := tgemu.New(tgemu.WithLimits(tgemu.ScaledLimits(rate, deliveryChat, 20)), tgemu.WithAllowAnyChat(), tgemu.WithLatency(lat))
	if err != nil {
		return cell, err
	}
	defer emu.Close()
	tag := fmt.Sprintf("dl%d", rate)
	p, err := newPipeline(srv, tag)
	if err != nil {
		return cell, err
	}
	defer p.Close()
	// One message per chat, as a broadcast's copies (so no settle makes
	// its lane rejoin the ring and wake the claimers: the settle's own
	// wake-up must, lanes budgetwait), enough for the whole run.
	measure := 3 * (time.Second + lat)
	need := int(float64(rate) * (deliverySettle + measure + lat + 2*time.Second).Seconds())
	nchats := max(need, 60)
	per := 1
	chats := make([]int64, nchats)
	for i := range chats {
		chats[i] = int64(5001 + i)
	}
	if err := p.backlog(ctx, tgjob.QueueNotify, chats, per); err != nil {
		return cell, err
	}
	extra := []string{"-global", strconv.Itoa(rate), "-chat", strconv.Itoa(deliveryChat), "-senders", strconv.Itoa(deliveryCap)}
	if fixed {
		extra = []string{"-global", strconv.Itoa(rate), "-chat", strconv.Itoa(deliveryChat),
			"-senders", strconv.Itoa(deliveryFixed), "-min-senders", strconv.Itoa(deliveryFixed)}
	}
	v0, err := serverCPU(ctx, srv)
	if err != nil {
		return cell, err
	}
	stop, cmds, err := startWorkerCmds(ctx, procs, srv, emu, tag, extra...)
	if err != nil {
		return cell, err
	}
	if _, err := emu.WaitForTotalMessages(ctx, 1); err != nil {
		_ = stop()
		return cell, err
	}
	first := time.Now()
	// Measured over three steps of one window plus the latency (what a
	// budget step was when a send counted until one window after its
	// answer; the fixed pool still delivers in such steps).
	sleepCtx(ctx, deliverySettle+measure)
	from, to := first.Add(deliverySettle), time.Now()
	for _, c := range cmds {
		rss, conns := procFootprint(c.Process.Pid)
		cell.rssMiB += rss
		cell.conns += conns
	}
	stopErr := stop()
	v1, err := serverCPU(ctx, srv)
	if err != nil {
		return cell, err
	}
	if stopErr != nil {
		return cell, fmt.Errorf("worker processes: %w", stopErr)
	}
	var times []time.Time
	all := emu.AllMessages()
	for _, m := range all {
		if !m.Time.Before(from) && m.Time.Before(to) {
			times = append(times, m.Time)
		}
	}
	for _, c := range cmds {
		cell.workerCPU += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	}
	cell.vCPU = v1 - v0
	cell.delivered = len(all)
	if cell.delivered > 0 {
		cell.cpuPerMsg = float64((cell.workerCPU + cell.vCPU).Microseconds()) / float64(cell.delivered)
	}
	st := emu.Stats()
	cell.tooMany, cell.busy = st.TooManyRequests, st.MaxPerSecond
	cell.got = slope(times)
	cfg.log.Info("delivery", "rate", rate, "latency", lat, "procs", procs, "fixed", fixed, "msg/s", fmt.Sprintf("%.1f", cell.got),
		"ratio", fmt.Sprintf("%.2f", cell.got/float64(rate)), "429s", cell.tooMany, "max/s", cell.busy,
		"cpu/msg", fmt.Sprintf("%.0fµs", cell.cpuPerMsg), "rss", fmt.Sprintf("%.0fMiB", cell.rssMiB), "sockets", cell.conns)
	return cell, nil
}

// serverCPU is the server's used_cpu_user + used_cpu_sys (INFO cpu).
func serverCPU(ctx context.Context, srv *valkeyserver.Server) (time.Duration, error) {
	c, err := srv.NewClient()
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	return clientCPU(ctx, c)
}

// clientCPU is the used_cpu_user + used_cpu_sys (INFO cpu) of the server c
// talks to (a node's own client for a cluster node: NodeClient).
func clientCPU(ctx context.Context, c valkey.Client) (time.Duration, error) {
	info, err := c.Do(ctx, c.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		return 0, fmt.Errorf("info cpu: %w", err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("info cpu %s: %w", k, err)
			}
			total += f
		}
	}
	return time.Duration(total * float64(time.Second)), nil
}

// procFootprint is a process's resident memory (MiB, VmRSS) and its open
// TCP sockets (socket descriptors in /proc/<pid>/fd); zeros when unreadable.
func procFootprint(pid int) (float64, int) {
	var rss float64
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				rss = kb / 1024
			}
		}
	}
	socks := 0
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
				socks++
			}
		}
	}
	return rss, socks
}

// Replies during a free broadcast (two budgets, docs/delivery.md): a
// 10,000-chat broadcast at the bulk limit (30/s) while 100 chats each get a
// reply per second (100/s); reply latency from enqueue to Telegram's
// acceptance. Baseline: one shared budget (TELEGRAM_REPLY_RATE=0), where
// 130 messages/s of demand meet 30/s.
const (
	replyBulk, replyRate, replyChats = 30, 100, 100
	replyRun                         = 8 * time.Second
)

func benchReplyDuringBroadcast(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	var lats [2]latencies
	for i, reply := range []int{replyRate, 0} {
		lat, tooMany, err := replyRunOnce(ctx, cfg, srv, reply)
		if err != nil {
			return err
		}
		lats[i] = lat
		cfg.log.Info("replies during a broadcast", "reply budget", reply, "p50", lat.quantile(0.50), "p99", lat.quantile(0.99),
			"undelivered", len(lat.waited), "429s", tooMany)
	}
	own, shared := lats[0], lats[1]
	t.add(fmt.Sprintf("reply latency p50 / p99 (enqueue to Telegram), %d chats × 1 reply/s during a 10,000-chat broadcast at %d/s, %v: replies' own budget (%d/s) vs one shared budget (lower is better; replies not delivered by the end %d / %d of %d / %d)",
		replyChats, replyBulk, replyRun, replyRate, len(own.waited), len(shared.waited),
		len(own.delivered)+len(own.waited), len(shared.delivered)+len(shared.waited)),
		fmt.Sprintf("%v / %v", own.quantile(0.50), own.quantile(0.99)),
		fmt.Sprintf("%v / %v", shared.quantile(0.50), shared.quantile(0.99)),
		boundRatio(own.quantile(0.99), shared.quantile(0.99)))
	return nil
}

// replyRunOnce runs one side of benchReplyDuringBroadcast (reply: the
// replies' own budget, 0 for one shared budget) and returns the replies'
// latencies (an undelivered one: how long it had waited when the worker
// stopped) and the emulator's 429s.
func replyRunOnce(ctx context.Context, cfg config, srv *valkeyserver.Server, reply int) (lat latencies, tooMany int, err error) {
	if err := flush(ctx, srv); err != nil {
		return latencies{}, 0, err
	}
	limits := tgemu.Limits{
		Global:  tgemu.Rate{Messages: replyBulk, Per: time.Second},
		Private: tgemu.Rate{Messages: 1, Per: time.Second},
	}
	if reply > 0 {
		limits.Reply = tgemu.Rate{Messages: reply, Per: time.Second}
		limits.Replies = tgemu.RepliesApart // replies' own budget, apart from bulk
	}
	emu, err := tgemu.New(tgemu.WithLimits(limits), tgemu.WithAllowAnyChat())
	if err != nil {
		return latencies{}, 0, err
	}
	defer emu.Close()
	tag := fmt.Sprintf("rp%d", reply)
	p, err := newPipeline(srv, tag)
	if err != nil {
		return latencies{}, 0, err
	}
	defer p.Close()
	audience := make([]int64, 10_000)
	for i := range audience {
		audience[i] = int64(100_001 + i)
	}
	if err := p.backlog(ctx, tgjob.QueueNotify, audience, 1); err != nil {
		return latencies{}, 0, err
	}
	stop, _, err := startWorkerCmds(ctx, 1, srv, emu, tag, "-global", strconv.Itoa(replyBulk), "-chat", "1", "-reply", strconv.Itoa(reply),
		"-senders", strconv.Itoa(deliveryCap))
	if err != nil {
		return latencies{}, 0, err
	}
	if _, err := emu.WaitForTotalMessages(ctx, replyBulk); err != nil { // the broadcast is under way
		_ = stop()
		return latencies{}, 0, err
	}
	sent := map[string]time.Time{}
	tick := time.NewTicker(time.Second / replyRate)
	end := time.Now().Add(replyRun)
	for i := 0; time.Now().Before(end); i++ {
		<-tick.C
		text := fmt.Sprintf("reply %d", i)
		sent[text] = time.Now()
		if _, err := p.n.Notify(ctx, int64(1+i%replyChats), notifier.Message{Text: text, Class: notifier.Reply, ReplyTo: 1}); err != nil {
			tick.Stop()
			_ = stop()
			return latencies{}, 0, fmt.Errorf("reply: %w", err)
		}
	}
	tick.Stop()
	sleepCtx(ctx, time.Second) // the last replies' way
	if err := stop(); err != nil {
		return latencies{}, 0, fmt.Errorf("worker process: %w", err)
	}
	stopped := time.Now() // nothing is sent after the worker stopped
	got := map[string]bool{}
	for _, m := range emu.AllMessages() {
		if at, ok := sent[m.Text]; ok && !got[m.Text] {
			got[m.Text] = true
			lat.delivered = append(lat.delivered, m.Time.Sub(at))
		}
	}
	for text, at := range sent {
		if !got[text] {
			lat.waited = append(lat.waited, stopped.Sub(at))
		}
	}
	return lat, emu.Stats().TooManyRequests, nil
}
