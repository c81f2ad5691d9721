package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/chatstate"
	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/redact"
	"github.com/codemojex/codemojex/tgapi"
)

// Config tunes a Worker. Zero fields take the defaults in brackets.
type Config struct {
	// Token is the bot token (required). It never appears in a log line,
	// a returned error or a dead-letter reason (see redact).
	Token string
	// ServerURL is the Bot API server [https://api.telegram.org]; tests
	// give the emulator's URL.
	ServerURL string
	// HTTPClient, when set, sends the requests through net/http (e.g. an
	// http.Client on NewTransport(Senders): keep-alive, HTTP/2 where
	// offered, Senders+2 idle connections per host) [nil: tgapi's own
	// keep-alive HTTP/1.1 connections, Senders+2 kept idle, each send
	// written and read by its sender (about half net/http's CPU a send:
	// tgapi BenchmarkSendCPU); net/http when the environment names a proxy
	// (HTTPS_PROXY)]; per-request timeouts come from SendTimeout.
	HTTPClient *http.Client
	// Senders is the most batches sent at once, each by one goroutine in
	// order: the upper bound of the worker's concurrency [DefaultSenders,
	// 1,536; at most MaxSenders, 4,096]. A batch is one lane's turn of the ring:
	// up to min(weight, BatchMax) consecutive messages of one chat, sent one
	// after another. How many are used follows the budget (see Run):
	// ClaimRate × the measured time a message holds its sender, with
	// headroom, at least MinSenders. The cap bounds memory and sockets (see
	// DefaultSenders for the cost).
	Senders int
	// MinSenders is the fewest batches sent at once [DefaultMinSenders, 4;
	// at most Senders]. MinSenders = Senders fixes the concurrency (the
	// worker before concurrency followed the budget: 8 and 8).
	MinSenders int
	// BatchMax caps the messages one claim hands to one sender [16]. It
	// must be at least the highest lane weight that should take effect: a
	// lane of weight w gets up to w messages per turn of the ring, which is
	// what gives it about w times the share while the global rate binds.
	BatchMax int
	// ClaimRate spreads claims over time: the worker claims at most
	// ClaimRate messages per second on average (a claim of K messages
	// moves the next claim K/ClaimRate s later; a late or idle claim loop
	// catches up by at most claimCredit (4) messages or claimCreditTime
	// (20 ms) of ClaimRate, whichever is more, so no burst of more than 5
	// messages, or 20 ms of the rate, builds up; claims in flight at once,
	// see Run, are spaced at their issue)
	// [0: no spreading].
	// It is also the rate the concurrency is sized for (Senders): 0 means
	// unknown, and the worker then keeps Senders batches at once.
	// Set it to the global rate (the bot's TELEGRAM_GLOBAL_RATE): the budget
	// is then spent as it refills instead of in bursts, and a burst would
	// let the other senders serve several turns of the ring while one
	// sender still sends a weighted chat's batch in order, so the chat
	// would get less than its weight's share.
	ClaimRate int
	// Lease is the lanes lease of a claimed job [30 s]; a slow send renews
	// it (Extend) every Lease/3.
	Lease time.Duration
	// LivenessTTL is how long this worker may go unheard before any live
	// worker recovers its leases [consumer.DefaultLivenessTTL, 2 s]: a
	// worker killed mid-send has its jobs sent again within about this
	// long, not at its leases' end (consumer.KeepAlive).
	LivenessTTL time.Duration
	// SendTimeout bounds one sendMessage call [20 s]. Near its flood
	// limits Telegram may hold a request for about 15 s before answering
	// it (instead of a quick 429), so a shorter timeout would cut sends
	// that succeed and send them again; 20 s leaves a margin above that
	// and stays well below Lease, so a send cut by the timeout is settled
	// while its lease holds. A send cut after its request was written has
	// an unknown outcome: it is sent again at most once (metric
	// codemojex_worker_unknown_outcome_total), then dead-lettered.
	SendTimeout time.Duration
	// SettleFor bounds how long settling one job (ack, nack, release,
	// park, dead-letter) is retried while the store fails [2 min]; a lost
	// lease (lanes.ErrStaleLease) stops it at once.
	SettleFor time.Duration
	// ShutdownGrace is how long in-flight sends may run after Run's
	// context ends before they are cut and their jobs released [10 s].
	// Settling is bounded too: Run returns at most ShutdownGrace + 2 s
	// after its context ends (the drain deadline), even while the store is
	// unreachable; a job that could not be settled by then keeps its lease
	// until it expires (Lease) and is then claimed again (at-least-once).
	ShutdownGrace time.Duration
	// DefaultRetryAfter parks a chat after a 429 that has no
	// parameters.retry_after [5 s].
	DefaultRetryAfter time.Duration
	// BackoffBase and BackoffMax shape the retry delay of transient
	// failures: BackoffBase * 2^(attempts so far), at most BackoffMax,
	// then ±20% jitter [1 s, 5 min].
	BackoffBase, BackoffMax time.Duration
	// GlobalFloodChats and GlobalFloodWindow decide when 429s are a global
	// signal: that many distinct chats answered 429 within the window
	// [3 chats, 1 s] (see the package doc).
	GlobalFloodChats  int
	GlobalFloodWindow time.Duration
	// UnauthorizedPause is how long the whole store is paused after a 401
	// (the token was revoked or is wrong) [1 min].
	UnauthorizedPause time.Duration
	// Logger receives the worker's logs, through the token redactor
	// [slog.Default()].
	Logger *slog.Logger
	// Registerer gets the worker's metrics [a private registry].
	Registerer prometheus.Registerer
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.Senders <= 0 {
		c.Senders = DefaultSenders
	}
	c.Senders = min(c.Senders, MaxSenders)
	if c.MinSenders <= 0 {
		c.MinSenders = DefaultMinSenders
	}
	c.MinSenders = min(c.MinSenders, c.Senders)
	if c.BatchMax <= 0 {
		c.BatchMax = 16
	}
	c.BatchMax = min(c.BatchMax, lanes.MaxClaim)
	def(&c.Lease, 30*time.Second)
	def(&c.SendTimeout, 20*time.Second)
	def(&c.SettleFor, 2*time.Minute)
	def(&c.ShutdownGrace, 10*time.Second)
	def(&c.DefaultRetryAfter, 5*time.Second)
	def(&c.BackoffBase, time.Second)
	def(&c.BackoffMax, 5*time.Minute)
	def(&c.GlobalFloodWindow, time.Second)
	def(&c.UnauthorizedPause, time.Minute)
	if c.GlobalFloodChats <= 0 {
		c.GlobalFloodChats = 3
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Worker claims message jobs from both queues of a notifier's store and
// sends them with the Bot API (tgapi). Create it with New and run it with Run.
type Worker struct {
	cfg   Config
	n     *notifier.Notifier
	store *lanes.Store
	// inspector is the store\'s Inspector: the lane-level reactions to
	// Telegram\'s answers (park on 429, dead-letter the lane on 403, move
	// it on a migration, the global pause).
	inspector *lanes.Inspector
	// chats is the chats' delivery state (notifier.Chats): 403s mark a
	// chat inactive, migrations record aliases, sends record message ids.
	chats    *chatstate.Store
	api      *tgapi.Client // the Bot API (sendMessage, editMessageText, getMe)
	log      *slog.Logger
	redactor *redact.Redactor
	m        *metrics
	flood    floodDetector

	running  atomic.Bool
	inflight atomic.Int64 // jobs claimed and not yet settled
	batches  atomic.Int64 // batches being sent (busy senders)
	freed    chan struct{}
	// hold estimates how long one message holds its sender (concurrency.go).
	hold holdEstimate
	// floor is the shortest recent Bot API round trip, settled with each
	// answered send (floor.go).
	floor rttFloor
	// shared is the store-wide floor: the smallest any worker process
	// published (floor.go).
	shared floorShare
	// paid caches whether the paid queue is halted (paid.go).
	paid paidHalt
	// acks batches the acks of delivered messages while Run runs (acks.go;
	// nil: each its own Store.Ack).
	acks atomic.Pointer[acker]
	// state is what the claims and the global pauses did lately (state.go).
	state state
}

// New returns a worker for n's store. Errors: a missing token or notifier,
// a metric already registered with another shape (all redacted).
func New(n *notifier.Notifier, cfg Config) (*Worker, error) {
	if n == nil {
		return nil, errors.New("worker: nil notifier")
	}
	cfg.defaults()
	red := redact.New(cfg.Token)
	log := slog.New(red.Handler(cfg.Logger.Handler())).With(slog.String("component", "worker"))
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("worker: metrics: %w", red.Error(err))
	}
	api, err := tgapi.New(tgapi.Config{Token: cfg.Token, ServerURL: cfg.ServerURL, HTTPClient: cfg.HTTPClient, MaxIdleConns: cfg.Senders + 2,
		Timeout: cfg.SendTimeout})
	if err != nil {
		return nil, fmt.Errorf("worker: %w", red.Error(err))
	}
	return &Worker{
		cfg: cfg, n: n, store: n.Store(), inspector: n.Store().Inspector(), chats: n.Chats(), api: api, log: log, redactor: red, m: m,
		flood: floodDetector{hits: map[int64]floodHit{}},
		freed: make(chan struct{}, 1),
	}, nil
}

// Redactor returns the worker's token redactor (see Config.Token).
func (w *Worker) Redactor() *redact.Redactor { return w.redactor }

// Run claims and sends until ctx ends, then shuts down gracefully: it stops
// claiming, releases claimed jobs not yet started, lets sends in progress
// finish for up to ShutdownGrace (then cuts them and releases their jobs),
// and returns once every lease it held is settled, so no job is lost (a job
// is acked after delivery, or back on its lane), or at the drain deadline
// (ShutdownGrace + 2 s after ctx ends) when the store is unreachable: a job
// left unsettled then is claimed again once its lease expires. It returns nil after a
// shutdown, or an error (redacted) when the wake-up subscription cannot be
// set up. Run must not be called twice at once on one Worker.
//
// Concurrency follows the budget: the loop keeps up to
// sendersFor(ClaimRate, hold, MinSenders, Senders) batches at once, where
// hold is the measured time one message holds its sender (the claim that
// fetched it, its Bot API round trip and settle; first measured by the
// warm-up's getMe calls), so the
// senders in use grow when Telegram answers slowly and shrink when it
// answers fast again (Little's law, see concurrency.go); metrics
// codemojex_worker_senders and codemojex_worker_sends_in_flight. The limits
// never depend on it: lanes counts every send against the global and
// per-chat budgets from its claim until one window after its latest
// possible arrival at Telegram (its settle minus the round-trip floor the
// worker passes with it, lanes.Lease.Floor, see floor.go), and an ordered
// lane with a job in flight is not served, so neither the limits nor a
// chat's order change with the number of senders. Since a send no longer
// holds the budget past its arrival, the budget does not cap the rate below
// the limit at any latency: the senders (rate × hold) are what it takes.
//
// One claim loop (consumer.Run over claimLoop, loop.go) feeds the senders:
// while a sender is free it claims with
// Max = BatchMax (up to min(weight, BatchMax) heads of a lane) and Lanes =
// the free senders up to lanesFor(ClaimRate) (one lane at the bulk rate,
// up to 16 at a high rate: claims.go), hands each lane's batch to a
// goroutine that sends it in order, and, with
// no slot free or nothing claimable, blocks on a freed slot, the lanes
// Waiter or RetryIn, never longer than a second (maxIdleWait: a wake-up
// lost with a silently dead subscription costs at most that). The loop keeps up to
// claimsFor(ClaimRate, claim round trip) claims in flight (ClaimRate × the
// measured round trip × 2, 1 to 8, claims.go): at a high rate one claim at a
// time cannot keep up (a broadcast at 1,000/s is 1,000 claims of one message
// each per second, 0.5-0.8 ms each on a loaded 2-CPU host), while at the
// bulk rate (30/s) it stays 1. A claim in flight holds a sender's slot and
// one message of the pace per lane asked for from its issue (it starts once
// they are all due), so claims never oversubscribe the senders and their
// starts are spaced at ClaimRate; the rest of a claim's messages are paced
// at its answer, and the slots and messages of lanes not served given back (so while P claims are in flight, the
// claims may take up to (P - 1) × (BatchMax - 1) messages more than the
// pacer's bound; the limits never depend on it). An answer that claimed
// nothing stops new claims until those in flight are back; the loop then
// waits on it (RetryIn, the Waiter) as one loop would, unless a later
// answer claimed jobs; after an answer that found nothing scheduled (an
// idle store) it keeps one claim in flight until an answer claims jobs
// again. So an idle worker's Valkey traffic stays one claim per wake-up:
// N independent loops would multiply idle claims for no throughput gain.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("worker: already running")
	}
	defer w.running.Store(false)
	defer w.api.CloseIdleConnections()
	waiter, err := w.store.NewWaiterRetry(ctx, func(err error, next time.Duration) {
		w.log.Warn("wake-up subscription failed; retrying", slog.Any("err", w.redactor.Error(err)), slog.Duration("retry_in", next))
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("worker: %w", w.redactor.Error(err))
	}
	// workCtx carries sends past ctx's end, for ShutdownGrace; drain
	// carries settling (and claims, lease renewals) until the drain
	// deadline, settleAfterCut later, so the jobs of sends cut at
	// ShutdownGrace are still released.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	drain, cancelDrain := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDrain()
	stopAfter := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(w.cfg.ShutdownGrace, cancelWork)
		d := time.AfterFunc(w.cfg.ShutdownGrace+settleAfterCut, cancelDrain)
		context.AfterFunc(drain, func() { t.Stop(); d.Stop() })
	})
	defer stopAfter()

	w.warmUp(ctx)
	w.shareFloor(ctx) // published before the first claim
	var wg sync.WaitGroup
	wg.Go(func() { w.shareFloors(ctx) })
	// The heartbeat outlives the claim loop's drain (its jobs are settled
	// or released by then): a worker killed mid-send has its jobs back on
	// their lanes within LivenessTTL, and it recovers those of dead ones.
	keep, stopKeep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKeep()
	consumer.StartKeepAlive(keep, &wg, w.store, w.shared.claimer(), w.cfg.LivenessTTL, tgjob.AllQueues(), w.log,
		func(n int) { w.m.recovered.Add(float64(n)) })
	w.log.Info("worker started", slog.Int("senders_max", w.cfg.Senders), slog.Int("senders_min", w.cfg.MinSenders),
		slog.Int("senders", w.senders()), slog.Duration("hold", w.hold.get()))
	// The acks of delivered messages in batches (acks.go), until the claim
	// loop returned (every lease settled or released).
	acks, stopAcks := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAcks()
	if k := newAcker(w.store, w.cfg.ClaimRate); k.size > 1 {
		w.acks.Store(k)
		defer w.acks.Store(nil)
		wg.Go(func() { k.run(acks) })
	}
	// One claim loop (consumer.Run), its batches each on a sender's
	// goroutine (kept between batches: senderPool); a failed claim waits
	// 1 s.
	pool := newSenderPool(w.senders)
	consumer.Run(ctx, consumer.Config{Async: true, Backoff: consumer.Backoff{Base: time.Second, Max: time.Second}, Log: w.log},
		func(int) consumer.Source[claimAnswer] {
			return &claimLoop{w: w, waiter: waiter, workCtx: workCtx, drain: drain, queues: tgjob.AllQueues(), pool: pool,
				pace: newClaimPacer(w.cfg.ClaimRate), results: make(chan claimAnswer, maxClaimsInFlight), probe: true}
		})
	pool.close() // its batches are done: consumer.Run waited for their claims' Handle
	stopKeep()
	stopAcks()
	wg.Wait()
	w.log.Info("worker stopped")
	return nil
}

// senders is how many batches the worker sends at once now (see Run).
func (w *Worker) senders() int {
	n := sendersFor(w.cfg.ClaimRate, w.hold.get(), w.cfg.MinSenders, w.cfg.Senders)
	w.m.senders.Set(float64(n))
	return n
}

// warmUp opens the senders' connections before the first claim with
// getMe calls (getMe sends no message, so no flood limit counts it), and
// measures the round trip the concurrency starts from: MinSenders calls at
// once, then as many more as the measured round trip needs (senders), so
// the first sends neither pay for dialling (and TLS) nor wait for senders
// the budget needs. Failures are only logged.
func (w *Worker) warmUp(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.SendTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Int32
	var last atomic.Value
	open := func(n int) {
		for range n {
			wg.Go(func() {
				t0 := time.Now()
				_, err := w.api.GetMe(ctx)
				w.m.apiLatency.WithLabelValues("getMe").Observe(time.Since(t0).Seconds())
				if err != nil {
					failed.Add(1)
					last.Store(w.redactor.Error(err))
					return
				}
				w.hold.observe(time.Since(t0))
				w.floor.observe(time.Since(t0), time.Now())
			})
		}
		wg.Wait()
	}
	open(w.cfg.MinSenders)
	open(w.senders() - w.cfg.MinSenders)
	if n := failed.Load(); n > 0 {
		w.log.Warn("warm-up getMe failed", slog.Int("failed", int(n)), slog.Any("err", last.Load()))
	}
}

// claimCredit is how many messages' worth of ClaimRate time a late claim
// loop may catch up (timer and scheduling delays), so the spreading costs
// no throughput, yet never allows more than a few claims at once.
const claimCredit = 4

// claimPacer spreads the claim loop's claims at ClaimRate messages per
// second (a GCRA on the claim loop's clock): a claim may start once the
// time of the previous claims has passed, and a claim that starts late
// moves that time to at most its credit before its own start: claimCredit
// messages, or claimCreditTime of the rate when that is more (a high
// rate). So a claim that starts after m messages were claimed starts no
// earlier than (m - credit) / rate after the first claim, and the claims
// that start within any interval of length d take at most d × rate + credit
// messages besides the last of them (a claim takes one lane's turn: up to
// BatchMax messages, one for a lane of weight 1). The zero rate spreads
// nothing.
type claimPacer struct {
	per    time.Duration // one message's share of a second; 0: no spreading
	credit int           // messages a late claim may catch up
	next   time.Time     // earliest start of the next claim
}

// newClaimPacer returns the pacer of rate messages per second (0: none).
func newClaimPacer(rate int) claimPacer {
	if rate <= 0 {
		return claimPacer{}
	}
	per := time.Second / time.Duration(rate)
	return claimPacer{per: per, credit: max(claimCredit, int((claimCreditTime+per-1)/per))}
}

// wait returns how long a claim about to start at now must wait first (0
// or less: none).
func (p *claimPacer) wait(now time.Time) time.Duration { return p.waitFor(now, 1) }

// waitFor returns how long a claim of n messages (n >= 1) about to start
// at now must wait first (0 or less: none): until the last of its n
// messages is due, so a claim of several lanes starts when its n messages
// are, not ahead of the rate (a late loop's credit counts as in claimed).
func (p *claimPacer) waitFor(now time.Time, n int) time.Duration {
	if p.per == 0 {
		return 0
	}
	next := p.next
	if earliest := now.Add(-time.Duration(p.credit) * p.per); next.Before(earliest) {
		next = earliest
	}
	return next.Add(time.Duration(n-1) * p.per).Sub(now)
}

// claimed records a claim started at t0 that took k messages; the claim
// loop records 1 when it issues a claim (before its answer, so claims in
// flight are spaced too) and the rest with answered.
func (p *claimPacer) claimed(t0 time.Time, k int) {
	if p.per == 0 || k <= 0 {
		return
	}
	if earliest := t0.Add(-time.Duration(p.credit) * p.per); p.next.Before(earliest) {
		p.next = earliest
	}
	p.next = p.next.Add(time.Duration(k) * p.per)
}

// answered records the answer of a claim recorded with claimed(t0, n) at
// its issue: it took k messages (fewer than n give the rest back, more
// are counted on).
func (p *claimPacer) answered(n, k int) {
	if p.per == 0 {
		return
	}
	p.next = p.next.Add(time.Duration(k-n) * p.per)
}

// claimAnswer is a claim's answer, handed to the claim loop.
type claimAnswer struct {
	c     lanes.Claimed
	lanes int // the lanes it asked for: the senders' slots it holds
	// batches are c's batches, one per lane served (take splits them).
	batches [][]lanes.Job
	err     error
	t0      time.Time     // when the loop issued it
	took    time.Duration // the store call alone
}

// claimCreditTime is the least ClaimRate time a late claim loop may catch
// up: at a high rate 4 messages are a few ms (4 ms at 1,000/s), less than a
// timer or a scheduler is late on a busy host, and every such delay beyond
// the credit was budget lost for good (bench delivery, 1,000/s at 300 ms on
// a loaded 2-CPU host: 0.42 of the limit with 4 messages of credit; see
// docs/delivery.md). 20 ms of the rate is still a small part of the 1 s
// window.
const claimCreditTime = 20 * time.Millisecond

// unreserve frees n senders' slots taken for a claim that did not use
// them (n <= 0: none).
func (w *Worker) unreserve(n int) {
	if n <= 0 {
		return
	}
	w.batches.Add(-int64(n))
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// batchDone records that a sender finished its batch and is free.
func (w *Worker) batchDone() {
	w.batches.Add(-1)
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// settled records that n jobs of this worker are settled.
func (w *Worker) settled(n int) {
	if n <= 0 {
		return
	}
	w.inflight.Add(-int64(n))
	w.m.inFlight.Sub(float64(n))
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// settleCtx bounds one lanes call made to settle a job to 10 s; ctx is the
// drain context (see settle), which survives the work context, so a job is
// released even when its send was cut, and ends at the drain deadline.
func settleCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 10*time.Second)
}

// settleAfterCut is how long, after ShutdownGrace has cut the sends still
// running, settling may go on (releasing the cut sends' jobs, acking the
// last deliveries): the drain deadline is ShutdownGrace + settleAfterCut
// after shutdown begins. With a reachable store it takes milliseconds.
const settleAfterCut = 2 * time.Second

// backoff is the delay before retry number attempts+1: BackoffBase *
// 2^attempts, capped at BackoffMax, with ±20% jitter.
func (w *Worker) backoff(attempts int) time.Duration {
	return consumer.Backoff{Base: w.cfg.BackoffBase, Max: w.cfg.BackoffMax, Jitter: 0.2}.Delay(attempts)
}

// floodDetector decides when 429s are a global signal.
type floodDetector struct {
	mu   sync.Mutex
	hits map[int64]floodHit
}

type floodHit struct {
	at    time.Time
	retry time.Duration
	queue string // the queue of the job answered 429
}

// floodSignal is a global flood signal (floodDetector.note): the pause (the
// shortest retry_after of the window) and the queues whose jobs got the
// 429s, sorted, once each (the budgets to lower).
type floodSignal struct {
	pause  time.Duration
	queues []string
}

// note records a 429 for chat's job of queue; it reports a global signal
// when at least chats distinct chats answered 429 within window, and then
// starts counting afresh.
func (f *floodDetector) note(chat int64, queue string, retry time.Duration, now time.Time, window time.Duration, chats int) (floodSignal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c, h := range f.hits {
		if now.Sub(h.at) > window {
			delete(f.hits, c)
		}
	}
	f.hits[chat] = floodHit{at: now, retry: retry, queue: queue}
	if len(f.hits) < chats {
		return floodSignal{}, false
	}
	sig := floodSignal{pause: -1}
	for _, h := range f.hits {
		if sig.pause < 0 || h.retry < sig.pause {
			sig.pause = h.retry
		}
		if !slices.Contains(sig.queues, h.queue) {
			sig.queues = append(sig.queues, h.queue)
		}
	}
	slices.Sort(sig.queues)
	clear(f.hits)
	return sig, true
}
