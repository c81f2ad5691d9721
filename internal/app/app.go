package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/floodnotice"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/gameui"
	"github.com/codemojex/codemojex/internal/handling"
	"github.com/codemojex/codemojex/internal/health"
	"github.com/codemojex/codemojex/internal/httpserver"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/lifecycle"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/internal/valkeyclient"
	"github.com/codemojex/codemojex/internal/version"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/redact"
	"github.com/codemojex/codemojex/tgapi"
	"github.com/codemojex/codemojex/worker"
)

// apiTimeout bounds each Bot API call of the poller and handler roles but
// getUpdates (go-telegram/bot's default client timeout, which bounded
// getMe and setMyCommands before tgapi).
const apiTimeout = time.Minute

// App is one codemojex process. Create it with New, run it with Run.
type App struct {
	cfg      config.Config
	opt      options
	log      *slog.Logger
	redactor *redact.Redactor

	c         valkey.Client
	ownClient bool
	store     *lanes.Store
	notifier  *notifier.Notifier
	games     *gamestore.Store
	audience  *chats.Audience
	chatDir   *chats.Directory
	langs     *chats.Languages   // the /language choices of users and groups
	cat       *i18n.Catalog      // the players' texts (internal/i18n)
	audit     *admin.AuditLog    // the audit stream: the admin commands' and the broadcasts' actions
	admin     *admin.Admin       // the admin commands and the administration API (admin.go)
	procs     *procs.Registry    // the deployment's live processes: this one's heartbeat (procs.go), the console's list
	bc        *broadcast.Service // /broadcast, its taps, its tracker, the admin API's broadcasts
	inbox     *intake.Inbox
	lease     *intake.Lease
	api       *tgapi.Client     // poller and handler roles: every Bot API call of the program but the worker's (its own)
	mux       *update.Mux       // routes updates to the handlers (newMux); its Ignores is the intake's filter
	handler   *handling.Handler // handler role: claims recorded updates and runs them through mux
	hm        *handling.Metrics // the handlers' metrics (every role registers them)
	worker    *worker.Worker
	reg       *prometheus.Registry
	m         *metrics
	ui        *gameui.UI         // the game's chat interface: player commands, guesses, the board
	health    *health.Checker    // /healthz's checks (reads the state below through health.Status)
	http      *httpserver.Server // /healthz, /metrics and, in webhook mode, the webhook receiver
	// codec signs and verifies callback data; taps verifies a tap, routes
	// it by kind (the game UI's board, the broadcast buttons) and answers
	// it with answerCallback (callback.go).
	codec tapdata.Codec
	taps  *tapdata.Router

	me         atomic.Pointer[models.User] // from getMe, before the first update is handled
	meErr      atomic.Pointer[string]      // getMe's last failure (redacted) until it succeeds
	meSem      chan struct{}               // one getMe per process (ensureMe): a lock whose wait a stop cancels
	meFatal    error                       // getMe's 401, held under meSem
	lastPoll   atomic.Int64                // unix nanoseconds of the last successful getUpdates
	leader     atomic.Bool                 // this process holds the poller lease
	webhookSet atomic.Bool                 // setWebhook succeeded (webhook mode)
	shortLog   atomic.Int64                // unix nanoseconds of the last replica-wait WARN (replicaShort)

	// floods is the intake limits' side that talks back (toasts,
	// notices) and their metrics; floods.Limiter() the limits (nil: off).
	floods *floodnotice.Notices

	closeOnce sync.Once
}

// NewLogger returns the default logger for cfg: JSON lines on stderr at
// LOG_LEVEL.
func NewLogger(cfg config.Config) *slog.Logger {
	lvl, _ := cfg.SlogLevel()
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// New prepares an App for cfg (already validated by config.Load): Valkey
// client, stores, notifier, worker and, in poller roles, the Telegram
// client. Every key it reads or writes carries the hash tag
// cfg.KeyTag (VALKEY_KEY_TAG), unless WithTag overrides it. It makes no
// Telegram call. Close releases what it opened; Run does it when it
// returns. Errors: a bad option's; a tag lanes refuses (lanes.ErrInvalid);
// the Valkey client's.
func New(cfg config.Config, opts ...Option) (*App, error) {
	o := options{tag: cfg.KeyTag, pollTimeout: DefaultPollTimeout, leaseTTL: intake.DefaultLeaseTTL, waitLimit: DefaultUpdateWaitLimit, claimFail: health.DefaultClaimFailLimit, httpTimeouts: DefaultHTTPTimeouts(),
		drain: DefaultDrainTimeout, editInterval: DefaultEditInterval, auditCap: admin.DefaultAuditCap, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if err := errors.Join(o.errs...); err != nil {
		return nil, err
	}
	red := redact.New(cfg.Token)
	if o.log == nil {
		o.log = NewLogger(cfg)
	}
	a := &App{cfg: cfg, opt: o, redactor: red, meSem: make(chan struct{}, 1),
		log: slog.New(red.Handler(o.log.Handler()))}
	if err := a.init(); err != nil {
		a.Close()
		return nil, red.Error(err)
	}
	return a, nil
}

func (a *App) init() error {
	cfg, o := a.cfg, a.opt
	a.c = o.client
	if a.c == nil {
		co, err := valkey.ParseURL(cfg.ValkeyURL)
		if err != nil {
			return fmt.Errorf("app: VALKEY_URL: %w", err)
		}
		// The bot reads nothing through valkey-go's client-side cache
		// (no DoCache): without this every connection also asks for
		// CLIENT TRACKING, and a server that cannot answer it (BUSY
		// while a script runs) fails the start with valkey-go's
		// misleading "DisableCache must be true for valkey not
		// supporting client-side caching" (docs/chaos.md).
		co.DisableCache = true
		// valkeyclient.New: valkey-go's client with its retried reads
		// pinned, so none is recycled under a broken connection's writer
		// (a data race; see package valkeyclient).
		if a.c, err = valkeyclient.New(co); err != nil {
			return fmt.Errorf("app: connect to Valkey at VALKEY_URL %s (is a Valkey or Redis 7+ server running there? docker compose up starts one; without Docker see docs/operations.md#running-without-docker): %w", config.RedactURL(cfg.ValkeyURL), err)
		}
		a.ownClient = true
	}
	var err error
	if a.store, err = notifier.NewStore(a.c, cfg.NotifierLimits(), 0, lanes.WithTag(o.tag)); err != nil {
		return fmt.Errorf("app: lanes store: %w", err)
	}
	if a.notifier, err = notifier.New(a.c, a.store, notifier.Config{}); err != nil {
		return fmt.Errorf("app: notifier: %w", err)
	}
	a.codec = tapdata.New(cfg.Token)
	a.taps = tapdata.NewRouter(a.codec, a.answerCallback, func() { a.m.callbacks.WithLabelValues("refused").Inc() }, a.log)
	if a.games, err = gamestore.New(a.c, o.tag); err != nil {
		return fmt.Errorf("app: game store: %w", err)
	}
	a.audience = chats.NewAudience(a.c, o.tag)
	a.langs = chats.NewLanguages(a.c, o.tag)
	if a.cat, err = i18n.New(); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.taps.Localize(a.localizeToast)
	if a.chatDir, err = chats.NewDirectory(a.c, o.tag); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.audit = admin.NewAuditLog(a.c, o.tag, o.auditCap, a.log.With(slog.String("component", "audit")))
	// The update queue: a store of its own on the same tag (so a chat's
	// weight applies to its updates too) without Telegram's rate limits,
	// which would throttle intake otherwise (intake.StoreOptions).
	upd, err := lanes.New(a.c, append(intake.StoreOptions(0), lanes.WithTag(o.tag))...)
	if err != nil {
		return fmt.Errorf("app: update queue: %w", err)
	}
	a.inbox = intake.NewInbox(a.c, upd, o.tag)
	gc := game.DefaultConfig()
	if o.gameCfg != nil {
		gc = *o.gameCfg
	}
	if a.ui, err = gameui.New(gameui.Config{Client: a.c, Tag: o.tag, Games: a.games, Notifier: a.notifier, Journal: a.inbox,
		Codec: a.codec, Game: gc, Random: o.rng, Me: a.me.Load, Catalog: a.cat, Languages: a.langs, IsGroupAdmin: a.isGroupAdmin,
		Log: a.log}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.taps.Route(tapdata.KindGame, a.ui.Tap)
	a.taps.Route(tapdata.KindLanguage, a.ui.LanguageTap)
	if a.bc, err = broadcast.New(broadcast.Config{Client: a.c, Tag: o.tag, Notifier: a.notifier, Audience: a.audience, Languages: a.langs,
		Journal: a.inbox, Audit: a.audit, Codec: a.codec, Username: a.username,
		GlobalRate: cfg.GlobalRate, PaidRate: cfg.PaidBroadcastRate, StarBalance: a.starBalance(), EditInterval: o.editInterval, Now: o.now,
		Log: a.log.With(slog.String("component", "broadcast"))}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	a.taps.Route(tapdata.KindBroadcast, a.adminTap(a.bc.OnTap))
	a.lease = intake.NewLease(a.c, o.tag, o.leaseTTL, a.log.With(slog.String("component", "poller")))
	// /metrics' registry: the bot's metrics, the Go and process collectors.
	a.reg = prometheus.NewRegistry()
	a.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if a.m, err = newMetrics(a.reg); err != nil {
		return fmt.Errorf("app: metrics: %w", err)
	}
	if a.hm, err = handling.NewMetrics(a.reg); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if cfg.Polls() || cfg.Handles() {
		// Each call bounded by apiTimeout; getUpdates by its long poll +
		// tgapi.PollMargin.
		a.api, err = tgapi.New(tgapi.Config{Token: cfg.Token, ServerURL: cfg.APIURL, HTTPClient: &http.Client{}, Timeout: apiTimeout})
		if err != nil {
			return fmt.Errorf("app: telegram client: %w", a.redactor.Error(err))
		}
	}
	if err := a.initFloods(); err != nil {
		return err
	}
	if err := a.initAdmin(); err != nil {
		return err
	}
	// The mux in every role: the intake's filter (ignores) is its Ignores.
	a.mux = a.newMux()
	a.inbox.WithFilter(a.ignores, func(reason string) { a.m.ignored.WithLabelValues(reason).Inc() })
	if cfg.WaitReplicas > 0 {
		a.inbox.WithReplicaWait(intake.ReplicaWait{Replicas: cfg.WaitReplicas, Timeout: cfg.WaitTimeout, Short: a.replicaShort})
	}
	if cfg.Handles() {
		if a.handler, err = handling.New(handling.Config{Inbox: a.inbox, Notifier: a.notifier, Mux: a.mux, Metrics: a.hm,
			Handlers: cfg.HandlerCount(), Lease: cfg.HandlerLease, Drain: o.drain, Ready: a.ensureMe, Log: a.log}); err != nil {
			return fmt.Errorf("app: %w", err)
		}
	}
	if cfg.Sends() {
		wc := cfg.WorkerConfig() // every budget as the claim rate (config.Rates.ClaimRate)
		wc.ShutdownGrace, wc.Logger, wc.Registerer = o.drain, o.log, a.reg
		if a.worker, err = worker.New(a.notifier, wc); err != nil {
			return fmt.Errorf("app: worker: %w", err)
		}
	}
	return a.initHTTP() // last: /healthz reads the worker
}

// Notifier returns the app's notifier (tests and tools enqueue with it).
func (a *App) Notifier() *notifier.Notifier { return a.notifier }

// Store returns the lanes store of the bot's messages.
func (a *App) Store() *lanes.Store { return a.store }

// Registry returns the Prometheus registry /metrics serves.
func (a *App) Registry() *prometheus.Registry { return a.reg }

// Close releases the Valkey client if the app dialed it. Idempotent.
func (a *App) Close() {
	a.closeOnce.Do(func() {
		if a.ownClient && a.c != nil {
			a.c.Close()
		}
	})
}

// Run is RunWith without extra services.
func (a *App) Run(ctx context.Context) error { return a.RunWith(ctx) }

// RunWith runs the process's services (Services), then extra ones (started
// after them, stopped before them: the console), with lifecycle.Run until
// ctx ends or one fails, then drains gracefully in the reverse order: the
// poller stops fetching (or the webhook receiving) and releases the
// lease, the updates being handled finish (within the drain timeout), the
// workers release or finish their in-flight jobs, and the HTTP server
// shuts down. It returns nil after a graceful stop, or the first failing
// service's error (a *lifecycle.Error naming it; errors.Is sees its cause,
// intake.ErrTokenRejected for one).
func (a *App) RunWith(ctx context.Context, extra ...lifecycle.Service) error {
	defer a.Close()
	a.log.Info("codemojex starting", slog.String("version", version.String()), slog.String("role", a.cfg.Role), slog.Int("workers", a.cfg.Workers),
		slog.Int("handlers", a.cfg.HandlerCount()), slog.Bool("webhook", a.cfg.Webhook()), slog.String("api", config.RedactURL(a.cfg.APIURL)))
	if a.cfg.Role == config.RolePoller {
		a.log.Warn("BOT_ROLE=poller only records updates, it handles none: run a process with BOT_ROLE=handler or all " +
			"(besides the workers), or no update is ever answered")
	}
	a.health.CheckEvictionPolicy(ctx)
	a.checkReplicas(ctx)
	logged := make(chan struct{})
	stopping := context.AfterFunc(ctx, func() {
		defer close(logged)
		a.log.Info("codemojex stopping", durationAttr("drain", a.opt.drain))
	})
	err := lifecycle.Run(ctx, a.log, append(a.Services(), extra...)...)
	if !stopping() {
		<-logged // joined: "stopping" is written before "stopped"
	}
	a.log.Info("codemojex stopped")
	return a.redactor.Error(err)
}

// starBalance reads the bot's Stars balance in tenths of a Star
// (getMyStarBalance: whole Stars and nanostars, 10^8 per tenth) for the
// paid broadcast preview, which handlers make (a role without a Bot API
// client, a worker, has none to read it with: an error).
func (a *App) starBalance() func(ctx context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		if a.api == nil {
			return 0, errors.New("app: no Bot API client in this role")
		}
		s, err := a.api.GetMyStarBalance(ctx)
		if err != nil {
			return 0, err
		}
		return int64(s.Amount)*10 + int64(s.NanostarAmount)/100_000_000, nil
	}
}

// checkReplicas warns at start when VALKEY_WAIT_REPLICAS asks for more
// replicas than acknowledge a write within VALKEY_WAIT_TIMEOUT (none
// connected, or fewer than it names): every record of updates would wait
// its whole timeout, one update batch at a time. Only in roles that take
// updates; a failed check is logged and the start goes on.
func (a *App) checkReplicas(ctx context.Context) {
	if !a.cfg.Polls() {
		return
	}
	acked, want, err := a.inbox.CheckReplicas(ctx)
	switch {
	case err != nil:
		a.log.Warn("VALKEY_WAIT_REPLICAS could not be checked at start", slog.Any("err", a.redactor.Error(err)))
	case acked < want:
		a.log.Warn("VALKEY_WAIT_REPLICAS names more replicas than acknowledged a write at start within VALKEY_WAIT_TIMEOUT: "+
			"until they do, every record of updates waits the whole timeout before Telegram is told (is a replica connected?)",
			slog.Int("wait_replicas", want), slog.Int("acked", acked), slog.Duration("wait_timeout", a.cfg.WaitTimeout))
	}
}

// replicaShortLogEvery is the least time between two of replicaShort's
// WARN lines (every short wait is counted).
const replicaShortLogEvery = 10 * time.Second

// replicaShort is the inbox's ReplicaWait.Short: a record confirmed with
// fewer replicas than VALKEY_WAIT_REPLICAS acknowledging it within
// VALKEY_WAIT_TIMEOUT. Counted each time, logged at WARN at most every
// replicaShortLogEvery (a replica down makes every record short).
func (a *App) replicaShort(acked int) {
	a.m.replicaShort.Inc()
	now := time.Now().UnixNano()
	last := a.shortLog.Load()
	if now-last < int64(replicaShortLogEvery) || !a.shortLog.CompareAndSwap(last, now) {
		return
	}
	a.log.Warn("updates confirmed to Telegram before enough Valkey replicas acknowledged them (a failover now may lose them)",
		slog.Int("acked", acked), slog.Int("want", a.cfg.WaitReplicas), slog.String("timeout", a.cfg.WaitTimeout.String()))
}
