package config

import (
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Roles of a process.
const (
	RoleAll     = "all"     // poller (or webhook receiver), handlers and workers
	RolePoller  = "poller"  // fetches (getUpdates) or receives (webhook) updates and records them; handles none
	RoleHandler = "handler" // claims recorded updates, runs the handlers, enqueues replies
	RoleWorker  = "worker"  // notification workers only
)

// Intake is what a process does (its role) and how updates reach and are
// handled by it: getUpdates or a webhook, the handlers and their lease.
type Intake struct {
	// Role is all, poller, handler or worker (BOT_ROLE).
	Role string `env:"BOT_ROLE" envDefault:"all"`
	// Handlers is the number of updates handled at once per process
	// (HANDLERS); 0 means DefaultHandlers() for this machine.
	Handlers int `env:"HANDLERS" envDefault:"0"`
	// HandlerLease is how long a handler holds a claimed update before
	// another handler may take it over (HANDLER_LEASE, a Go duration):
	// after a handler process dies, its updates (and their chats) wait
	// this long. An update's handling is cut off well before it (at half
	// of it, or the drain timeout, whichever is shorter). A claimed batch
	// (up to the chat's weight) keeps its leases extended every third of
	// it while it runs; an update left with less than half a lease is
	// released with the rest of its batch instead of started.
	HandlerLease time.Duration `env:"HANDLER_LEASE" envDefault:"30s"`
	// WebhookURL, when set, switches intake from getUpdates to a webhook
	// (TELEGRAM_WEBHOOK_URL): setWebhook with this URL, and its path served
	// on HTTP_ADDR by every poller/all process. http:// is accepted (a local
	// Bot API server takes it; Telegram itself refuses it, and says so).
	WebhookURL string `env:"TELEGRAM_WEBHOOK_URL"`
	// WebhookSecret is setWebhook's secret_token, required with WebhookURL
	// (TELEGRAM_WEBHOOK_SECRET; 1-256 characters of A-Z a-z 0-9 _ -):
	// a request without it in X-Telegram-Bot-Api-Secret-Token is refused.
	WebhookSecret string `env:"TELEGRAM_WEBHOOK_SECRET"`
}

// Validate checks BOT_ROLE, HANDLERS (0..1024), HANDLER_LEASE (1 s..1 h)
// and the webhook's URL and secret. Errors: *Error.
func (in Intake) Validate() error {
	switch in.Role {
	case RoleAll, RolePoller, RoleHandler, RoleWorker:
	default:
		return &Error{Var: "BOT_ROLE", Want: fmt.Sprintf("one of all, poller, handler, worker; got %q", in.Role)}
	}
	if err := checkWholeNumbers(in.wholeNumbers()); err != nil {
		return err
	}
	if in.HandlerLease < time.Second || in.HandlerLease > time.Hour {
		return &Error{Var: "HANDLER_LEASE", Want: fmt.Sprintf("a duration from 1s to 1h, e.g. 30s; got %v", in.HandlerLease)}
	}
	return in.validWebhook()
}

// wholeNumbers are the rules of the section's whole-number variables.
func (in Intake) wholeNumbers() []wholeNumber {
	return []wholeNumber{{"HANDLERS", in.Handlers, 0, 1024, fmt.Sprintf("updates handled at once per process, 1..1024 (0: %d on this machine)", DefaultHandlers())}}
}

// Polls reports whether the role fetches (getUpdates) or receives (a
// webhook) updates and records them.
func (in Intake) Polls() bool { return in.Role == RoleAll || in.Role == RolePoller }

// Handles reports whether the role claims recorded updates and runs the
// handlers.
func (in Intake) Handles() bool { return in.Role == RoleAll || in.Role == RoleHandler }

// Sends reports whether the role runs notification workers.
func (in Intake) Sends() bool { return in.Role == RoleAll || in.Role == RoleWorker }

// Webhook reports whether updates come by webhook (TELEGRAM_WEBHOOK_URL
// set) rather than getUpdates.
func (in Intake) Webhook() bool { return in.WebhookURL != "" }

// HandlerCount is HANDLERS, or DefaultHandlers() when it is 0.
func (in Intake) HandlerCount() int {
	if in.Handlers > 0 {
		return in.Handlers
	}
	return DefaultHandlers()
}

// DefaultHandlers is HANDLERS' default: 24 updates at once per CPU
// (GOMAXPROCS), at most 64. Handling a command is mostly waiting for
// Valkey (eight round trips for a /help: the claim, which also acks the
// handler's previous update, the handled check, three of chat bookkeeping,
// the reply's alias lookup and enqueue, finish), so one CPU keeps many
// handlers busy; an idle handler costs one goroutine blocked on a channel.
// The more handlers wait at once, the more of their commands share a write
// and a read on the connection, on both sides: on the 2-CPU benchmark
// machine (internal/app, BenchmarkIntake) 48 handlers spent about 12% less
// CPU per update than 16 (Valkey and the handler process together, median
// of 9 windows each, alternated), and there the CPUs are what binds.
func DefaultHandlers() int { return min(24*runtime.GOMAXPROCS(0), 64) }

var webhookSecretRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// validWebhook checks TELEGRAM_WEBHOOK_URL (absolute http or https URL
// with a host) and TELEGRAM_WEBHOOK_SECRET (required with it; Telegram's
// secret_token alphabet and length).
func (in Intake) validWebhook() error {
	if in.WebhookURL == "" {
		return nil
	}
	u, err := url.Parse(in.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return &Error{Var: "TELEGRAM_WEBHOOK_URL", Want: "an absolute https:// URL (http:// only for a local Bot API server), e.g. https://bot.example.com/telegram/webhook"}
	}
	if p := u.EscapedPath(); !webhookPathRE.MatchString(p) || strings.Contains(p, "//") ||
		slices.Contains(strings.Split(p, "/"), ".") || slices.Contains(strings.Split(p, "/"), "..") {
		return &Error{Var: "TELEGRAM_WEBHOOK_URL", Want: fmt.Sprintf("a path of only A-Z a-z 0-9 - . _ ~ and / "+
			"(RFC 3986 unreserved characters; no %%-escapes, braces, empty, . or .. segments), "+
			"e.g. https://bot.example.com/telegram/webhook; got the path %q", u.Path)}
	}
	if in.WebhookSecret == "" {
		return &Error{Var: "TELEGRAM_WEBHOOK_SECRET", Want: "required with TELEGRAM_WEBHOOK_URL: 1-256 characters of A-Z a-z 0-9 _ - (Telegram sends it back in X-Telegram-Bot-Api-Secret-Token)"}
	}
	if !webhookSecretRE.MatchString(in.WebhookSecret) {
		return &Error{Var: "TELEGRAM_WEBHOOK_SECRET", Want: "1-256 characters of A-Z a-z 0-9 _ - (Telegram's secret_token rule)"}
	}
	return nil
}

// webhookPathRE is a webhook path validWebhook accepts: RFC 3986
// unreserved characters (section 2.3) and '/', so it is served verbatim
// by net/http's ServeMux (a pattern with braces or escapes is a wildcard
// or a different path there, or panics).
var webhookPathRE = regexp.MustCompile(`^[A-Za-z0-9._~/-]*$`)

// WebhookPath is the path of WebhookURL served on HTTP_ADDR ("/" when the
// URL has none).
func (in Intake) WebhookPath() string {
	u, err := url.Parse(in.WebhookURL)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}
