package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
)

// Telegram is the bot's identity and its Bot API server.
type Telegram struct {
	// Token is the bot token from @BotFather (TELEGRAM_BOT_TOKEN).
	Token string `env:"TELEGRAM_BOT_TOKEN"`
	// APIURL is the Bot API server (TELEGRAM_API_URL), without the
	// /bot<token> path the requests add.
	APIURL string `env:"TELEGRAM_API_URL" envDefault:"https://api.telegram.org"`
	// AdminIDs are the Telegram user ids allowed admin commands (ADMIN_IDS,
	// comma-separated); empty means nobody.
	AdminIDs []int64 `env:"ADMIN_IDS" envSeparator:","`
}

var tokenRE = regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$`)

// Validate checks the token's shape (never quoting it), the API URL (an
// http(s) server without a /bot path) and the admin ids (positive).
// Errors: *Error.
func (t Telegram) Validate() error {
	if t.Token == "" {
		return &Error{Var: "TELEGRAM_BOT_TOKEN", Want: "the bot token from @BotFather (e.g. 123456789:AA...); it is empty"}
	}
	if !tokenRE.MatchString(t.Token) {
		return &Error{Var: "TELEGRAM_BOT_TOKEN", Want: "a token shaped <digits>:<20-100 letters, digits, _ or ->; the value set is not (not shown)"}
	}
	u, err := url.Parse(t.APIURL)
	if err != nil {
		return &Error{Var: "TELEGRAM_API_URL", Want: "an http(s) URL such as https://api.telegram.org, got " + RedactURL(t.APIURL)}
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Error{Var: "TELEGRAM_API_URL", Want: "an http(s) URL such as https://api.telegram.org, got " + strconv.Quote(RedactURL(t.APIURL))}
	}
	if strings.Contains(u.Path, "/bot") {
		// A pasted request URL (https://api.telegram.org/bot<token>):
		// every request would go to /bot<token>/bot<token>/<method>. The
		// value is not shown: it likely holds the token.
		return &Error{Var: "TELEGRAM_API_URL", Want: "the Bot API server only, such as https://api.telegram.org: " +
			"the bot adds /bot<token>/<method> itself; the URL set has a /bot... path (not shown: it may hold the token)"}
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(t.APIURL, "#") {
		// The bot appends /bot<token>/<method> to it: after a query or a
		// fragment the token would ride in the query string (new-user
		// trial: "http://host?x=1/bot<token>/getMe").
		return &Error{Var: "TELEGRAM_API_URL", Want: "the Bot API server only, such as https://api.telegram.org: " +
			"no ?query or #fragment (the bot adds /bot<token>/<method> after it)"}
	}
	for _, id := range t.AdminIDs {
		if id <= 0 {
			return &Error{Var: "ADMIN_IDS", Want: fmt.Sprintf("%s; got %d", adminIDsWant, id)}
		}
	}
	return nil
}

// adminIDsWant is what ADMIN_IDS takes, as its errors say it.
const adminIDsWant = "Telegram user ids, positive whole numbers, comma-separated (e.g. 11,22; a comma at the end is fine)"

// IsAdmin reports whether user id is in ADMIN_IDS.
func (t Telegram) IsAdmin(id int64) bool { return slices.Contains(t.AdminIDs, id) }

// Valkey is where the queues and the game state live, and the namespace
// of this bot's keys there.
type Valkey struct {
	// ValkeyURL is the Valkey/Redis URL (VALKEY_URL), e.g. redis://127.0.0.1:6379/0.
	ValkeyURL string `env:"VALKEY_URL" envDefault:"redis://127.0.0.1:6379/0"`
	// KeyTag is the hash tag of every key the bot reads and writes
	// (VALKEY_KEY_TAG; every key is "{KeyTag}:..."; docs/keys.md), so
	// several bots share one Valkey, each under its own tag, and on a
	// Valkey Cluster each bot's keys sit in the one slot CLUSTER KEYSLOT
	// gives its tag (docs/operations.md). The default is lanes.DefaultTag
	// ("cm"), the tag every key had before it was configurable. Every
	// process of one bot must use the same tag; changing it moves no key.
	KeyTag string `env:"VALKEY_KEY_TAG"`
	// WaitReplicas is how many replicas must acknowledge an update's
	// record before it is confirmed to Telegram (VALKEY_WAIT_REPLICAS,
	// 0-16; 0, the default: no wait): Valkey's replication is
	// asynchronous, so an update recorded on a primary that dies before
	// its replica received it is lost to a failover, and Telegram does not
	// send a confirmed update again. Set it to 1 when Valkey has a
	// replica (Sentinel, a cluster). Each record then waits for the
	// replica (a round trip to it; intake.ReplicaWait).
	WaitReplicas int `env:"VALKEY_WAIT_REPLICAS" envDefault:"0"`
	// WaitTimeout is the most a record waits for them (VALKEY_WAIT_TIMEOUT,
	// 1ms-1m, default 1s; checked only with WaitReplicas > 0); past it the update is confirmed anyway (the bot
	// keeps taking updates while a replica is down), counted in
	// codemojex_intake_replica_wait_short_total and logged.
	WaitTimeout time.Duration `env:"VALKEY_WAIT_TIMEOUT" envDefault:"1s"`
}

// defaultValkey is Valkey's default owned by the lanes package: its tag.
func defaultValkey() Valkey { return Valkey{KeyTag: lanes.DefaultTag, WaitTimeout: time.Second} }

// valkeyURLWant is what VALKEY_URL's errors ask for.
const valkeyURLWant = "a redis:// (rediss:// for TLS, unix:// for a socket) URL such as redis://127.0.0.1:6379/0"

// valkeyURLParams are the query parameters valkey-go's ParseURL reads
// (v1.0.79, url.go), space-separated; it ignores any other silently, so
// Validate refuses one (a typo such as master-set would otherwise connect
// to the Sentinel itself as if it were the primary).
const valkeyURLParams = "addr client_cache client_name db dial_timeout master_set max_retries protocol skip_verify write_timeout"

// Validate checks that VALKEY_URL is a URL valkey-go dials (its scheme,
// port 1-65535, and only the query parameters valkey-go reads:
// valkeyURLParams) and that VALKEY_KEY_TAG is a tag lanes takes
// (lanes.ValidTag: 1-64 characters of A-Z a-z 0-9 . _ -, so no { or }).
// Errors: *Error, never quoting the URL's password.
func (v Valkey) Validate() error {
	if _, err := valkey.ParseURL(v.ValkeyURL); err != nil {
		return &Error{Var: "VALKEY_URL", Want: fmt.Sprintf("%s (%v)", valkeyURLWant, urlReason(err))}
	}
	if u, err := url.Parse(v.ValkeyURL); err == nil {
		if u.Port() != "" {
			if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
				return &Error{Var: "VALKEY_URL", Want: valkeyURLWant + " (its port 1-65535, got " + strconv.Quote(u.Port()) + ")"}
			}
		}
		known := strings.Fields(valkeyURLParams)
		for k := range u.Query() {
			if !slices.Contains(known, k) {
				return &Error{Var: "VALKEY_URL", Want: fmt.Sprintf("%s, its parameters among %s (docs/operations.md, \"Connecting to Valkey\"); got %q",
					valkeyURLWant, strings.Join(known, ", "), k)}
			}
		}
	}
	if err := checkWholeNumbers(v.wholeNumbers()); err != nil {
		return err
	}
	if v.WaitReplicas > 0 && (v.WaitTimeout < time.Millisecond || v.WaitTimeout > time.Minute) {
		return &Error{Var: "VALKEY_WAIT_TIMEOUT", Want: fmt.Sprintf("the most a record waits for the replicas, 1ms to 1m (e.g. 1s); got %v", v.WaitTimeout)}
	}
	if !lanes.ValidTag(v.KeyTag) {
		got := fmt.Sprintf("got %q", v.KeyTag)
		if v.KeyTag == "" {
			got = "it is set but empty (unset it for the default, " + lanes.DefaultTag + ")"
		}
		return &Error{Var: "VALKEY_KEY_TAG", Want: fmt.Sprintf("the hash tag of this bot's keys: %s, e.g. %s or bot-2; %s",
			lanes.TagRule, lanes.DefaultTag, got)}
	}
	return nil
}

// wholeNumbers are the rules of the section's whole-number variables.
func (v Valkey) wholeNumbers() []wholeNumber {
	return []wholeNumber{{"VALKEY_WAIT_REPLICAS", v.WaitReplicas, 0, 16, "replicas that must acknowledge an update's record, 0 (no wait) to 16"}}
}

// RedactURL is raw as it may be shown in an error or a log: its password
// replaced by "xxxxx" (url.URL.Redacted), or a placeholder when raw does
// not parse (its userinfo cannot be told apart then). It is not quoted: a
// log handler quotes a value as its format needs (slog's text handler
// does), an error quotes it itself.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "a value that does not parse as a URL (not shown: it may hold a password)"
	}
	return u.Redacted()
}

// urlReason is a URL parse failure without the URL it quotes (a
// *url.Error carries the whole value, password included): its reason only.
func urlReason(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
