package handling

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/notifier"
)

// Handling defaults.
const (
	// handlerBatch is the most updates of one lane a handler claims at
	// once (a lane of weight w is served up to w per turn of the ring).
	handlerBatch = 16
	// retryBase is the first wait before a failed update is tried again
	// (doubled per attempt, at most retryMax); its lane waits with it.
	retryBase = 100 * time.Millisecond
	retryMax  = 5 * time.Second
	// laneFullWait is how long an update whose reply (or board) found its
	// chat's reply lane full (REPLY_LANE_DEPTH) waits before it is handled
	// again, its chat's later updates waiting behind it: the lane drains at
	// the chat's send pace (Telegram: 1 message/s in a private chat, one
	// per 3 s in a group), and nothing is dropped.
	laneFullWait = time.Second
)

// Config is a Handler's: what it claims from, what it runs, where the
// replies go, and its timings (internal/config's HANDLERS, HANDLER_LEASE,
// the drain timeout).
type Config struct {
	Inbox    *intake.Inbox      // the update queue: claims, settlements, handled marks
	Notifier *notifier.Notifier // queues each update's replies (notifier.Reply)
	// Mux runs one update, synchronously (the app's update.Mux, with
	// Metrics.Recover outermost so a panic is an Outcome).
	Mux     update.Handler
	Metrics *Metrics // NewMetrics'
	// Handlers is how many claim loops run at once (HANDLERS), >= 1.
	Handlers int
	// Lease is each claimed update's lease (HANDLER_LEASE), > 0; the
	// runner extends it while the update runs, and an update with less
	// than half of it left is not started.
	Lease time.Duration
	// Drain bounds one update's handling, with Lease/2 (the smaller
	// wins): the drain timeout of a graceful stop, > 0.
	Drain time.Duration
	// LivenessTTL is how long this process's handlers may go unheard
	// before a live one recovers their updates [consumer.DefaultLivenessTTL]
	// (consumer.KeepAlive): a handler process killed mid-update has its
	// updates handled again within about this long, not at HANDLER_LEASE.
	LivenessTTL time.Duration
	// Ready, if set, runs before the first claim (the app learns the
	// bot's identity with getMe, so commands addressed /cmd@bot are
	// recognised); its error ends Run (nil when ctx ended meanwhile).
	Ready func(ctx context.Context) error
	Log   *slog.Logger // required
}

// Validate reports a missing part or a bad value of c.
func (c Config) Validate() error {
	switch {
	case c.Inbox == nil || c.Notifier == nil || c.Mux == nil || c.Metrics == nil || c.Log == nil:
		return errors.New("handling: Inbox, Notifier, Mux, Metrics and Log are required")
	case c.Handlers < 1:
		return fmt.Errorf("handling: Handlers %d: at least 1", c.Handlers)
	case c.Lease <= 0 || c.Drain <= 0:
		return fmt.Errorf("handling: Lease %v and Drain %v: positive durations", c.Lease, c.Drain)
	}
	return nil
}

// Handler is the update handler of one process: a lifecycle service
// ("handlers") running Config.Handlers claim loops. Any number of
// processes may run one on the same update queue.
type Handler struct {
	cfg     Config
	inbox   *intake.Inbox
	m       *Metrics
	log     *slog.Logger
	claimer string // its claims' claimer id (consumer.NewClaimerID)
}

// New returns the Handler of cfg, or Validate's error.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, inbox: cfg.Inbox, m: cfg.Metrics, log: cfg.Log, claimer: consumer.NewClaimerID()}, nil
}

// Name is the service's name in the lifecycle's logs and errors.
func (h *Handler) Name() string { return "handlers" }

// Run runs Config.Ready, then Config.Handlers handler loops (consumer.Run,
// one claim loop each) until ctx ends; started is called at once. Each loop
// claims recorded updates from the update queue itself (a batch of one
// lane, in update_id order) and handles them; claims are not funnelled
// through one loop, so claiming scales with the handlers. Idle handlers
// wait for a lanes wake-up (an update recorded) or the claim's RetryIn; a
// handler that got work wakes one more idle handler, so a burst wakes them
// all. A failed claim, or a batch that met an infrastructure failure, backs
// its handler off (intake.ErrorBackoff). When ctx ends the batches in
// progress finish (each update within min(Drain, Lease/2)) and the updates
// not started are released; Run returns nil. Errors: Ready's, or the lanes
// waiter's ("handlers: ...").
func (h *Handler) Run(ctx context.Context, started func()) error {
	started()
	if h.cfg.Ready != nil {
		if err := h.cfg.Ready(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	log := h.log.With(slog.String("component", "handler"))
	waiter, err := h.inbox.Store().NewWaiterRetry(ctx, func(err error, next time.Duration) {
		log.Warn("wake-up subscription failed; retrying", slog.Any("err", err), slog.Duration("retry_in", next))
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("handlers: %w", err)
	}
	n := h.cfg.Handlers
	kick := make(chan struct{}, n)
	wakeOne := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if waiter.Wait(ctx, time.Second) {
				wakeOne()
			}
		}
	})
	// The heartbeat outlives the handlers' drain: a handler process killed
	// mid-update has its updates handled again within LivenessTTL, not at
	// its leases' end, and it recovers those of dead ones.
	keep, stopKeep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKeep()
	consumer.StartKeepAlive(keep, &wg, h.inbox.Store(), h.claimer, h.cfg.LivenessTTL, []string{intake.QueueName}, log, nil)
	log.Info("handlers started", slog.Int("handlers", n), durationAttr("lease", h.cfg.Lease))
	consumer.Run(ctx, consumer.Config{Loops: n, Backoff: intake.ErrorBackoff(), Log: log},
		func(int) consumer.Source[intake.Claims] { return &loop{h: h, kick: kick, wakeOne: wakeOne} })
	stopKeep()
	wg.Wait()
	return nil
}

// durationAttr logs d as text ("500ms", "2m0s"), as the app's log lines
// do: slog.Duration is written as integer nanoseconds by the JSON handler.
func durationAttr(key string, d time.Duration) slog.Attr { return slog.String(key, d.String()) }
