package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-telegram/bot"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

// Telegram limits of the bench, scaled up from Telegram's (30/s overall,
// 1/s per private chat) so the whole run takes minutes, not hours: global
// 300/s (10×) and 100/s per chat (100×: at 1/s a 1,000-message burst would
// keep a FIFO busy for 17 minutes; at 100/s it is 10 s).
const (
	benchGlobal = 300
	benchChat   = 100
	senders     = 16
)

func benchLimits() notifier.Limits {
	l := notifier.DefaultLimits() // with the bot's safety slack on every window
	l.GlobalPerSecond, l.PrivatePerSecond = benchGlobal, benchChat
	return l
}

func newEmulator() (*tgemu.Emulator, error) {
	return tgemu.New(tgemu.WithLimits(tgemu.ScaledLimits(benchGlobal, benchChat, 20)), tgemu.WithAllowAnyChat())
}

// pipeline is a notifier and its store on one client.
type pipeline struct {
	c     valkey.Client
	store *lanes.Store
	n     *notifier.Notifier
}

func newPipeline(srv *valkeyserver.Server, tag string) (*pipeline, error) {
	c, err := newClient(srv)
	if err != nil {
		return nil, err
	}
	store, err := notifier.NewStore(c, benchLimits(), 0, lanes.WithTag(tag))
	if err != nil {
		c.Close()
		return nil, err
	}
	n, err := notifier.New(c, store, notifier.Config{})
	if err != nil {
		c.Close()
		return nil, err
	}
	return &pipeline{c: c, store: store, n: n}, nil
}

func (p *pipeline) Close() { p.c.Close() }

// runWorker runs the real worker (package worker) in this process until
// the returned stop is called; stop waits for it to shut down.
func (p *pipeline) runWorker(ctx context.Context, emu *tgemu.Emulator) (stop func() error, err error) {
	w, err := worker.New(p.n, worker.Config{
		Token: emu.Token(), ServerURL: emu.URL(), Senders: senders, ClaimRate: benchGlobal,
		HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders * 2}},
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error { cancel(); return <-done }, nil
}

// backlog enqueues per messages for each chat, interleaved, on queue (one
// Enqueue call per 1,000 jobs).
func (p *pipeline) backlog(ctx context.Context, queue string, chats []int64, per int) error {
	minter := lanes.NewMinter()
	items := make([]lanes.Item, 0, 1000)
	for i := range per {
		for _, chat := range chats {
			b, err := tgjob.Job{Chat: chat, Text: fmt.Sprintf("backlog %d #%d", chat, i)}.Encode()
			if err != nil {
				return err
			}
			items = append(items, lanes.Item{Group: tgjob.Group(chat), ID: minter.New(), Payload: b})
			if len(items) == cap(items) {
				if _, err := p.store.Enqueue(ctx, queue, items); err != nil {
					return fmt.Errorf("backlog: %w", err)
				}
				items = items[:0]
			}
		}
	}
	if len(items) > 0 {
		if _, err := p.store.Enqueue(ctx, queue, items); err != nil {
			return fmt.Errorf("backlog: %w", err)
		}
	}
	return nil
}

// workerMain is the helper role: `bench -role worker` runs the real worker
// as its own OS process (for the two-process budget run) until SIGTERM.
func workerMain(args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	addr := fs.String("valkey", "", "server URL")
	api := fs.String("api", "", "Bot API URL")
	token := fs.String("token", "", "bot token")
	tag := fs.String("tag", "", "store tag")
	global := fs.Int("global", benchGlobal, "global limit, messages/s (lanes side)")
	chat := fs.Int("chat", benchChat, "per-chat limit, messages/s (lanes side)")
	reply := fs.Int("reply", 0, "replies' own budget, messages/s (notifier.Limits.ReplyPerSecond; 0: replies share -global)")
	maxSenders := fs.Int("senders", senders, "worker.Config.Senders (the cap)")
	minSenders := fs.Int("min-senders", 0, "worker.Config.MinSenders (= -senders: a fixed pool)")
	paid := fs.Int("paid", 0, "paid broadcasts' budget, messages/s (notifier.Limits.PaidPerSecond, TELEGRAM_PAID_BROADCAST_RATE; 0: off)")
	claimRate := fs.Int("claim-rate", 0, "worker.Config.ClaimRate (0: -global + -reply, as internal/app sets it)")
	fill := fs.Bool("fill", false, "run the lazy broadcasts' filler beside the worker (notifier.Filler.Run over the audience's buckets, as internal/app does)")
	cpuProfile := fs.String("cpuprofile", "", "write the process's CPU profile (runtime/pprof) to this file until it exits")
	allocProfile := fs.String("allocprofile", "", "write the process's allocations since its start (runtime/pprof \"allocs\", sampled every 512 KiB) to this file when it exits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if *allocProfile != "" {
		defer writeAllocProfile(*allocProfile)
	}
	limits := benchLimits()
	limits.GlobalPerSecond, limits.PrivatePerSecond, limits.ReplyPerSecond = *global, *chat, *reply
	limits.PaidPerSecond = *paid
	if *claimRate <= 0 {
		*claimRate = *global + *reply
	}
	c, err := roleClient(*addr)
	if err != nil {
		return err
	}
	defer c.Close()
	store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(*tag))
	if err != nil {
		return err
	}
	n, err := notifier.New(c, store, notifier.Config{})
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := worker.New(n, worker.Config{
		Token: *token, ServerURL: *api, Senders: *maxSenders, MinSenders: *minSenders, ClaimRate: *claimRate, Logger: logger,
	})
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	if !*fill {
		return w.Run(ctx)
	}
	f, err := n.NewFiller(chats.NewAudience(c, *tag), notifier.FillConfig{
		Rates: map[string]int{tgjob.QueueNotify: *global, tgjob.QueuePaid: *paid}, Log: logger})
	if err != nil {
		return err
	}
	fctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = f.Run(fctx) }) // returns fctx's error: a stop is not a failure
	err = w.Run(ctx)
	cancel()
	wg.Wait()
	return err
}

// startCPUProfile profiles this process's CPU into path until the returned
// stop is called (runtime/pprof). Errors: the file's, the profiler's.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeAllocProfile writes this process's allocations since its start
// (runtime/pprof "allocs": alloc_space and alloc_objects by stack) to path;
// a failure is only logged, at the process's exit.
func writeAllocProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		slog.Error("alloc profile", "err", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		slog.Error("alloc profile", "err", err)
	}
}

// roleClient connects a helper process (-role) to the server at URL addr,
// without client-side caching. Errors: a bad URL, the connection's.
func roleClient(addr string) (valkey.Client, error) {
	opt, err := valkey.ParseURL(addr)
	if err != nil {
		return nil, fmt.Errorf("valkey url: %w", err)
	}
	opt.DisableCache = true
	c, err := valkey.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return c, nil
}

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// startWorkerProcs starts n helper worker processes (extra: more flags of
// the worker role).
func startWorkerProcs(ctx context.Context, n int, srv *valkeyserver.Server, emu *tgemu.Emulator, tag string, extra ...string) (stop func() error, err error) {
	stop, _, err = startWorkerCmds(ctx, n, srv, emu, tag, extra...)
	return stop, err
}

// startWorkerCmds is startWorkerProcs that also returns the processes (read
// their CPU time once stop returned, their /proc entries before).
func startWorkerCmds(ctx context.Context, n int, srv *valkeyserver.Server, emu *tgemu.Emulator, tag string, extra ...string) (stop func() error, procs []*exec.Cmd, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("own executable: %w", err)
	}
	var cmds []*exec.Cmd
	stop = func() error {
		var errs []error
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		for _, c := range cmds {
			if err := c.Wait(); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for range n {
		args := append([]string{"-role", "worker", "-valkey", srv.URL, "-api", emu.URL(), "-token", emu.Token(), "-tag", tag}, extra...)
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			_ = stop()
			return nil, nil, fmt.Errorf("start worker process: %w", err)
		}
		cmds = append(cmds, cmd)
	}
	return stop, cmds, nil
}

// fifo is the baseline: one Valkey list, popped in order by one loop that
// waits for the same limits (global and per chat, same margin) before
// handing the head to the same number of senders using go-telegram/bot; a
// 429 is retried after retry_after. The head of the list waits for its
// chat's budget, so everything behind it waits too.
type fifo struct {
	c   valkey.Client
	key string
	b   *bot.Bot
}

func newFIFO(c valkey.Client, emu *tgemu.Emulator) (*fifo, error) {
	b, err := bot.New(emu.Token(), bot.WithServerURL(emu.URL()), bot.WithSkipGetMe(),
		bot.WithHTTPClient(20*time.Second, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders * 2}}))
	if err != nil {
		return nil, err
	}
	return &fifo{c: c, key: "fifo:{bench}", b: b}, nil
}

func (f *fifo) push(ctx context.Context, chat int64, text string) error {
	p, err := tgjob.Job{Chat: chat, Text: text}.Encode()
	if err != nil {
		return err
	}
	if err := f.c.Do(ctx, f.c.B().Rpush().Key(f.key).Element(string(p)).Build()).Error(); err != nil {
		return fmt.Errorf("fifo push: %w", err)
	}
	return nil
}

// slidingLog is a client-side sliding-window limiter.
type slidingLog struct {
	limit int
	per   time.Duration
	times []time.Time
}

func (s *slidingLog) wait(now time.Time) time.Duration {
	cut := now.Add(-s.per)
	i := 0
	for i < len(s.times) && !s.times[i].After(cut) {
		i++
	}
	s.times = s.times[i:]
	if len(s.times) < s.limit {
		return 0
	}
	return s.times[len(s.times)-s.limit].Add(s.per).Sub(now)
}

func (f *fifo) run(ctx context.Context) error {
	l := benchLimits()
	// The bot's windows: 1 s plus the notifier's slack.
	stretch := time.Second + max(l.Slack, 0)
	global := &slidingLog{limit: l.GlobalPerSecond, per: stretch}
	chats := map[int64]*slidingLog{}
	jobs := make(chan tgjob.Job)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(jobs)
	for range senders {
		wg.Go(func() {
			for j := range jobs {
				for ctx.Err() == nil {
					_, err := f.b.SendMessage(ctx, &bot.SendMessageParams{ChatID: j.Chat, Text: j.Text})
					var tm *bot.TooManyRequestsError
					if errors.As(err, &tm) {
						sleepCtx(ctx, time.Duration(tm.RetryAfter)*time.Second)
						continue
					}
					break
				}
			}
		})
	}
	for ctx.Err() == nil {
		v, err := f.c.Do(ctx, f.c.B().Blpop().Key(f.key).Timeout(0.2).Build()).AsStrSlice()
		if valkey.IsValkeyNil(err) || ctx.Err() != nil {
			continue
		}
		if err != nil {
			return fmt.Errorf("fifo pop: %w", err)
		}
		j, err := tgjob.Decode([]byte(v[1]))
		if err != nil {
			return err
		}
		cl := chats[j.Chat]
		if cl == nil {
			cl = &slidingLog{limit: l.PrivatePerSecond, per: stretch}
			chats[j.Chat] = cl
		}
		for ctx.Err() == nil {
			now := time.Now()
			d := max(global.wait(now), cl.wait(now))
			if d <= 0 {
				global.times = append(global.times, now)
				cl.times = append(cl.times, now)
				break
			}
			sleepCtx(ctx, d)
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
