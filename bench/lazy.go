package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Lazy broadcasts at audience scale (issue 27, "Measured"): what starting a
// broadcast to a synthetic audience costs (Valkey bytes per pending copy, the
// time to its first claimable copy, the starting process's peak RSS), lazy
// (notifier.Filler.Start over chats.Audience) against eager (the app before:
// chats.Audience.Chats, then notifier.Notifier.Broadcast of every id), and a
// lazy paid broadcast's delivery through the paid section's rig (paidRig),
// against the same broadcast made eagerly.
const (
	lazyTextChars = 1_000         // the broadcast's text: one message part
	lazyChatBase  = 1_000_000_000 // the synthetic audience's first chat id
	// lazyPoll is how often the first copy is looked for during a start.
	lazyPoll = time.Millisecond
	// The goals (each row says whether this run met its own).
	lazyGoalBytes     = 2.0                    // Valkey bytes per pending copy, lazy, at the largest audience
	lazyGoalFirst     = 200 * time.Millisecond // start call to the first copy claimable, lazy
	lazyGoalRSSMiB    = 100                    // peak RSS of the starting process, lazy
	lazyGoalDelivered = 0.95                   // delivered ÷ the paid limit, lazy
	lazyGoalCPU       = 250.0                  // µs of worker + Valkey CPU per delivered copy, lazy
	// lazyProfileEnv, when set to a directory, has the delivery runs' worker
	// processes write their CPU profiles there (worker-lazy.pprof,
	// worker-eager.pprof; go tool pprof -top) and their allocations
	// (worker-lazy.allocs.pprof, worker-eager.allocs.pprof; go tool pprof
	// -sample_index=alloc_space -top).
	lazyProfileEnv = "CODEMOJEX_BENCH_PROFILE"
)

// The two ways of starting a broadcast, the -mode of -role start.
const (
	modeLazy  = "lazy"  // notifier.Filler.Start
	modeEager = "eager" // chats.Audience.Chats + notifier.Notifier.Broadcast
)

// lazySizesEnv sets the audiences the start rows measure (comma-separated
// chats, e.g. "1000,100000"; "0": none, only the delivery rows), for runs
// that look at one part.
const lazySizesEnv = "CODEMOJEX_BENCH_LAZY_SIZES"

// lazySizes are the audiences the start is measured at (lazySizesEnv, or
// 1,000 and 1,000,000; 100,000 with -quick) and the delivered broadcast's
// audience. Errors: a malformed lazySizesEnv.
func lazySizes(quick bool) (starts []int, delivery int, err error) {
	starts, delivery = []int{1_000, 1_000_000}, paidAudience
	if quick {
		starts, delivery = []int{1_000, 100_000}, 5_000
	}
	v := strings.TrimSpace(os.Getenv(lazySizesEnv))
	if v == "" {
		return starts, delivery, nil
	}
	starts = nil
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, 0, fmt.Errorf("%s=%q: want chats, comma-separated", lazySizesEnv, v)
		}
		if n > 0 {
			starts = append(starts, n)
		}
	}
	return starts, delivery, nil
}

// lazyText is the broadcast's 1,000-character text.
func lazyText() string {
	const line = "Lazy broadcast benchmark: one record, a cursor, a window of copies. "
	return strings.Repeat(line, lazyTextChars/len(line)+1)[:lazyTextChars]
}

func benchLazy(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	sizes, deliveryChats, err := lazySizes(cfg.quick)
	if err != nil {
		return err
	}
	for _, n := range sizes {
		var cost [2]startCost
		for i, mode := range []string{modeLazy, modeEager} {
			c, err := measureStart(ctx, cfg, srv, mode, n)
			if err != nil {
				return fmt.Errorf("%s start, %d chats: %w", mode, n, err)
			}
			cost[i] = c
		}
		addStartRows(t, n, n == slices.Max(sizes), cost[0], cost[1])
	}
	// The eager start to 1,000,000 chats left 1.7 GB: freed now, not by
	// the background thread of the rig's flush during the first run.
	if err := flushSync(ctx, srv); err != nil {
		return err
	}
	pairs, modes, err := lazyDeliveryRuns(cfg.quick)
	if err != nil {
		return err
	}
	var runs [2][]lazyDelivery
	for pair := range pairs {
		for i, mode := range []string{modeLazy, modeEager} {
			if !slices.Contains(modes, mode) {
				continue
			}
			d, err := lazyDeliveryRun(ctx, cfg, srv, mode, deliveryChats, pair == 0)
			if err != nil {
				return fmt.Errorf("%s delivery: %w", mode, err)
			}
			runs[i] = append(runs[i], d)
		}
	}
	if len(runs[0]) > 0 && len(runs[1]) > 0 {
		addDeliveryRows(t, deliveryChats, runs[0], runs[1])
	}
	return nil
}

// Knobs of the delivery runs, for a look at one part (the report's rows
// need both modes: with one, its runs are only logged).
const (
	// lazyPairsEnv sets how many alternating runs of each mode (default 3,
	// 1 with -quick).
	lazyPairsEnv = "CODEMOJEX_BENCH_LAZY_PAIRS"
	// lazyModesEnv sets the modes delivered ("lazy", "eager" or
	// "lazy,eager", the default).
	lazyModesEnv = "CODEMOJEX_BENCH_LAZY_DELIVERY"
)

// lazyDeliveryRuns reads lazyPairsEnv and lazyModesEnv. Errors: a
// malformed one.
func lazyDeliveryRuns(quick bool) (pairs int, modes []string, err error) {
	pairs, modes = 3, []string{modeLazy, modeEager}
	if quick {
		pairs = 1
	}
	if v := strings.TrimSpace(os.Getenv(lazyPairsEnv)); v != "" {
		if pairs, err = strconv.Atoi(v); err != nil || pairs < 1 {
			return 0, nil, fmt.Errorf("%s=%q: want a count >= 1", lazyPairsEnv, v)
		}
	}
	if v := strings.TrimSpace(os.Getenv(lazyModesEnv)); v != "" {
		modes = nil
		for _, m := range strings.Split(v, ",") {
			m = strings.TrimSpace(m)
			if m != modeLazy && m != modeEager {
				return 0, nil, fmt.Errorf("%s=%q: want %s, %s or both, comma-separated", lazyModesEnv, v, modeLazy, modeEager)
			}
			modes = append(modes, m)
		}
	}
	return pairs, modes, nil
}

// addStartRows adds the three start rows at audience n, lazy a against
// eager b; the bytes goal is judged at the largest audience only (largest).
func addStartRows(t *table, n int, largest bool, a, b startCost) {
	bytesGoal := ""
	if largest {
		bytesGoal = fmt.Sprintf("; goal lazy ≤ %.0f B: %s", lazyGoalBytes, verdict(a.perCopy() <= lazyGoalBytes))
	}
	t.add(fmt.Sprintf("Valkey bytes per pending copy after the start, nothing sent (INFO used_memory after ÷ before, over the %s copies planned), %s chats, a %s-character broadcast: lazy (notifier.Filler.Start: its record and its first window, %s copies on lanes) vs eager (chats.Audience.Chats + notifier.Broadcast, %s copies on lanes) (lower is better%s)",
		commas(n), commas(n), commas(lazyTextChars), commas(int(a.copies)), commas(int(b.copies)), bytesGoal),
		fmt.Sprintf("%s B (%s in all)", perCopyFigure(a.perCopy()), byteSize(a.bytes)),
		fmt.Sprintf("%s B (%s in all)", perCopyFigure(b.perCopy()), byteSize(b.bytes)), ratio(a.perCopy(), b.perCopy()))
	t.add(fmt.Sprintf("start call to the first copy claimable (the queue's pending count seen > 0, polled every %v from another connection), %s chats: lazy (Start returned after %s) vs eager (Broadcast returned after %s) (lower is better; goal lazy ≤ %v: %s)",
		lazyPoll, commas(n), shortDuration(a.took), shortDuration(b.took), lazyGoalFirst, verdict(a.first <= lazyGoalFirst)),
		shortDuration(a.first), shortDuration(b.first), ratio(a.first.Seconds(), b.first.Seconds()))
	t.add(fmt.Sprintf("peak RSS of the process that starts it (a process of its own, `-role start`: its VmHWM once the start returned, the Go runtime and the client included), %s chats: lazy vs eager (lower is better; goal lazy ≤ %d MB: %s)",
		commas(n), lazyGoalRSSMiB, verdict(a.rssMiB() <= lazyGoalRSSMiB)),
		fmt.Sprintf("%.1f MiB", a.rssMiB()), fmt.Sprintf("%.1f MiB", b.rssMiB()), ratio(a.rssMiB(), b.rssMiB()))
}

// addDeliveryRows adds the delivery rows of an n-chat paid broadcast from
// alternating runs, lazy as against eager bs: each figure the median of its
// runs (all of them listed in the measure).
func addDeliveryRows(t *table, n int, as, bs []lazyDelivery) {
	rate := func(d lazyDelivery) float64 { return d.rate }
	cpu := func(d lazyDelivery) float64 { return d.cpuPerCopy() }
	a, b := medianRun(as, rate), medianRun(bs, rate)
	t.add(fmt.Sprintf("paid broadcast to %s chats at %d/s, Telegram answering after %v, one worker process (its filler beside it, as internal/app runs them): delivered ÷ limit (slope from 1 s after the first copy), lazy vs eager, medians of %d alternating runs (lazy %s, eager %s; copies delivered %s / %s, the last %.1f s / %.1f s after the start, 429s %d / %d in the median runs; goal lazy ≥ %.2f: %s)",
		commas(n), paidRate, paidLatency, len(as), runFigures(as, "%.2f", func(d lazyDelivery) float64 { return d.rate / paidRate }),
		runFigures(bs, "%.2f", func(d lazyDelivery) float64 { return d.rate / paidRate }), commas(a.delivered), commas(b.delivered),
		a.last.Seconds(), b.last.Seconds(), a.tooMany, b.tooMany, lazyGoalDelivered, verdict(a.rate/paidRate >= lazyGoalDelivered)),
		fmt.Sprintf("%.2f (%.0f msg/s)", a.rate/paidRate, a.rate), fmt.Sprintf("%.2f (%.0f msg/s)", b.rate/paidRate, b.rate), ratio(a.rate, b.rate))
	a, b = medianRun(as, cpu), medianRun(bs, cpu)
	t.add(fmt.Sprintf("CPU per delivered copy of that broadcast (the worker process's user+system time from /proc, filler included, plus Valkey's, INFO cpu, from the start to the last copy), lazy vs eager, medians of %d alternating runs (lazy %s µs, eager %s µs; the split is the median run's) (lower is better; goal lazy ≤ %.0f µs: %s)",
		len(as), runFigures(as, "%.0f", cpu), runFigures(bs, "%.0f", cpu), lazyGoalCPU, verdict(a.cpuPerCopy() <= lazyGoalCPU)),
		a.cpuFigure(), b.cpuFigure(), ratio(a.cpuPerCopy(), b.cpuPerCopy()))
	t.note(fmt.Sprintf("Valkey's time by command in the delivery runs of median CPU, µs per delivered copy (INFO commandstats: time inside each command, wall clock, so inflated on a loaded machine; EVALSHA is every lanes and notifier script, and the commands a script calls are counted again on their own): lazy %s; eager %s.",
		topCommands(a.byCommand, a.delivered), topCommands(b.byCommand, b.delivered)))
}

// medianRun is the run of ds whose key is the median (the lower middle
// of an even count); ds is not empty.
func medianRun(ds []lazyDelivery, key func(lazyDelivery) float64) lazyDelivery {
	s := slices.Clone(ds)
	slices.SortFunc(s, func(a, b lazyDelivery) int { return cmp.Compare(key(a), key(b)) })
	return s[(len(s)-1)/2]
}

// runFigures lists key of every run of ds in run order, format each, " / "
// between.
func runFigures(ds []lazyDelivery, format string, key func(lazyDelivery) float64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf(format, key(d))
	}
	return strings.Join(parts, " / ")
}

// shortDuration prints d in ms with one decimal under a second, else in
// seconds with two.
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// startCost is what starting one broadcast cost (measureStart).
type startCost struct {
	planned int           // copies planned (chats × parts)
	bytes   int64         // Valkey's used_memory after the start less before
	copies  int64         // copies on lanes after the start
	first   time.Duration // start call to the first copy claimable
	took    time.Duration // start call to its return
	rssKiB  int64         // the starting process's peak RSS
}

func (c startCost) perCopy() float64 { return float64(c.bytes) / float64(max(c.planned, 1)) }
func (c startCost) rssMiB() float64  { return float64(c.rssKiB) / 1024 }

// perCopyFigure prints bytes per copy with two significant decimals under 10.
func perCopyFigure(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return commas(int(v + 0.5))
}

// byteSize prints a byte count in B, KiB, MiB or GiB.
func byteSize(b int64) string {
	v, units := float64(b), []string{"B", "KiB", "MiB", "GiB"}
	i := 0
	for ; i < len(units)-1 && (v >= 1024 || v <= -1024); i++ {
		v /= 1024
	}
	if i == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// measureStart starts one broadcast (mode) to a synthetic audience of n
// chats on a flushed server, from a process of its own (this program as
// -role start), while nothing sends, and returns what it cost. The scripts
// are loaded and the audience written before used_memory is read, so the
// difference is the broadcast's. Errors: the server's, the process's.
func measureStart(ctx context.Context, cfg config, srv *valkeyserver.Server, mode string, n int) (startCost, error) {
	cost := startCost{planned: n}
	if err := flushSync(ctx, srv); err != nil {
		return cost, err
	}
	if err := warmScripts(ctx, srv); err != nil {
		return cost, err
	}
	c, err := newClient(srv)
	if err != nil {
		return cost, err
	}
	defer c.Close()
	tag := "lz" + mode
	if err := writeAudience(ctx, c, tag, n); err != nil {
		return cost, err
	}
	before, err := usedMemory(ctx, c)
	if err != nil {
		return cost, err
	}
	st, seen, rss, err := runStart(ctx, c, srv, tag, mode)
	if err != nil {
		return cost, err
	}
	after, err := usedMemory(ctx, c)
	if err != nil {
		return cost, err
	}
	cost.copies, err = pendingCopies(ctx, c, tag, tgjob.QueueNotify)
	if err != nil {
		return cost, err
	}
	cost.bytes, cost.rssKiB = after-before, rss
	cost.took = time.Duration(st.Returned - st.T0)
	cost.first = seen.Sub(time.Unix(0, st.T0))
	cfg.log.Info("broadcast start", "mode", mode, "chats", n, "bytes", cost.bytes, "per copy", fmt.Sprintf("%.2f", cost.perCopy()),
		"on lanes", cost.copies, "first copy", cost.first.Round(100*time.Microsecond), "returned", cost.took.Round(time.Millisecond),
		"rss", fmt.Sprintf("%.1fMiB", cost.rssMiB()))
	return cost, nil
}

// runStart runs this program as -role start (mode, on tag) and returns
// what it printed, when the first copy was seen claimable (polling the
// queue's pending count every lazyPoll on c) and its peak RSS (KiB: the
// VmHWM it read itself; its rusage max RSS would not do, as Linux counts in
// it the parent's RSS at the exec).
// Errors: the process failing or printing no result; no copy ever seen.
func runStart(ctx context.Context, c valkey.Client, srv *valkeyserver.Server, tag, mode string) (startTimes, time.Time, int64, error) {
	var st startTimes
	self, err := os.Executable()
	if err != nil {
		return st, time.Time{}, 0, fmt.Errorf("own executable: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, "-role", "start", "-valkey", srv.URL, "-tag", tag, "-mode", mode)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return st, time.Time{}, 0, fmt.Errorf("start process: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	seen, pollErr := firstPending(ctx, c, pendingKey(tag, tgjob.QueueNotify), exited)
	if err := <-exited; err != nil {
		return st, seen, 0, fmt.Errorf("start process: %w", err)
	}
	if pollErr != nil {
		return st, seen, 0, pollErr
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		return st, seen, 0, fmt.Errorf("start process printed %q: %w", out.String(), err)
	}
	if st.PeakKiB <= 0 {
		return st, seen, 0, errors.New("start process: no peak RSS (VmHWM)")
	}
	return st, seen, st.PeakKiB, nil
}

// firstPending polls key (a queue's pending count) every lazyPoll until it
// is above 0 and returns when it saw that. exited receives the starting
// process's end: it is put back for the caller, and the count is read once
// more. Errors: the server's; the process ended without a copy pending.
func firstPending(ctx context.Context, c valkey.Client, key string, exited chan error) (time.Time, error) {
	for {
		v, err := c.Do(ctx, c.B().Get().Key(key).Build()).AsInt64()
		if err != nil && !valkey.IsValkeyNil(err) {
			return time.Time{}, fmt.Errorf("poll %s: %w", key, err)
		}
		if v > 0 {
			return time.Now(), nil
		}
		select {
		case e := <-exited:
			exited <- e
			v, err := c.Do(ctx, c.B().Get().Key(key).Build()).AsInt64()
			if err == nil && v > 0 {
				return time.Now(), nil
			}
			return time.Time{}, fmt.Errorf("no copy pending on %s when the start ended", key)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(lazyPoll):
		}
	}
}

// flushSync empties srv and frees what it held before it returns
// (FLUSHALL SYNC): Valkey 8's FLUSHALL frees in a background thread
// (lazyfree-lazy-user-flush yes), whose memory and CPU would otherwise count
// in the next measure. Errors: the server's.
func flushSync(ctx context.Context, srv *valkeyserver.Server) error {
	opt, err := valkey.ParseURL(srv.URL)
	if err != nil {
		return fmt.Errorf("valkey url: %w", err)
	}
	// Freeing the eager start's 1.7 GB takes tens of seconds on a loaded
	// machine: past the client's default 10 s timeout.
	opt.DisableCache, opt.ConnWriteTimeout = true, 5*time.Minute
	c, err := valkey.NewClient(opt)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	if err := c.Do(ctx, c.B().Flushall().Sync().Build()).Error(); err != nil {
		return fmt.Errorf("flushall sync: %w", err)
	}
	return nil
}

// pendingKey is queue's pending-jobs count under tag (lanes' layout,
// lanes/keys.go: {T}:q:Q:pending).
func pendingKey(tag, queue string) string { return "{" + tag + "}:q:" + queue + ":pending" }

// pendingCopies is queue's pending-jobs count under tag.
func pendingCopies(ctx context.Context, c valkey.Client, tag, queue string) (int64, error) {
	v, err := c.Do(ctx, c.B().Get().Key(pendingKey(tag, queue)).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pending on %s: %w", queue, err)
	}
	return v, nil
}

// warmScripts starts a lazy and an eager broadcast to one chat under a
// tag of their own, so every script either path runs is loaded before a
// measured start (a script's first load would count as the broadcast's
// memory). Errors: the server's.
func warmScripts(ctx context.Context, srv *valkeyserver.Server) error {
	const tag = "lzwarm"
	p, err := newPipeline(srv, tag)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := writeAudience(ctx, p.c, tag, 1); err != nil {
		return err
	}
	aud := chats.NewAudience(p.c, tag)
	for _, mode := range []string{modeLazy, modeEager} {
		if _, err := startBroadcast(ctx, p.n, aud, mode, false); err != nil {
			return fmt.Errorf("warm-up %s start: %w", mode, err)
		}
	}
	return nil
}

// writeAudience writes n chats (lazyChatBase, lazyChatBase+1, ...) straight
// into tag's audience buckets (chats.Keys.AudienceBucket; SADD, up to 1,000
// members a command, 128 commands a round trip), as n chats that each sent
// the bot an update would have. Errors: the server's.
func writeAudience(ctx context.Context, c valkey.Client, tag string, n int) error {
	keys := chats.NewKeys(tag)
	members := make(map[int64][]string, chats.Buckets)
	for i := range n {
		id := int64(lazyChatBase + i)
		b := chats.Bucket(id)
		members[b] = append(members[b], strconv.FormatInt(id, 10))
	}
	var cmds valkey.Commands
	flushCmds := func() error {
		for _, r := range c.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return fmt.Errorf("write the audience: %w", err)
			}
		}
		cmds = cmds[:0]
		return nil
	}
	for b := range int64(chats.Buckets) {
		for ms := members[b]; len(ms) > 0; {
			k := min(len(ms), 1000)
			cmds = append(cmds, c.B().Sadd().Key(keys.AudienceBucket(b)).Member(ms[:k]...).Build())
			ms = ms[k:]
		}
		if len(cmds) >= 128 {
			if err := flushCmds(); err != nil {
				return err
			}
		}
	}
	return flushCmds()
}

// usedMemory is the server's used_memory (INFO memory), bytes.
func usedMemory(ctx context.Context, c valkey.Client) (int64, error) {
	info, err := c.Do(ctx, c.B().Info().Section("memory").Build()).ToString()
	if err != nil {
		return 0, fmt.Errorf("info memory: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("info memory: no used_memory")
}

// startTimes is what a -role start process prints (one JSON object).
type startTimes struct {
	T0       int64  // unix ns: the start call began
	Returned int64  // unix ns: it returned
	ID       string // the broadcast id
	PeakKiB  int64  // the process's peak RSS after the start (VmHWM)
}

// startBroadcast starts the benchmark's broadcast (lazyText; paid or free)
// to aud through n as mode says, the way the Send tap does: lazy,
// notifier.Filler.Start (the filler made first, as the app makes it at its
// start); eager, the app before: every chat id read (chats.Audience.Chats),
// then notifier.Notifier.Broadcast. Errors: an unknown mode; the store's.
func startBroadcast(ctx context.Context, n *notifier.Notifier, aud *chats.Audience, mode string, paid bool) (startTimes, error) {
	msg := notifier.Message{Text: lazyText(), Key: "bcp:bench", Paid: paid}
	var st startTimes
	var err error
	switch mode {
	case modeLazy:
		f, ferr := n.NewFiller(aud, notifier.FillConfig{Rates: map[string]int{tgjob.QueueNotify: paidBulk, tgjob.QueuePaid: paidRate},
			Log: slog.New(slog.DiscardHandler)})
		if ferr != nil {
			return st, ferr
		}
		st.T0 = time.Now().UnixNano()
		st.ID, err = f.Start(ctx, msg, notifier.Plan{})
	case modeEager:
		st.T0 = time.Now().UnixNano()
		var all []int64
		if all, err = aud.Chats(ctx); err == nil {
			st.ID, err = n.Broadcast(ctx, all, msg)
		}
	default:
		return st, fmt.Errorf("start mode %q: want %s or %s", mode, modeLazy, modeEager)
	}
	st.Returned = time.Now().UnixNano()
	return st, err
}

// startMain is the -role start process: it starts one broadcast (-mode)
// to the audience under -tag and prints its startTimes as JSON, then exits
// (its peak RSS is the start's).
func startMain(args []string) error {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	addr := fs.String("valkey", "", "server URL")
	tag := fs.String("tag", "", "store tag")
	mode := fs.String("mode", modeLazy, "lazy (notifier.Filler.Start) or eager (chats.Audience.Chats, then notifier.Broadcast)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := roleClient(*addr)
	if err != nil {
		return err
	}
	defer c.Close()
	store, err := notifier.NewStore(c, benchLimits(), 0, lanes.WithTag(*tag))
	if err != nil {
		return err
	}
	n, err := notifier.New(c, store, notifier.Config{})
	if err != nil {
		return err
	}
	st, err := startBroadcast(context.Background(), n, chats.NewAudience(c, *tag), *mode, false)
	if err != nil {
		return err
	}
	if st.PeakKiB, err = peakRSS(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(st)
}

// peakRSS is this process's peak resident memory so far, KiB (VmHWM of
// /proc/self/status: its own address space's, since its exec). Errors:
// /proc's.
func peakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("peak rss: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("peak rss: no VmHWM in /proc/self/status")
}

// lazyDelivery is one delivery run's figures (lazyDeliveryRun).
type lazyDelivery struct {
	delivered  int                // paid copies delivered
	rate       float64            // their slope, msg/s, from 1 s after the first
	last       time.Duration      // the start call to the last copy
	tooMany    int                // the emulator's 429s
	workerCPU  time.Duration      // the worker process, start to the last copy
	serverCPU  time.Duration      // Valkey, the same window
	byCommand  map[string]float64 // Valkey's µs by command, the same window (INFO commandstats)
	calls      map[string]float64 // Valkey's calls by command, the same window
	cycles     float64            // Valkey's event loop cycles, the same window (INFO stats eventloop_cycles: its wake-ups)
	profileOut string             // the worker's CPU profile, when lazyProfileEnv is set
	perSecond  []int              // copies delivered in each second after the start (logged with -v)
}

func (d lazyDelivery) cpuPerCopy() float64 {
	return float64((d.workerCPU + d.serverCPU).Microseconds()) / float64(max(d.delivered, 1))
}

func (d lazyDelivery) cpuFigure() string {
	n := float64(max(d.delivered, 1))
	return fmt.Sprintf("%.0f µs (worker %.0f + Valkey %.0f)", d.cpuPerCopy(),
		float64(d.workerCPU.Microseconds())/n, float64(d.serverCPU.Microseconds())/n)
}

// lazyDeliveryRun delivers a paid broadcast of lazyText to n synthetic
// chats (mode: lazy or eager, started in this process as the Send tap
// would) through the paid section's rig at paidLatency, the worker process
// running its filler (-fill), and measures it from the start call to the
// last copy; with profile and lazyProfileEnv set, the worker process
// writes its CPU profile. Errors: the rig's, the start's, the worker
// process's exit.
func lazyDeliveryRun(ctx context.Context, cfg config, srv *valkeyserver.Server, mode string, n int, profile bool) (lazyDelivery, error) {
	var d lazyDelivery
	tag := "lzd" + mode
	extra := []string{"-fill"}
	if dir := os.Getenv(lazyProfileEnv); dir != "" && profile {
		d.profileOut = filepath.Join(dir, "worker-"+mode+".pprof")
		extra = append(extra, "-cpuprofile", d.profileOut, "-allocprofile", filepath.Join(dir, "worker-"+mode+".allocs.pprof"))
	}
	rig, err := newPaidRig(ctx, srv, tag, paidLatency, paidBulk+paidReply+paidRate, extra...)
	if err != nil {
		return d, err
	}
	defer rig.Close()
	if err := writeAudience(ctx, rig.p.c, tag, n); err != nil {
		return d, err
	}
	// The worker is up once it delivered a reply.
	if _, err := rig.p.n.Notify(ctx, 1, notifier.Message{Text: "up", Class: notifier.Reply}); err != nil {
		return d, err
	}
	if _, err := rig.emu.WaitForTotalMessages(ctx, 1); err != nil {
		return d, err
	}
	// The pages freed before the run are returned to the system now, not
	// by the allocator's background thread during it (its CPU is Valkey's).
	if err := rig.p.c.Do(ctx, rig.p.c.B().MemoryPurge().Build()).Error(); err != nil {
		return d, fmt.Errorf("memory purge: %w", err)
	}
	w0, v0, cs0, err := cpuMarks(ctx, srv, rig.proc.Process.Pid)
	if err != nil {
		return d, err
	}
	st, err := startBroadcast(ctx, rig.p.n, chats.NewAudience(rig.p.c, tag), mode, true)
	if err != nil {
		return d, err
	}
	deadline := time.Now().Add(time.Duration(n/paidRate)*time.Second + 30*time.Second)
	for rig.emu.PaidSent() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		sleepCtx(ctx, 10*time.Millisecond)
	}
	w1, v1, cs1, err := cpuMarks(ctx, srv, rig.proc.Process.Pid)
	if err != nil {
		return d, err
	}
	if err := rig.stopWorker(); err != nil {
		return d, fmt.Errorf("worker process: %w", err)
	}
	d.workerCPU, d.serverCPU = w1-w0, v1-v0
	d.byCommand, d.calls = diffStats(cs0.usec, cs1.usec), diffStats(cs0.calls, cs1.calls)
	d.cycles = cs1.cycles - cs0.cycles
	d.tally(rig.emu.AllMessages(), time.Unix(0, st.T0))
	d.tooMany = rig.emu.Stats().TooManyRequests
	cfg.log.Info("paid broadcast delivery", "mode", mode, "chats", n, "delivered", d.delivered, "msg/s", fmt.Sprintf("%.0f", d.rate),
		"last", d.last.Round(time.Millisecond), "429s", d.tooMany, "cpu/copy", d.cpuFigure(), "profile", d.profileOut,
		"µs/copy by command", topCommands(d.byCommand, d.delivered), "calls/copy", callsFigure(d.calls, d.delivered),
		"wake-ups/copy", fmt.Sprintf("%.3f", d.cycles/float64(max(d.delivered, 1))))
	cfg.log.Debug("paid broadcast delivery, copies per second after the start", "mode", mode, "per second", fmt.Sprint(d.perSecond))
	return d, nil
}

// tally counts the paid copies among msgs, the last one's time after t0
// and their rate from 1 s after the first (the least-squares slope).
func (d *lazyDelivery) tally(msgs []tgemu.Message, t0 time.Time) {
	var times []time.Time
	for _, m := range msgs {
		if m.Paid && m.ChatID >= lazyChatBase {
			times = append(times, m.Time)
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	d.delivered = len(times)
	if len(times) == 0 {
		return
	}
	d.last = times[len(times)-1].Sub(t0)
	from := times[0].Add(time.Second)
	i, _ := slices.BinarySearchFunc(times, from, func(a, b time.Time) int { return a.Compare(b) })
	d.rate = slope(times[i:])
	d.perSecond = make([]int, int(d.last/time.Second)+1)
	for _, at := range times {
		if k := int(at.Sub(t0) / time.Second); k >= 0 && k < len(d.perSecond) {
			d.perSecond[k]++
		}
	}
}

// cpuMarks reads the worker process's CPU time (/proc), the server's
// (INFO cpu) and its time by command (INFO commandstats). Errors: the
// server's, /proc's.
func cpuMarks(ctx context.Context, srv *valkeyserver.Server, pid int) (worker, server time.Duration, byCommand cmdStats, err error) {
	if worker, err = procCPU(pid); err != nil {
		return 0, 0, byCommand, err
	}
	if server, err = serverCPU(ctx, srv); err != nil {
		return 0, 0, byCommand, err
	}
	byCommand, err = commandStats(ctx, srv)
	return worker, server, byCommand, err
}

// procCPU is process pid's user + system time (/proc/<pid>/stat, utime and
// stime in clock ticks of 1/100 s, Linux's USER_HZ). Errors: /proc's.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("process cpu: %w", err)
	}
	// The fields after the command (which may hold spaces) start at state,
	// field 3; utime and stime are fields 14 and 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("process cpu: short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	stt, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("process cpu: %w", err)
	}
	return time.Duration(ut+stt) * 10 * time.Millisecond, nil
}

// cmdStats is the server's commands so far by name (INFO commandstats)
// and its event loop cycles (INFO stats).
type cmdStats struct {
	usec   map[string]float64 // time inside each command, µs
	calls  map[string]float64 // calls (a script's commands counted too)
	cycles float64            // eventloop_cycles: each a wake-up of the server (its cron's included, hz a second)
}

// commandStats is the server's time and calls by command so far (INFO
// commandstats: cmdstat_<name>:calls=..,usec=..,...) and its event loop
// cycles (INFO stats eventloop_cycles, Redis 7+). Errors: the server's; no
// eventloop_cycles.
func commandStats(ctx context.Context, srv *valkeyserver.Server) (cmdStats, error) {
	out := cmdStats{usec: map[string]float64{}, calls: map[string]float64{}}
	c, err := srv.NewClient()
	if err != nil {
		return out, fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		return out, fmt.Errorf("info commandstats: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if name, ok2 := strings.CutPrefix(name, "cmdstat_"); ok && ok2 {
			for _, kv := range strings.Split(fields, ",") {
				if v, ok := strings.CutPrefix(kv, "usec="); ok {
					out.usec[name], _ = strconv.ParseFloat(v, 64)
				}
				if v, ok := strings.CutPrefix(kv, "calls="); ok {
					out.calls[name], _ = strconv.ParseFloat(v, 64)
				}
			}
		}
	}
	stats, err := c.Do(ctx, c.B().Info().Section("stats").Build()).ToString()
	if err != nil {
		return out, fmt.Errorf("info stats: %w", err)
	}
	for _, line := range strings.Split(stats, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "eventloop_cycles:"); ok {
			if out.cycles, err = strconv.ParseFloat(v, 64); err != nil {
				return out, fmt.Errorf("info stats eventloop_cycles: %w", err)
			}
			return out, nil
		}
	}
	return out, errors.New("info stats: no eventloop_cycles")
}

// callsFigure prints the server's calls per copy of n: all of them, the
// script calls (EVALSHA and EVAL) among them, then the ten commands called
// most (a script's commands are counted on their own too).
func callsFigure(calls map[string]float64, n int) string {
	var all float64
	for _, v := range calls {
		all += v
	}
	per := func(v float64) float64 { return v / float64(max(n, 1)) }
	names := slices.Collect(maps.Keys(calls))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(calls[b], calls[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := []string{fmt.Sprintf("all %.1f, scripts %.2f", per(all), per(calls["evalsha"]+calls["eval"]))}
	for _, k := range names[:min(10, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", strings.ToUpper(k), per(calls[k])))
	}
	return strings.Join(parts, ", ")
}

// diffStats is b - a, by command (the commands that took time).
func diffStats(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range b {
		if d := v - a[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// topCommands prints the five commands that took the most time, µs per
// copy of n.
func topCommands(byCommand map[string]float64, n int) string {
	names := make([]string, 0, len(byCommand))
	for k := range byCommand {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if byCommand[a] != byCommand[b] {
			if byCommand[a] > byCommand[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range names[:min(5, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.1f", strings.ToUpper(k), byCommand[k]/float64(max(n, 1))))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
