package tgemu

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
)

// DefaultToken is the bot token the emulator accepts when WithToken is not
// given. Its shape (<bot id>:<secret>) is that of a real token; the bot id
// 7000000001 is also the id getMe reports.
const DefaultToken = "7000000001:AAEmulatorTokenForTestsOnly_0123456"

// ErrClosed is returned by the wait helpers once the emulator is closed.
var ErrClosed = errors.New("tgemu: emulator closed")

// shutdownGrace bounds how long Close waits for in-flight requests before it
// closes their connections.
const shutdownGrace = 2 * time.Second

// Option configures an Emulator in New.
type Option func(*config)

type config struct {
	token        string
	botUser      *models.User
	limits       Limits
	allowAnyChat bool
	logger       *slog.Logger
	now          func() time.Time
	localServer  bool
	latency      time.Duration
	jitter       float64
	// webhook delivery: answer timeout, retry delay
	webhookTimeout, webhookRetry time.Duration
	idleTimeout                  time.Duration
}

// WithToken sets the only bot token the emulator accepts (default
// DefaultToken). Requests with any other token are answered 401
// "Unauthorized", like Telegram does.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithBotUser sets the user returned by getMe and used as "from" of the
// messages the bot sends. IsBot is forced to true. Default: id parsed from the
// token, first name "Codemojex Test", username "codemojex_test_bot".
func WithBotUser(u models.User) Option {
	return func(c *config) { u.IsBot = true; c.botUser = &u }
}

// WithLimits replaces the flood limits (default DefaultLimits()). A zero Rate
// disables that limit; WithLimits(Limits{}) disables them all.
func WithLimits(l Limits) Option { return func(c *config) { c.limits = l } }

// WithAllowAnyChat makes every chat id known: sendMessage to an id never
// registered creates the chat (private for id > 0, group or supergroup for
// id < 0) instead of answering 400 "chat not found". Meant for fan-out tests.
func WithAllowAnyChat() Option { return func(c *config) { c.allowAnyChat = true } }

// WithLogger makes the emulator log each request (method, chat id, status;
// never the token) at Debug level. By default nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithClock replaces time.Now as the emulator's clock: it stamps requests,
// messages (also their "date") and drives the sliding windows of the flood
// limits. Long-poll timeouts and injected delays always use real time.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithLatency makes the emulator answer every request but getUpdates d
// after it arrived (real time): half of d passes before the request is
// processed (the way to Telegram), half after (the way back), so a message
// counts against the flood limits d/2 after the client sent it. It is what a
// bot hosted far from Telegram's data centres sees (300 ms and more), and
// it composes with injected faults (a FaultDelay adds to it). A cancelled
// request is not processed. Change it at run time with SetLatency.
func WithLatency(d time.Duration) Option { return func(c *config) { c.latency = max(d, 0) } }

// WithIdleTimeout makes the emulator close a keep-alive connection that
// has been idle for d (default: never, as net/http's server). Telegram's
// own idle timeout is not published; a client must not reuse a connection
// the server closed meanwhile (a send written on it gets no answer, its
// outcome unknown), and this is how tests play that.
func WithIdleTimeout(d time.Duration) Option { return func(c *config) { c.idleTimeout = max(d, 0) } }

// WithJitter makes WithLatency's delay jitter by ±f of it (f clamped to
// [0, 1]; 0.5 is ±50%), as a network's does: the way there and the way
// back are each drawn uniformly and independently within ±f of their half,
// per request, so the total stays within latency × (1 ± f) with the
// latency as its mean, and two requests sent in order may be processed
// out of order. 0 (the default) is a steady latency.
func WithJitter(f float64) Option { return func(c *config) { c.jitter = min(max(f, 0), 1) } }

// Emulator is a running Telegram Bot API emulator. Create it with New and
// stop it with Close. All methods are safe for concurrent use.
type Emulator struct {
	token   string
	botUser models.User
	log     *slog.Logger
	now     func() time.Time

	ln  net.Listener
	srv *http.Server
	url string
	// connsAccepted counts the connections accepted (ConnsAccepted).
	connsAccepted atomic.Int64

	closeOnce sync.Once
	closed    chan struct{}

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced on every state change
	limits       Limits
	allowAnyChat bool
	global       window
	reply        window // Limits.Reply's
	paid         window // Limits.Paid's
	// stars is the Stars balance in tenths of a Star (-1: unlimited, the
	// default); paidSent counts the accepted paid sends.
	stars        int64
	paidSent     int
	chats        map[int64]*chatState
	chatOrder    []int64
	updates      []models.Update // queued, not yet confirmed by an offset
	nextUpdateID int64
	activePoll   *poller
	webhookURL   string
	// webhook delivery (webhook.go)
	localServer                  bool
	webhookSecret                string
	webhookGen                   int
	webhookError                 string
	webhookTimeout, webhookRetry time.Duration
	deliveries                   []WebhookDelivery
	faults                       []*faultRule
	requests                     []Request
	commands                     map[string][]models.BotCommand
	descriptions                 map[string]string   // "d|<lang>" / "s|<lang>" -> setMyDescription / setMyShortDescription
	members                      map[[2]int64]string // {chat, user} -> getChatMember status set by SetChatMemberStatus
	callbacks                    map[string]*callbackState
	answers                      []CallbackAnswer
	nextCallback                 int64
	inflight                     int // requests being handled
	latency                      time.Duration
	jitter                       float64 // WithJitter's fraction
}

// New starts an emulator listening on 127.0.0.1 on a free port. Call Close
// when done.
func New(opts ...Option) (*Emulator, error) {
	cfg := config{token: DefaultToken, limits: DefaultLimits(), now: time.Now, webhookTimeout: 5 * time.Second, webhookRetry: 200 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	if strings.TrimSpace(cfg.token) == "" {
		return nil, errors.New("tgemu: empty token")
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.botUser == nil {
		id, _ := strconv.ParseInt(strings.SplitN(cfg.token, ":", 2)[0], 10, 64)
		cfg.botUser = &models.User{
			ID: id, IsBot: true, FirstName: "Codemojex Test", Username: "codemojex_test_bot",
			CanJoinGroups: true,
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tgemu: listen: %w", err)
	}
	e := &Emulator{
		token:          cfg.token,
		botUser:        *cfg.botUser,
		log:            cfg.logger,
		now:            cfg.now,
		ln:             ln,
		url:            "http://" + ln.Addr().String(),
		closed:         make(chan struct{}),
		changed:        make(chan struct{}),
		limits:         cfg.limits,
		stars:          -1,
		allowAnyChat:   cfg.allowAnyChat,
		localServer:    cfg.localServer,
		webhookTimeout: cfg.webhookTimeout,
		webhookRetry:   cfg.webhookRetry,
		latency:        cfg.latency,
		jitter:         cfg.jitter,
		chats:          make(map[int64]*chatState),
		nextUpdateID:   1,
		commands:       make(map[string][]models.BotCommand),
		descriptions:   make(map[string]string),
		members:        make(map[[2]int64]string),
		callbacks:      make(map[string]*callbackState),
	}
	e.srv = &http.Server{
		Handler:           e,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.idleTimeout,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				e.connsAccepted.Add(1)
			}
		},
		ErrorLog: slog.NewLogLogger(cfg.logger.Handler(), slog.LevelDebug),
	}
	go func() {
		if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("tgemu: serve", slog.Any("err", err))
		}
	}()
	return e, nil
}

// URL is the server URL to give to bot.WithServerURL, e.g.
// "http://127.0.0.1:41234" (no trailing slash).
func (e *Emulator) URL() string { return e.url }

// Token is the one bot token the emulator accepts.
func (e *Emulator) Token() string { return e.token }

// ConnsAccepted is how many connections the emulator has accepted: with
// keep-alive, one per client connection, not one per request.
func (e *Emulator) ConnsAccepted() int { return int(e.connsAccepted.Load()) }

// BotUser is the user getMe returns.
func (e *Emulator) BotUser() models.User { return e.botUser }

// Close ends pending long polls (they get an empty result), interrupts
// injected delays, stops the server and wakes every waiter with ErrClosed.
// In-flight requests get up to 2 s to finish before their connections are
// closed. Close is idempotent.
func (e *Emulator) Close() error {
	var err error
	e.closeOnce.Do(func() {
		close(e.closed)
		e.mu.Lock()
		e.broadcastLocked()
		e.mu.Unlock()
		// Woken long polls and delays answer at once; give them (and any
		// other handler) a moment to write, then close every connection.
		// http.Server.Shutdown is not used: it waits up to 5 s for client
		// connections that were opened but never used.
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		werr := e.wait(ctx, func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.inflight == 0
		}, nil)
		if cerr := e.srv.Close(); cerr != nil {
			err = fmt.Errorf("tgemu: close: %w", cerr)
		}
		if werr != nil {
			err = errors.Join(err, fmt.Errorf("tgemu: requests still running at close: %w", werr))
		}
	})
	return err
}

// SetLimits replaces the flood limits from now on (windows keep their
// history).
func (e *Emulator) SetLimits(l Limits) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.limits = l
}

// Limits are the flood limits in force (the zero Limits: none).
func (e *Emulator) Limits() Limits {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.limits
}

// SetLatency changes WithLatency's answer delay from the next request on
// (negative means 0).
func (e *Emulator) SetLatency(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.latency = max(d, 0)
}

// latencyFor is the injected delays of a request for method (lower case):
// WithLatency's, half on the way there and the rest on the way back, each
// jittered (WithJitter); none for getUpdates (a long poll already waits).
func (e *Emulator) latencyFor(method string) (there, back time.Duration) {
	if method == "getupdates" {
		return 0, 0
	}
	e.mu.Lock()
	lat, j := e.latency, e.jitter
	e.mu.Unlock()
	there, back = lat/2, lat-lat/2
	if j > 0 {
		there, back = jittered(there, j, rand.Float64()), jittered(back, j, rand.Float64())
	}
	return there, back
}

// jittered is d moved by up to ±j of it: d × (1 + j × (2u − 1)) for u in
// [0, 1) (uniform u: uniform within d × (1 ± j)).
func jittered(d time.Duration, j, u float64) time.Duration {
	return time.Duration(float64(d) * (1 + j*(2*u-1)))
}

// SetAllowAnyChat switches WithAllowAnyChat on or off at run time.
func (e *Emulator) SetAllowAnyChat(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowAnyChat = on
}

// call is one parsed Bot API request.
type call struct {
	method string // lower case
	params map[string]string
	at     time.Time // emulator clock when processing started; a send's or edit's: when the flood limiter took it (nowLocked)
}

// ServeHTTP implements http.Handler: routing, token check, fault injection,
// dispatch to the method and recording.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	e.mu.Lock()
	e.inflight++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.inflight--
		e.broadcastLocked()
		e.mu.Unlock()
	}()
	rec := Request{Time: e.now()}

	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || method == "" {
		e.finish(ctx, w, &rec, errReply(http.StatusNotFound, "Not Found", nil))
		return
	}
	rec.Method = method
	if subtle.ConstantTimeCompare([]byte(token), []byte(e.token)) != 1 {
		e.finish(ctx, w, &rec, errReply(http.StatusUnauthorized, "Unauthorized", nil))
		return
	}
	params, err := readParams(r)
	if err != nil {
		e.finish(ctx, w, &rec, errReply(http.StatusBadRequest, "Bad Request: "+err.Error(), nil))
		return
	}
	rec.Params = params
	rec.ChatID, _ = strconv.ParseInt(strings.TrimSpace(params["chat_id"]), 10, 64)
	c := &call{method: strings.ToLower(method), params: params}
	// The way to Telegram (WithLatency): half the delay before processing,
	// the rest (back) before any answer.
	there, back := e.latencyFor(c.method)
	if !e.sleep(ctx, there) {
		rec.Canceled = true
		e.record(ctx, &rec)
		return
	}

	f := e.takeFault(c.method, rec.ChatID)
	if f != nil {
		rec.Fault = f.Kind
	}
	if f != nil && !f.AfterProcessing {
		if f.Kind == FaultDelay {
			if !e.sleep(ctx, f.Delay) {
				rec.Canceled = true
				e.record(ctx, &rec)
				return
			}
		} else {
			e.sleep(ctx, back)
			e.applyFault(ctx, w, &rec, f)
			return
		}
	}

	c.at = e.now()
	rep := e.dispatch(ctx, c)
	rec.Time = c.at // a send's or edit's: when the limiter took it (nowLocked)
	rec.MessageID = rep.messageID
	if rep.canceled {
		rec.Canceled = true
		e.record(ctx, &rec)
		return
	}
	if f != nil && f.AfterProcessing {
		if f.Kind != FaultDelay {
			e.sleep(ctx, back)
			e.applyFault(ctx, w, &rec, f)
			return
		}
		if !e.sleep(ctx, f.Delay) {
			rec.Canceled = true
			e.record(ctx, &rec)
			return
		}
	}
	// The way back (WithLatency). A request cancelled meanwhile was
	// processed: it is recorded as answered (the client never reads it).
	e.sleep(ctx, back)
	e.finish(ctx, w, &rec, rep)
}

// nowLocked is the time of a send or edit the flood limiter takes
// (sendMessage, editMessageText: call.at), read under e.mu: the windows
// then hold their times in the order they were taken, oldest first, as
// window.wait drops them. A time read before the lock (the handler
// preempted in between, a CPU-starved host) could be older than one taken
// before it: the window would keep it past its second behind the newer
// one and answer a 429 that the recorded times do not call for
// (TestAnOvertakenSendIsRecordedWhenTheLimiterTakesIt).
func (e *Emulator) nowLocked() time.Time { return e.now() }

// dispatch runs one Bot API method.
func (e *Emulator) dispatch(ctx context.Context, c *call) reply {
	switch c.method {
	case "getme":
		return okReply(e.botUser)
	case "getupdates":
		return e.getUpdates(ctx, c)
	case "sendmessage":
		return e.sendMessage(c)
	case "editmessagetext":
		return e.editMessageText(c)
	case "setmycommands":
		return e.setMyCommands(c)
	case "getmycommands":
		return e.getMyCommands(c)
	case "setmydescription":
		return e.setMyDescription(c, "d", "description", maxDescription)
	case "setmyshortdescription":
		return e.setMyDescription(c, "s", "short_description", maxShortDescription)
	case "getmydescription":
		return e.getMyDescription(c, "d", "description")
	case "getmyshortdescription":
		return e.getMyDescription(c, "s", "short_description")
	case "getchatmember":
		return e.getChatMember(c)
	case "deletewebhook":
		return e.deleteWebhook(c)
	case "setwebhook":
		return e.setWebhook(c)
	case "getwebhookinfo":
		return e.getWebhookInfo()
	case "answercallbackquery":
		return e.answerCallbackQuery(c)
	case "getmystarbalance":
		return e.getMyStarBalance()
	default:
		return errReply(http.StatusNotFound, "Not Found", nil)
	}
}

// finish records the request, then writes rep: recording first means that
// once the client has its answer, the request log already holds it.
func (e *Emulator) finish(ctx context.Context, w http.ResponseWriter, rec *Request, rep reply) {
	rec.HTTPStatus = rep.status
	rec.ErrorCode = rep.errorCode
	rec.Description = rep.description
	rec.RetryAfter = rep.retryAfter
	e.record(ctx, rec)
	rep.write(w)
}

// record appends rec to the request log, logs it and wakes waiters.
func (e *Emulator) record(ctx context.Context, rec *Request) {
	e.log.LogAttrs(ctx, slog.LevelDebug, "tgemu request",
		slog.String("method", rec.Method),
		slog.Int64("chat_id", rec.ChatID),
		slog.Int("status", rec.HTTPStatus),
		slog.String("description", rec.Description),
		slog.String("fault", rec.Fault.String()),
		slog.Bool("canceled", rec.Canceled),
	)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, *rec)
	e.broadcastLocked()
}

// sleep waits d of real time; false when the request was cancelled or the
// emulator closed first.
func (e *Emulator) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-e.closed:
		return false
	}
}
