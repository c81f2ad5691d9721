// Package config reads codemojex's configuration from the environment, with
// a .env file loaded first (github.com/joho/godotenv) without overriding
// variables that are already set, parsed with github.com/caarlos0/env.
// Every value is validated; an error names the variable and what it expects
// and never repeats the bot token.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/caarlos0/env/v11"
	"github.com/joho/godotenv"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/redact"
)

// Roles of a process.
const (
	RoleAll     = "all"     // poller (or webhook receiver), handlers and workers
	RolePoller  = "poller"  // fetches (getUpdates) or receives (webhook) updates and records them; handles none
	RoleHandler = "handler" // claims recorded updates, runs the handlers, enqueues replies
	RoleWorker  = "worker"  // notification workers only
)

// Config is the whole configuration of a codemojex process.
type Config struct {
	// Token is the bot token from @BotFather (TELEGRAM_BOT_TOKEN).
	Token string `env:"TELEGRAM_BOT_TOKEN"`
	// APIURL is the Bot API server (TELEGRAM_API_URL), without the
	// /bot<token> path the requests add.
	APIURL string `env:"TELEGRAM_API_URL" envDefault:"https://api.telegram.org"`
	// ValkeyURL is the Valkey/Redis URL (VALKEY_URL), e.g. redis://127.0.0.1:6379/0.
	ValkeyURL string `env:"VALKEY_URL" envDefault:"redis://127.0.0.1:6379/0"`
	// AdminIDs are the Telegram user ids allowed admin commands (ADMIN_IDS,
	// comma-separated); empty means nobody.
	AdminIDs []int64 `env:"ADMIN_IDS" envSeparator:","`
	// GlobalRate is the bot's overall limit in messages/s (TELEGRAM_GLOBAL_RATE;
	// Telegram Bot FAQ: about 30 messages/s).
	GlobalRate int `env:"TELEGRAM_GLOBAL_RATE" envDefault:"30"`
	// ReplyRate is the budget of replies to users' updates in messages/s,
	// apart from GlobalRate, which then covers bulk messages only
	// (broadcast copies, other notifications) (TELEGRAM_REPLY_RATE,
	// 0..10000; 0: replies share GlobalRate). Telegram publishes no figure
	// for replies: the Bot FAQ's "about 30 messages per second" is for bulk
	// notifications, and grammY's "Scaling Up IV: Flood Limits" states that
	// replies to users' messages are not held to it. The default 100 is a
	// guess well above a popular bot's command rate; if Telegram answers
	// 429s from many chats at once (codemojex_worker_global_pauses_total),
	// lower it.
	ReplyRate int `env:"TELEGRAM_REPLY_RATE" envDefault:"100"`
	// PaidBroadcastRate is the budget of paid broadcast copies in
	// messages/s (TELEGRAM_PAID_BROADCAST_RATE, 0..1000; 0, the default:
	// paid broadcasts off). With it set, the broadcast preview offers a
	// paid send: copies sent with allow_paid_broadcast, which Telegram
	// allows "up to 1000 messages per second, ignoring broadcasting limits
	// for a fee of 0.1 Telegram Stars per message" (Bot API, sendMessage),
	// withdrawn from the bot's balance. It needs TELEGRAM_REPLY_RATE > 0
	// (two budgets): with one shared budget, paid copies would be held to
	// TELEGRAM_GLOBAL_RATE too.
	PaidBroadcastRate int `env:"TELEGRAM_PAID_BROADCAST_RATE" envDefault:"0"`
	// ChatRate is the limit per private chat in messages/s (TELEGRAM_CHAT_RATE;
	// Telegram Bot FAQ: about 1 message/s).
	ChatRate int `env:"TELEGRAM_CHAT_RATE" envDefault:"1"`
	// GroupRate is the limit per group in messages/min (TELEGRAM_GROUP_RATE;
	// Telegram Bot FAQ: 20 messages/min).
	GroupRate int `env:"TELEGRAM_GROUP_RATE" envDefault:"20"`
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
	// Workers is the most sends one process has in flight at once
	// (WORKERS, 1..4096, worker.MaxSenders): the upper bound of its
	// concurrency, which otherwise follows the budget (worker.Config.Senders:
	// the rates × the measured Bot API round trip × 1.25 + 2, at least 4).
	// The default 1536 (worker.DefaultSenders) covers 1,000 messages/s at a
	// 1.2 s round trip; only the senders in use cost anything: a goroutine
	// and, over HTTP/1.1, a kept-alive connection each (about 40 KiB with
	// TLS, one file descriptor; docs/delivery.md has the measured cost).
	Workers int `env:"WORKERS" envDefault:"1536"`
	// WorkerLease is how long a worker holds a claimed message before
	// another worker may take it over (WORKER_LEASE, a Go duration): after a
	// worker process dies, its in-flight messages (and, queues being
	// ordered, their chats) wait this long.
	WorkerLease time.Duration `env:"WORKER_LEASE" envDefault:"30s"`
	// HTTPAddr serves /healthz and /metrics (HTTP_ADDR).
	HTTPAddr string `env:"HTTP_ADDR" envDefault:":8080"`
	// ConsoleAddr serves the operator console (CONSOLE_ADDR, host:port;
	// "" = off, the default). Bind it to loopback (127.0.0.1:8081) and
	// reach it through an SSH tunnel or a TLS-terminating proxy.
	ConsoleAddr string `env:"CONSOLE_ADDR"`
	// ConsoleToken is the console's sign-in token (CONSOLE_TOKEN), at
	// least 32 characters; required with CONSOLE_ADDR.
	ConsoleToken string `env:"CONSOLE_TOKEN"`
	// LogLevel is debug, info, warn or error (LOG_LEVEL).
	LogLevel string `env:"LOG_LEVEL" envDefault:"info"`
	// ReplyLaneDepth is the most replies waiting per chat on the reply
	// queue (REPLY_LANE_DEPTH; 0: unbounded): a reply beyond it is dropped
	// and counted (notifier.Limits.ReplyLaneDepth).
	ReplyLaneDepth int `env:"REPLY_LANE_DEPTH" envDefault:"100"`
	// FloodWindow is the intake limits' window (FLOOD_WINDOW, a Go
	// duration; 0 turns every intake limit off). See docs/floods.md.
	FloodWindow time.Duration `env:"FLOOD_WINDOW" envDefault:"10s"`
	// FloodUserMessages is the most messages one user may send per window
	// (FLOOD_USER_MESSAGES; 0: no limit); the excess is dropped unhandled.
	FloodUserMessages int `env:"FLOOD_USER_MESSAGES" envDefault:"10"`
	// FloodUserTaps is the most button taps one user may send per window
	// (FLOOD_USER_TAPS; 0: no limit); a dropped tap is answered with a toast.
	FloodUserTaps int `env:"FLOOD_USER_TAPS" envDefault:"30"`
	// FloodChatMessages and FloodChatTaps are the most messages and taps
	// one group may receive per window from all its members together
	// (FLOOD_CHAT_MESSAGES, FLOOD_CHAT_TAPS; 0: no limit). Admins
	// (ADMIN_IDS) are never limited nor counted.
	FloodChatMessages int `env:"FLOOD_CHAT_MESSAGES" envDefault:"30"`
	FloodChatTaps     int `env:"FLOOD_CHAT_TAPS" envDefault:"200"`
}

// Error is a configuration error about one variable.
type Error struct {
	Var  string // the environment variable
	Want string // what it expects
}

func (e *Error) Error() string { return e.Var + ": " + e.Want }

var tokenRE = regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$`)

// Load reads the .env file at dotenv (if it exists; "" skips it) without
// overriding set variables, then the environment, and validates everything.
// Errors: *Error (errors.As) naming the first bad variable, or
// *DotenvError when the .env file cannot be read or parsed. No error text
// carries the bot token.
func Load(dotenv string) (Config, error) {
	if dotenv != "" {
		if _, err := os.Stat(dotenv); err == nil {
			if err := loadDotenv(dotenv); err != nil {
				return Config{}, err
			}
		}
	}
	return FromEnv(os.Environ())
}

// utf8BOM is the byte order mark some Windows editors write before line 1.
var utf8BOM = []byte("\xEF\xBB\xBF")

// loadDotenv sets the variables of the .env file at path that are not set
// yet, like godotenv.Load, after dropping a leading UTF-8 byte order mark
// and checking that every assignment line has a variable name followed by
// '=' (godotenv would silently read "NAME value" as a variable with a
// space in its name, or run on into the next line). Errors: *DotenvError.
func loadDotenv(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return dotenvError(path, nil, err)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if line := lineWithoutAssignment(data); line > 0 {
		return &DotenvError{File: path, Line: line,
			Problem: "not a NAME=value line: no '=' after the variable name (the line is not shown: it may hold the token)"}
	}
	vars, err := godotenv.UnmarshalBytes(data)
	if err != nil {
		return dotenvError(path, data, err)
	}
	for k, v := range vars {
		if _, set := os.LookupEnv(k); !set {
			if err := os.Setenv(k, v); err != nil {
				return &DotenvError{File: path, Problem: "cannot set a variable: " + err.Error()}
			}
		}
	}
	return nil
}

// lineWithoutAssignment returns the first line (1-based) of data (LF line
// ends) that starts a statement without '=' (or godotenv's "NAME: value")
// after one word, the variable name, or 0. Blank lines, comments and the lines of
// a multi-line quoted value are skipped; an unterminated quote ends the
// scan (godotenv reports it).
func lineWithoutAssignment(data []byte) int {
	line := 1
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			end = len(data)
		}
		stmt := bytes.TrimSpace(data[:end])
		if len(stmt) == 0 || stmt[0] == '#' {
			line, data = nextLine(data, end, line)
			continue
		}
		stmt = bytes.TrimPrefix(stmt, []byte("export "))
		sep := bytes.IndexAny(stmt, "=:")
		if sep < 0 || spacedName(bytes.TrimSpace(stmt[:sep])) {
			return line // other characters in a name: godotenv reports them
		}
		// A quoted value may run over several lines: skip to its closing quote.
		rest := data[cap(data)-cap(stmt)+sep+1:] // stmt is a subslice of data
		val := bytes.TrimLeft(rest, " \t")
		if len(val) > 0 && (val[0] == '"' || val[0] == '\'') {
			closing := closingQuote(val)
			if closing < 0 {
				return 0
			}
			consumed := len(data) - len(val) + closing
			line += bytes.Count(data[:consumed], []byte("\n"))
			data = data[consumed:]
			end = bytes.IndexByte(data, '\n')
			if end < 0 {
				end = len(data)
			}
		}
		line, data = nextLine(data, end, line)
	}
	return 0
}

// spacedName reports whether name is words of variable-name characters
// (letters, digits, '_', '.') with spaces between them: "NAME value"
// before a ':' in the value (godotenv's "NAME: value" separator).
func spacedName(name []byte) bool {
	if !bytes.ContainsFunc(name, unicode.IsSpace) {
		return false
	}
	return !bytes.ContainsFunc(name, func(r rune) bool {
		return !unicode.IsSpace(r) && r != '_' && r != '.' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func nextLine(data []byte, end, line int) (int, []byte) {
	if end >= len(data) {
		return line, nil
	}
	return line + 1, data[end+1:]
}

// closingQuote returns the index in val (which starts with a quote) of
// the quote that closes it (a '"' not escaped by '\\'), or -1.
func closingQuote(val []byte) int {
	q := val[0]
	for i := 1; i < len(val); i++ {
		if val[i] == '\\' && q == '"' {
			i++
			continue
		}
		if val[i] == q {
			return i
		}
	}
	return -1
}

// DotenvError is a .env file that cannot be read or is malformed. It never
// quotes the file's content: the line at fault may hold the token.
type DotenvError struct {
	File    string // the .env file's path
	Line    int    // the line at fault (1-based), 0 when unknown
	Problem string // what is wrong, without any value
}

func (e *DotenvError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += fmt.Sprintf(": line %d", e.Line)
	}
	return where + ": " + e.Problem
}

// dotenvError turns godotenv's error about data, the .env file's content
// (BOM dropped, LF line ends), into a *DotenvError. godotenv's own
// message quotes the raw text around the mistake (the token, when it is
// the bad line), so it is never passed on: only its kind and, found from
// the file itself, the line number.
func dotenvError(file string, data []byte, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &DotenvError{File: file, Problem: "cannot read the file: " + pe.Err.Error()}
	}
	const notShown = " (the line is not shown: it may hold the token)"
	e := &DotenvError{File: file, Problem: "malformed; check its quotes and variable names" + notShown}
	lineOf := func(off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }
	msg := err.Error()
	if snippet, ok := strings.CutPrefix(msg, "unterminated quoted value "); ok && snippet != "" {
		// godotenv found no closing quote after the opening one up to the
		// end of the file, so the opening quote is the file's last quote
		// of its kind that is not escaped.
		e.Problem = "a quoted value has no closing " + snippet[:1] + notShown
		q := snippet[0]
		for i := len(data) - 1; i >= 0; i-- {
			if data[i] == q && (i == 0 || data[i-1] != '\\') {
				if bytes.HasPrefix(data[i:], []byte(snippet)) {
					e.Line = lineOf(i)
				}
				break
			}
		}
		return e
	}
	if _, near, ok := strings.Cut(msg, " in variable name near "); ok && strings.HasPrefix(msg, "unexpected character ") {
		// near is the rest of the file from the bad variable name, quoted.
		e.Problem = "a variable name has a character other than letters, digits, '_' and '.'" + notShown
		if rest, qerr := strconv.Unquote(near); qerr == nil && rest != "" && bytes.HasSuffix(data, []byte(rest)) {
			e.Line = lineOf(len(data) - len(rest))
		}
	}
	return e
}

// FromEnv parses and validates the given environment ("KEY=value" strings).
func FromEnv(environ []string) (Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	if ids, ok := vars["ADMIN_IDS"]; ok {
		// "12, 13" is how people write a list: spaces around the commas are not part of an id.
		parts := strings.Split(ids, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		vars["ADMIN_IDS"] = strings.Join(parts, ",")
	}
	var c Config
	if err := env.ParseWithOptions(&c, env.Options{Environment: vars}); err != nil {
		return Config{}, redactError(redact.New(vars["TELEGRAM_BOT_TOKEN"]), translate(err))
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// redactError removes the token from err's text: a value quoted in an
// error (a URL, a parse error) may hold it. An *Error stays an *Error, with
// its Want redacted, so errors.As extracts nothing unsafe from it.
func redactError(r *redact.Redactor, err error) error {
	if err == nil {
		return nil
	}
	if ce, ok := err.(*Error); ok {
		return &Error{Var: ce.Var, Want: r.String(ce.Want)}
	}
	return r.Error(err)
}

// translate turns the env library's errors into *Error, naming the variable
// (from the field's env tag) and what it expects (from the field's type).
func translate(err error) error {
	var agg env.AggregateError
	if errors.As(err, &agg) && len(agg.Errors) > 0 {
		err = agg.Errors[0]
	}
	var pe env.ParseError
	if errors.As(err, &pe) {
		return &Error{Var: varOf(pe.Name), Want: expects(pe.Type) + "; the value set is not: " + pe.Err.Error()}
	}
	return fmt.Errorf("config: %w", err)
}

// varOf returns the environment variable of Config's field name (its env
// tag), or the name itself when there is no such field.
func varOf(field string) string {
	if f, ok := reflect.TypeFor[Config]().FieldByName(field); ok {
		if v, _, _ := strings.Cut(f.Tag.Get("env"), ","); v != "" {
			return v
		}
	}
	return field
}

// expects describes the values a field of type t takes.
func expects(t reflect.Type) string {
	isInt := func(t reflect.Type) bool {
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return true
		}
		return false
	}
	switch {
	case t == nil:
		return "a valid value"
	case t == reflect.TypeFor[time.Duration]():
		return "a Go duration such as 30s (a number with a unit: ms, s, m, h)"
	case isInt(t):
		return "a whole number"
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && isInt(t.Elem()):
		return "whole numbers, comma-separated (e.g. 11,22)"
	case t.Kind() == reflect.Bool:
		return "true or false"
	}
	return "a valid " + t.String()
}

// Validate checks every field; it returns the first *Error, with the token
// redacted from its text.
func (c Config) Validate() error {
	return redactError(redact.New(c.Token), c.validate())
}

func (c Config) validate() error {
	if c.Token == "" {
		return &Error{Var: "TELEGRAM_BOT_TOKEN", Want: "the bot token from @BotFather (e.g. 123456789:AA...); it is empty"}
	}
	if !tokenRE.MatchString(c.Token) {
		return &Error{Var: "TELEGRAM_BOT_TOKEN", Want: "a token shaped <digits>:<20-100 letters, digits, _ or ->; the value set is not (not shown)"}
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Error{Var: "TELEGRAM_API_URL", Want: fmt.Sprintf("an http(s) URL such as https://api.telegram.org, got %q", c.APIURL)}
	}
	if strings.Contains(u.Path, "/bot") {
		// A pasted request URL (https://api.telegram.org/bot<token>):
		// every request would go to /bot<token>/bot<token>/<method>. The
		// value is not shown: it likely holds the token.
		return &Error{Var: "TELEGRAM_API_URL", Want: "the Bot API server only, such as https://api.telegram.org: " +
			"the bot adds /bot<token>/<method> itself; the URL set has a /bot... path (not shown: it may hold the token)"}
	}
	if _, err := valkey.ParseURL(c.ValkeyURL); err != nil {
		return &Error{Var: "VALKEY_URL", Want: fmt.Sprintf("a redis:// or rediss:// URL such as redis://127.0.0.1:6379/0 (%v)", err)}
	}
	for _, id := range c.AdminIDs {
		if id <= 0 {
			return &Error{Var: "ADMIN_IDS", Want: fmt.Sprintf("positive Telegram user ids, comma-separated; got %d", id)}
		}
	}
	if c.GlobalRate < 1 || c.GlobalRate > 10000 {
		return &Error{Var: "TELEGRAM_GLOBAL_RATE", Want: fmt.Sprintf("messages/s for the whole bot, 1..10000 (Telegram allows about 30); got %d", c.GlobalRate)}
	}
	if c.ReplyRate < 0 || c.ReplyRate > 10000 {
		return &Error{Var: "TELEGRAM_REPLY_RATE", Want: fmt.Sprintf("messages/s of replies, apart from the bulk rate, 0..10000 (0: replies share TELEGRAM_GLOBAL_RATE); got %d", c.ReplyRate)}
	}
	if c.PaidBroadcastRate < 0 || c.PaidBroadcastRate > 1000 {
		return &Error{Var: "TELEGRAM_PAID_BROADCAST_RATE", Want: fmt.Sprintf("messages/s of paid broadcasts, 0..1000 (0: off; Telegram allows up to 1000 for 0.1 Star each); got %d", c.PaidBroadcastRate)}
	}
	if c.PaidBroadcastRate > 0 && c.ReplyRate == 0 {
		return &Error{Var: "TELEGRAM_PAID_BROADCAST_RATE", Want: fmt.Sprintf("must be 0 while TELEGRAM_REPLY_RATE=0 (paid broadcasts need two budgets: set TELEGRAM_REPLY_RATE > 0, or TELEGRAM_PAID_BROADCAST_RATE=0); got %d", c.PaidBroadcastRate)}
	}
	if c.ChatRate < 1 || c.ChatRate > 100 {
		return &Error{Var: "TELEGRAM_CHAT_RATE", Want: fmt.Sprintf("messages/s per private chat, 1..100 (Telegram allows about 1); got %d", c.ChatRate)}
	}
	if c.GroupRate < 1 || c.GroupRate > 6000 {
		return &Error{Var: "TELEGRAM_GROUP_RATE", Want: fmt.Sprintf("messages/min per group, 1..6000 (Telegram allows 20); got %d", c.GroupRate)}
	}
	switch c.Role {
	case RoleAll, RolePoller, RoleHandler, RoleWorker:
	default:
		return &Error{Var: "BOT_ROLE", Want: fmt.Sprintf("one of all, poller, handler, worker; got %q", c.Role)}
	}
	if c.Handlers < 0 || c.Handlers > 1024 {
		return &Error{Var: "HANDLERS", Want: fmt.Sprintf("updates handled at once per process, 1..1024 (0: %d on this machine); got %d", DefaultHandlers(), c.Handlers)}
	}
	if c.HandlerLease < time.Second || c.HandlerLease > time.Hour {
		return &Error{Var: "HANDLER_LEASE", Want: fmt.Sprintf("a duration from 1s to 1h, e.g. 30s; got %v", c.HandlerLease)}
	}
	if err := c.validWebhook(); err != nil {
		return err
	}
	if c.Workers < 1 || c.Workers > MaxWorkers {
		return &Error{Var: "WORKERS", Want: fmt.Sprintf("most sends in flight per process, 1..%d; got %d", MaxWorkers, c.Workers)}
	}
	if c.WorkerLease < time.Second || c.WorkerLease > time.Hour {
		return &Error{Var: "WORKER_LEASE", Want: fmt.Sprintf("a duration from 1s to 1h, e.g. 30s; got %v", c.WorkerLease)}
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		return &Error{Var: "HTTP_ADDR", Want: fmt.Sprintf("host:port or :port, e.g. :8080; got %q", c.HTTPAddr)}
	}
	if c.ReplyLaneDepth < 0 || c.ReplyLaneDepth > 1_000_000 {
		return &Error{Var: "REPLY_LANE_DEPTH", Want: fmt.Sprintf("replies waiting per chat, 0 (unbounded) to 1000000; got %d", c.ReplyLaneDepth)}
	}
	if c.FloodWindow < 0 || c.FloodWindow > time.Hour {
		return &Error{Var: "FLOOD_WINDOW", Want: fmt.Sprintf("a duration from 0 (limits off) to 1h, e.g. 10s; got %v", c.FloodWindow)}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"FLOOD_USER_MESSAGES", c.FloodUserMessages}, {"FLOOD_USER_TAPS", c.FloodUserTaps},
		{"FLOOD_CHAT_MESSAGES", c.FloodChatMessages}, {"FLOOD_CHAT_TAPS", c.FloodChatTaps}} {
		if f.v < 0 || f.v > 1_000_000 {
			return &Error{Var: f.name, Want: fmt.Sprintf("updates per FLOOD_WINDOW, 0 (no limit) to 1000000; got %d", f.v)}
		}
	}
	if err := c.validConsole(); err != nil {
		return err
	}
	if _, err := c.SlogLevel(); err != nil {
		return &Error{Var: "LOG_LEVEL", Want: fmt.Sprintf("one of debug, info, warn, error; got %q", c.LogLevel)}
	}
	return nil
}

// MinConsoleToken is the shortest CONSOLE_TOKEN accepted (characters).
const MinConsoleToken = 32

// MaxWorkers is the highest WORKERS: worker.MaxSenders, the cap the worker
// applies (written here too so config does not import the worker; a test in
// internal/app holds the two equal). At the cap a process holds about 63 KiB
// and, over HTTP/1.1, one socket per sender in use (docs/delivery.md).
const MaxWorkers = 4096

// validConsole checks CONSOLE_ADDR (host:port) and, with it, CONSOLE_TOKEN:
// at least MinConsoleToken characters, not the bot token, not one
// character repeated. The token is never quoted.
func (c Config) validConsole() error {
	if c.ConsoleAddr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(c.ConsoleAddr); err != nil {
		return &Error{Var: "CONSOLE_ADDR", Want: fmt.Sprintf("host:port, e.g. 127.0.0.1:8081 (empty: no console); got %q", c.ConsoleAddr)}
	}
	switch {
	case c.ConsoleToken == "":
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("required with CONSOLE_ADDR: at least %d random characters (e.g. openssl rand -base64 32); it is empty, so the console is not started", MinConsoleToken)}
	case len(c.ConsoleToken) < MinConsoleToken:
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("at least %d random characters (e.g. openssl rand -base64 32); the value set has %d (not shown)", MinConsoleToken, len(c.ConsoleToken))}
	case c.ConsoleToken == c.Token:
		return &Error{Var: "CONSOLE_TOKEN", Want: "a token of its own, not the bot token"}
	case strings.Count(c.ConsoleToken, c.ConsoleToken[:1]) == len(c.ConsoleToken):
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("at least %d random characters, not one character repeated", MinConsoleToken)}
	}
	return nil
}

// SlogLevel returns LogLevel as a slog.Level.
func (c Config) SlogLevel() (slog.Level, error) {
	var l slog.Level
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
		err := l.UnmarshalText([]byte(c.LogLevel))
		return l, err
	}
	return l, fmt.Errorf("unknown level %q", c.LogLevel)
}

// IsAdmin reports whether user id is in ADMIN_IDS.
func (c Config) IsAdmin(id int64) bool {
	for _, a := range c.AdminIDs {
		if a == id {
			return true
		}
	}
	return false
}

// Polls reports whether the role fetches (getUpdates) or receives (a
// webhook) updates and records them.
func (c Config) Polls() bool { return c.Role == RoleAll || c.Role == RolePoller }

// Handles reports whether the role claims recorded updates and runs the
// handlers.
func (c Config) Handles() bool { return c.Role == RoleAll || c.Role == RoleHandler }

// Webhook reports whether updates come by webhook (TELEGRAM_WEBHOOK_URL
// set) rather than getUpdates.
func (c Config) Webhook() bool { return c.WebhookURL != "" }

// HandlerCount is HANDLERS, or DefaultHandlers() when it is 0.
func (c Config) HandlerCount() int {
	if c.Handlers > 0 {
		return c.Handlers
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
func (c Config) validWebhook() error {
	if c.WebhookURL == "" {
		return nil
	}
	u, err := url.Parse(c.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return &Error{Var: "TELEGRAM_WEBHOOK_URL", Want: "an absolute https:// URL (http:// only for a local Bot API server), e.g. https://bot.example.com/telegram/webhook"}
	}
	if p := u.EscapedPath(); !webhookPathRE.MatchString(p) || strings.Contains(p, "//") ||
		slices.Contains(strings.Split(p, "/"), ".") || slices.Contains(strings.Split(p, "/"), "..") {
		return &Error{Var: "TELEGRAM_WEBHOOK_URL", Want: fmt.Sprintf("a path of only A-Z a-z 0-9 - . _ ~ and / "+
			"(RFC 3986 unreserved characters; no %%-escapes, braces, empty, . or .. segments), "+
			"e.g. https://bot.example.com/telegram/webhook; got the path %q", u.Path)}
	}
	if c.WebhookSecret == "" {
		return &Error{Var: "TELEGRAM_WEBHOOK_SECRET", Want: "required with TELEGRAM_WEBHOOK_URL: 1-256 characters of A-Z a-z 0-9 _ - (Telegram sends it back in X-Telegram-Bot-Api-Secret-Token)"}
	}
	if !webhookSecretRE.MatchString(c.WebhookSecret) {
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
func (c Config) WebhookPath() string {
	u, err := url.Parse(c.WebhookURL)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

// Sends reports whether the role runs notification workers.
func (c Config) Sends() bool { return c.Role == RoleAll || c.Role == RoleWorker }
