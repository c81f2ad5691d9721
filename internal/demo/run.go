package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyclient"
	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// Timeouts of the setup and teardown.
const (
	readyTimeout = 20 * time.Second // bot start to its first getUpdates
	stopGrace    = 10 * time.Second // SIGTERM to exit
	settle       = time.Second      // after the scene, to catch late or duplicate copies
)

// ErrInterrupted is wrapped by Run's error when ctx ended (Ctrl-C) before
// the scene did.
var ErrInterrupted = errors.New("demo: interrupted")

// Run sets everything up, plays the scene with a live view on opts.Out,
// tears everything down and returns the summary. An error means the demo
// could not run (no Valkey, the bot does not build or start, ...); broken
// promises are in the Summary (Summary.OK). When ctx ends first (Ctrl-C)
// the error wraps ErrInterrupted and ctx's error, and the Summary printed
// and returned is what the scene got to, Interrupted, with no verdict.
func Run(ctx context.Context, log *slog.Logger, opts Options) (Summary, error) {
	opts = opts.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := opts.Out
	st, err := startStack(ctx, log, opts)
	if st != nil {
		defer st.close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return Summary{Interrupted: true}, fmt.Errorf("%w while starting: %w", ErrInterrupted, err)
		}
		return Summary{}, err
	}
	qr, err := newQueueReader(st.vc, opts.LanesTag)
	if err != nil {
		return Summary{}, err
	}

	tr := newTracker(st.emu, "cmxdemo")
	sc := newScene(tr, opts.Scene)
	sceneCtx, cancel := context.WithTimeout(ctx, opts.Scene.Deadline)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc.play(sceneCtx)
		// Give late or duplicate copies a moment to show up.
		t := time.NewTimer(settle)
		defer t.Stop()
		select {
		case <-t.C:
		case <-sceneCtx.Done():
		}
	}()

	w := &watcher{log: log, emu: st.emu, qr: qr, sc: sc, tr: tr, weights: map[int64]int{}}
	last := w.watch(ctx, opts, done)

	sum := st.summarize(opts, sc, last)
	if ctx.Err() != nil {
		sum.Interrupted, sum.Checks = true, nil
	}
	sum.Admin = tr.transcript(AdminID)
	sum.BotOutput = st.bot.logs.String()
	st.botStopped = true
	t0 := time.Now()
	if err := st.bot.stop(stopGrace); err != nil {
		sum.BotStop = err.Error()
	}
	log.Debug("demo: bot stopped", slog.Duration("took", time.Since(t0)))
	if !sum.OK() && !sum.Interrupted {
		if logs := strings.TrimSpace(st.bot.logs.String()); logs != "" {
			fmt.Fprintf(out, "\nbot output (last lines):\n%s\n", lastLines(logs, 20))
		}
	}
	sum.Print(out)
	if sum.Interrupted {
		return sum, fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
	}
	return sum, nil
}

// stack is what the demo runs the scene against: the bot's process, its
// Valkey (vc, a client of it) and the emulator; close tears it down in
// reverse.
type stack struct {
	emu        *tgemu.Emulator
	valkeyURL  string
	consoleURL string // "" without opts.ConsoleAddr
	consoleTok string
	metricsURL string // "" without opts.HTTPAddr
	bot        *botProcess
	vc         valkey.Client
	botStopped bool
	closers    []func()
}

func (st *stack) close() {
	if st.bot != nil && !st.botStopped {
		_ = st.bot.stop(stopGrace)
	}
	for i := len(st.closers) - 1; i >= 0; i-- {
		st.closers[i]()
	}
}

// startStack builds the bot (unless opts.BotBinary), starts a Valkey (or
// checks opts.ValkeyURL's), the emulator at Telegram's limits and the bot,
// and waits until it polls. The stack it returns, even with an error, is
// closed by the caller.
func startStack(ctx context.Context, log *slog.Logger, opts Options) (st *stack, err error) {
	defer func() { // one prefix for what the caller runs: "demo: …", "play: …"
		if err != nil {
			err = fmt.Errorf("%s: %w", opts.Name, err)
		}
	}()
	out := opts.Out
	st = &stack{}
	tmp, err := os.MkdirTemp("", "codemojex-demo-")
	if err != nil {
		return st, fmt.Errorf("temp dir: %w", err)
	}
	st.closers = append(st.closers, func() { os.RemoveAll(tmp) })

	bin := opts.BotBinary
	if bin != "" {
		// The bot runs in tmp: a path relative to ours would name nothing there.
		if bin, err = filepath.Abs(bin); err != nil {
			return st, fmt.Errorf("the bot's binary: %w", err)
		}
	}
	if bin == "" {
		fmt.Fprintf(out, "building the bot (go build %s./cmd/bot) ...\n", strings.Join(append(opts.BuildFlags, ""), " "))
		t0 := time.Now()
		if bin, err = buildBot(ctx, tmp, opts.BuildFlags); err != nil {
			return st, err
		}
		log.Debug("demo: bot built", slog.Duration("took", time.Since(t0)))
	}

	valkeyURL, stopValkey, err := valkeyFor(ctx, opts.ValkeyURL)
	if err != nil {
		return st, err
	}
	st.closers = append(st.closers, stopValkey)
	st.valkeyURL = valkeyURL

	st.emu, err = tgemu.New(tgemu.WithToken(Token), tgemu.WithLimits(tgemu.DefaultLimits()),
		tgemu.WithLogger(log.With(slog.String("component", "tgemu"))))
	if err != nil {
		return st, fmt.Errorf("emulator: %w", err)
	}
	st.closers = append(st.closers, func() { _ = st.emu.Close() })
	fmt.Fprintf(out, "valkey %s, Bot API emulator %s (30 msg/s, 1 msg/s per chat, 20/min per group)\n", valkeyURL, st.emu.URL())

	env := botEnv(st.emu.URL(), valkeyURL, opts.LanesTag)
	// The bot runs in a process of its own: a port 0 it would bind is one
	// this process could not print, so it is chosen here.
	if opts.ConsoleAddr, err = fixedPort(opts.ConsoleAddr); err != nil {
		return st, fmt.Errorf("the console's address: %w", err)
	}
	if opts.HTTPAddr, err = fixedPort(opts.HTTPAddr); err != nil {
		return st, fmt.Errorf("the metrics address: %w", err)
	}
	if opts.ConsoleAddr != "" {
		token := consoleToken()
		env = append(env, "CONSOLE_ADDR="+opts.ConsoleAddr, "CONSOLE_TOKEN="+token)
		st.consoleURL, st.consoleTok = "http://"+opts.ConsoleAddr, token
		fmt.Fprintf(out, "console http://%s (sign in with %s)\n", opts.ConsoleAddr, token)
	}
	if opts.HTTPAddr != "" { // after botEnv's HTTP_ADDR: the later value wins
		env = append(env, "HTTP_ADDR="+opts.HTTPAddr)
		st.metricsURL = "http://" + opts.HTTPAddr + "/metrics"
		fmt.Fprintf(out, "metrics %s (health http://%s/healthz)\n", st.metricsURL, opts.HTTPAddr)
	}
	env = append(env, opts.ExtraEnv...)
	if st.bot, err = startBot(bin, tmp, env); err != nil {
		return st, err
	}
	t0 := time.Now()
	if err := waitReady(ctx, st.emu, st.bot); err != nil {
		return st, err
	}
	log.Debug("demo: bot polling", slog.Duration("took", time.Since(t0)))

	if st.vc, err = valkeyClient(valkeyURL); err != nil {
		return st, err
	}
	st.closers = append(st.closers, st.vc.Close)
	return st, nil
}

// watcher draws the live view from the tracker, the queues and the
// emulator; weights remembers each chat's last weight seen (a lane without
// work no longer shows it).
type watcher struct {
	log     *slog.Logger
	emu     *tgemu.Emulator
	qr      *queueReader
	sc      *scene
	tr      *tracker
	weights map[int64]int
}

func (w *watcher) snap(ctx context.Context) snapshot {
	phase, events, _ := w.sc.view(4)
	s := snapshot{scene: w.sc.cfg, elapsed: w.sc.elapsed(), chats: w.tr.stats(), phase: phase, events: events}
	lanes, err := w.qr.read(ctx)
	for i := range s.chats {
		c := &s.chats[i]
		if err == nil {
			c.Queued = lanes[c.ID].queued
			if wt := lanes[c.ID].weight; wt > 0 {
				w.weights[c.ID] = wt
			}
		}
		c.Weight = w.weights[c.ID]
	}
	if err != nil {
		w.log.Debug("demo: read lanes", slog.Any("err", err))
	}
	st := w.emu.Stats()
	s.delivered, s.peak, s.tooMany = st.Sent, st.MaxPerSecond, st.TooManyRequests
	return s
}

// watch redraws the view every opts.Refresh (a TTY) or opts.PlainEvery
// until done closes, finishes it and returns the last snapshot.
func (w *watcher) watch(ctx context.Context, opts Options, done <-chan struct{}) snapshot {
	view := &liveView{w: opts.Out, tty: opts.TTY}
	every := opts.PlainEvery
	if opts.TTY {
		every = opts.Refresh
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	fmt.Fprintln(opts.Out)
	for {
		select {
		case <-done:
			last := w.snap(ctx)
			view.finish(last)
			return last
		case <-tick.C:
			view.draw(w.snap(ctx))
		}
	}
}

// summarize judges the scene from the last snapshot and the emulator's
// figures.
func (st *stack) summarize(opts Options, sc *scene, last snapshot) Summary {
	alive, _ := st.bot.exited()
	_, _, errs := sc.view(0)
	es := st.emu.Stats()
	peakChat := 0
	for id, n := range es.MaxPerSecondByChat {
		if id > 0 {
			peakChat = max(peakChat, n)
		}
	}
	sum := summarize(opts.Scene, sc.elapsed(), last.chats, sc.rushResult(),
		limitsSeen{tooMany: es.TooManyRequests, rejected: es.Rejected, peakGlobal: es.MaxPerSecond, peakChat: peakChat,
			tooManyByChat: es.TooManyRequestsByChat},
		errs, !alive)
	sum.Diagnosis = diagnose429s(st.emu.SendRequests())
	return sum
}

// valkeyFor returns the URL of the Valkey to use and how to stop it: a
// throwaway server, or url when given (it must be an empty database).
func valkeyFor(ctx context.Context, url string) (string, func(), error) {
	if url == "" {
		srv, err := valkeyserver.Start("standalone", valkeyserver.Options{})
		if err != nil {
			return "", nil, fmt.Errorf("start a throwaway Valkey (run ./scripts/ensure-valkey.sh, or pass -valkey-url): %w", err)
		}
		return srv.URL, srv.Stop, nil
	}
	c, err := valkeyClient(url)
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	n, err := c.Do(ctx, c.B().Dbsize().Build()).AsInt64()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", url, err)
	}
	if n != 0 {
		noun := "keys"
		if n == 1 {
			noun = "key"
		}
		return "", nil, fmt.Errorf("%s holds %d %s: it needs an empty database (the bot's keys would mix with them): flush it, or leave out -valkey-url for a throwaway server", url, n, noun)
	}
	return url, func() {}, nil
}

func valkeyClient(url string) (valkey.Client, error) {
	opt, err := valkey.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("valkey URL: %w", err)
	}
	opt.DisableCache = true
	c, err := valkeyclient.New(opt)
	if err != nil {
		return nil, fmt.Errorf("connect to valkey: %w", err)
	}
	return c, nil
}

// waitReady waits for the bot's first long poll, failing early when the bot
// exits.
func waitReady(ctx context.Context, emu *tgemu.Emulator, bot *botProcess) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	go func() {
		select {
		case <-bot.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := emu.WaitUntil(ctx, emu.Polling)
	if err == nil {
		return nil
	}
	logs := lastLines(strings.TrimSpace(bot.logs.String()), 20)
	if done, werr := bot.exited(); done {
		return fmt.Errorf("the bot exited before polling for updates (%w); its output:\n%s", orExit0(werr), logs)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the bot did not poll for updates within %v; its output:\n%s", readyTimeout, logs)
	}
	return fmt.Errorf("waiting for the bot: %w", err)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// fixedPort is addr (host:port) with a port 0 replaced by a port of host
// that was free a moment ago (the OS's pick), so it can be printed before
// the bot binds it; any other addr, "" included, is returned as it is.
// Errors: a malformed addr, or no free port on its host.
func fixedPort(addr string) (string, error) {
	if addr == "" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if port != "0" {
		return addr, nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("a free port on %q: %w", host, err)
	}
	defer l.Close()
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return net.JoinHostPort(host, port), nil
}
