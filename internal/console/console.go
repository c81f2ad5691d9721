// Package console is codemojex's operator console: a small web UI served by
// the bot itself on CONSOLE_ADDR (off by default) showing the queues, lanes,
// weights, dead letters, broadcasts, the audit log and the deployment's
// live processes, live.
//
// It holds no query of its own: every page reads the bot through Backend,
// the administration API the admin chat commands use (*admin.Admin), so a
// page and its chat command (/lanes, /weight, /dlq, /broadcast stop,
// /audit) show the same data, validate alike, give the same answers and
// write the same audit entries (who: "console"). Every page costs what it
// shows (paginated, bounded scans), not the number of lanes.
//
// Security: sign-in with CONSOLE_TOKEN (at least 32 characters and 128 bits
// of estimated entropy, compared in constant time; wrong tokens
// rate-limited per client, X-Forwarded-For believed from trusted proxies
// only, the right token never refused), a session cookie (HttpOnly,
// SameSite=Strict, Secure over TLS), a CSRF token on every change (POST
// only: no GET changes anything), a strict Content-Security-Policy (scripts
// and styles from the console's own embedded files only). It never shows
// the bot token. Templates are html/template, assets embedded with embed;
// the live parts are plain JavaScript polling a JSON endpoint (no Node build,
// no vendored library).
package console

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/lifecycle"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/lanes"
)

//go:embed templates/*.html static/*
var files embed.FS

// Backend is what the console reads and changes: the administration API
// of the bot (*admin.Admin implements it), shared with the admin commands.
type Backend interface {
	Queues(ctx context.Context, top int) ([]admin.QueueView, error)
	Backlog(ctx context.Context) (intake.Backlog, error)
	Gatherer() prometheus.Gatherer
	GlobalRate() int
	LimitedChats(ctx context.Context, n int) ([]flood.LimitedChat, error)
	FindChats(ctx context.Context, q string, n int) ([]admin.ChatRef, error)
	ParseChat(s string) (int64, error)
	Chat(ctx context.Context, id int64) (admin.ChatView, error)
	SetWeight(ctx context.Context, who, chat, weight string) (string, error)
	PauseQueue(ctx context.Context, who, queue string, pause bool) (string, error)
	PauseChat(ctx context.Context, who, chat string, pause bool) (string, error)
	DeadQueues() []string
	DeadLetters(ctx context.Context, f admin.DeadFilter) (admin.DeadPage, error)
	RequeueDead(ctx context.Context, who string, f admin.DeadFilter, ids []string) (string, error)
	PurgeDead(ctx context.Context, who string, f admin.DeadFilter, ids []string) (string, error)
	Broadcasts(ctx context.Context, n int) ([]admin.BroadcastView, error)
	StopBroadcast(ctx context.Context, who, id string) (string, error)
	PaidBroadcasts() bool
	ComposeBroadcast(ctx context.Context, c admin.Composition) (admin.ComposedPreview, error)
	StartBroadcast(ctx context.Context, who, token string) (string, error)
	CancelBroadcast(ctx context.Context, who, token string) (string, error)
	Audit(ctx context.Context, n int) ([]admin.AuditEntry, error)
	Processes(ctx context.Context) ([]procs.Process, error)
	AuditBefore(ctx context.Context, id string, n int) ([]admin.AuditEntry, error)
	FindJob(ctx context.Context, id string) ([]admin.JobView, error)
	PendingJobs(ctx context.Context, queue, lane, after string) ([]admin.JobView, error)
	RetryingJobs(ctx context.Context, queue string, skip int) ([]admin.JobView, error)
	WeightsPage(ctx context.Context, cursor string) ([]lanes.GroupWeight, string, error)
	Broadcast(ctx context.Context, id string, scan int) (admin.BroadcastDetail, error)
	RecordSample(ctx context.Context, at time.Time, p string) (bool, error)
	History(ctx context.Context, since time.Time) ([]admin.Sample, error)
	Budgets(ctx context.Context) ([]lanes.LearnedBudget, error)
}

var _ Backend = (*admin.Admin)(nil)

// Config configures a Console.
type Config struct {
	// Token is the sign-in token (CONSOLE_TOKEN): New refuses one that
	// config.ValidateConsoleToken refuses.
	Token string
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client a sign-in is counted and logged under
	// (CONSOLE_TRUSTED_PROXIES, config.Console.TrustedProxies); none: the
	// header is ignored and the peer's address is the client.
	TrustedProxies []netip.Prefix
	// Log receives the console's log lines (default: discarded).
	Log *slog.Logger
	// SessionTTL is how long a sign-in lasts [12 h].
	SessionTTL time.Duration
	// Sample is the Overview's sampling period [1 s]; History how many
	// samples its chart keeps [600: 10 minutes].
	Sample  time.Duration
	History int
	// HistoryEvery is the period of the history kept in Valkey
	// ({T}:app:hist, admin.HistoryCap samples) [1 min: 24 hours].
	HistoryEvery time.Duration
	// StoreTimeout bounds the store calls of one signed-in request (a
	// page, its JSON or a change) [5 s]: past it the request is answered
	// 503 with Retry-After as the store briefly unavailable, so a Valkey
	// that does not answer (frozen, cut off) gets an answer before a
	// proxy or browser gives up on the console.
	StoreTimeout time.Duration
}

// Page sizes.
const (
	topLanes      = 10  // deepest lanes per queue on Queues
	pageSize      = 25  // dead letters, audit entries per page
	chatsFound    = 20  // chat search results
	broadcastScan = 200 // audit entries read for the Broadcasts page
)

// Console serves the operator console. Create it with New; serve
// Handler, or Run it on an address.
type Console struct {
	b        Backend
	cfg      Config
	log      *slog.Logger
	tmpl     map[string]*template.Template
	sessions *sessions
	limiter  *signinLimiter
	samples  *sampler
	mux      *http.ServeMux
}

// New returns a console over b. Errors: a token
// config.ValidateConsoleToken refuses (its *config.Error: the console must
// not start then), a template that does not parse.
func New(b Backend, cfg Config) (*Console, error) {
	if err := config.ValidateConsoleToken(cfg.Token); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Sample <= 0 {
		cfg.Sample = time.Second
	}
	if cfg.History <= 0 {
		cfg.History = 600
	}
	if cfg.HistoryEvery <= 0 {
		cfg.HistoryEvery = time.Minute
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = 5 * time.Second
	}
	c := &Console{b: b, cfg: cfg, log: cfg.Log, sessions: newSessions(cfg.SessionTTL, 256),
		limiter: newSigninLimiter(), samples: newSampler(b, cfg.History, cfg.HistoryEvery, cfg.Log)}
	var err error
	if c.tmpl, err = parseTemplates(); err != nil {
		return nil, err
	}
	c.routes()
	return c, nil
}

// Handler is the console's HTTP handler.
func (c *Console) Handler() http.Handler { return c.mux }

// Run samples the bot's metrics and serves the console on ln until ctx
// ends (then shuts the server down within 2 s); it returns once its
// sampler and its server have stopped. Errors: the server's, when it
// stops serving on its own.
func (c *Console) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: c.mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(c.log.Handler(), slog.LevelWarn)}
	sctx, stopSampler := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopSampler()
	wg.Go(func() { c.samples.run(sctx, c.cfg.Sample) })
	errc := make(chan error, 1)
	wg.Go(func() { errc <- srv.Serve(ln) })
	c.log.Info("serving the console", slog.String("addr", ln.Addr().String()))
	select {
	case <-ctx.Done():
		shctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shctx)
		return nil
	case err := <-errc:
		return fmt.Errorf("console: %w", err)
	}
}

// Service is the console on addr (CONSOLE_ADDR) as a lifecycle service
// named "console": started once addr is bound (a bind error is its
// failure), then Run until stopped.
func (c *Console) Service(addr string) lifecycle.Service { return service{c: c, addr: addr} }

type service struct {
	c    *Console
	addr string
}

func (service) Name() string { return "console" }

func (s service) Run(ctx context.Context, started func()) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("CONSOLE_ADDR %s: %w", s.addr, err)
	}
	started()
	return s.c.Run(ctx, ln)
}

// laneLimit is a lane's in-flight cap (lanes.LaneStats.Limit) as the
// Queues and Chat pages show it: "none" at lanes.DefaultLaneLimit or above
// (no queue of the bot sets a cap: every lane has the default, which next
// to "depth" read as a depth limit of 1000000), else the number.
func laneLimit(n int) string {
	if n >= lanes.DefaultLaneLimit {
		return "none"
	}
	return strconv.Itoa(n)
}

func parseTemplates() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"ago":   ago,
		"clock": func(t time.Time) string { return t.UTC().Format(time.DateTime) },
		"pct": func(a, b int) int {
			if b <= 0 {
				return 0
			}
			return min(100*a/b, 100)
		},
		"add":       func(a, b int) int { return a + b },
		"jobState":  jobState,
		"laneLimit": laneLimit,
		"perWindow": admin.PerWindow,
		"card":      func(row broadcastRow, csrf string) broadcastCard { return broadcastCard{Row: row, CSRF: csrf} },
	}
	pages, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, p := range pages {
		name := p[len("templates/") : len(p)-len(".html")]
		if name == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", p)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", p, err)
		}
		out[name] = t
	}
	return out, nil
}

// ago renders how long before now t was: "12 s", "3 min", "-" for zero.
func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}
