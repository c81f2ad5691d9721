package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/lanes"
)

const token = "123456789:AAHfakeTokenForTests_abcdefghijkl"

// secret is the token's secret part (after the ':').
var secret = token[strings.IndexByte(token, ':')+1:]

func TestFromEnvDefaults(t *testing.T) {
	c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token})
	require.NoError(t, err)
	require.Equal(t, "https://api.telegram.org", c.APIURL)
	require.Equal(t, "redis://127.0.0.1:6379/0", c.ValkeyURL)
	require.Equal(t, lanes.DefaultTag, c.KeyTag, "existing deployments keep their keys")
	require.Equal(t, 30, c.GlobalRate)
	require.Equal(t, 100, c.ReplyRate)
	require.Zero(t, c.PaidBroadcastRate, "paid broadcasts are off by default")
	require.Equal(t, 1, c.ChatRate)
	require.Equal(t, 20, c.GroupRate)
	require.Equal(t, "all", c.Role)
	require.Equal(t, 1536, c.Workers)
	require.Equal(t, ":8080", c.HTTPAddr)
	require.Empty(t, c.AdminIDs)
	require.False(t, c.IsAdmin(1))
	require.True(t, c.Polls())
	require.True(t, c.Sends())
	require.True(t, c.Handles())
	require.False(t, c.Webhook())
	require.Equal(t, config.DefaultHandlers(), c.HandlerCount())
	require.Positive(t, c.HandlerCount())
	require.Equal(t, 30*time.Second, c.HandlerLease)
	require.Equal(t, []any{10 * time.Second, 10, 30, 30, 200},
		[]any{c.FloodWindow, c.FloodUserMessages, c.FloodUserTaps, c.FloodChatMessages, c.FloodChatTaps}, "the documented intake limits")
}

// Each role runs its part: poller records, handler handles, worker sends,
// all does everything.
func TestRolesSplitRecordingHandlingAndSending(t *testing.T) {
	for _, tc := range []struct {
		role                  string
		polls, handles, sends bool
	}{
		{"all", true, true, true},
		{"poller", true, false, false},
		{"handler", false, true, false},
		{"worker", false, false, true},
	} {
		t.Run(tc.role, func(t *testing.T) {
			c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "BOT_ROLE=" + tc.role, "HANDLERS=3"})
			require.NoError(t, err)
			require.Equal(t, [3]bool{tc.polls, tc.handles, tc.sends}, [3]bool{c.Polls(), c.Handles(), c.Sends()})
			require.Equal(t, 3, c.HandlerCount())
		})
	}
}

// Webhook mode: an http:// URL is accepted (a local Bot API server), the
// path served is the URL's.
func TestWebhookURLAndPath(t *testing.T) {
	for _, tc := range []struct{ url, path string }{
		{"https://bot.example.com/telegram/hook", "/telegram/hook"},
		{"http://127.0.0.1:8080/hook", "/hook"},
		{"https://bot.example.com", "/"},
		{"https://bot.example.com/a-b_c.d~e/", "/a-b_c.d~e/"},
	} {
		c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "TELEGRAM_WEBHOOK_URL=" + tc.url, "TELEGRAM_WEBHOOK_SECRET=s3cret_-X"})
		require.NoError(t, err)
		require.True(t, c.Webhook())
		require.Equal(t, tc.path, c.WebhookPath())
	}
}

func TestFromEnvValues(t *testing.T) {
	c, err := config.FromEnv([]string{
		"TELEGRAM_BOT_TOKEN=" + token, "ADMIN_IDS=11, 22", "BOT_ROLE=worker", "WORKERS=3",
		"TELEGRAM_API_URL=http://127.0.0.1:9000", "LOG_LEVEL=debug",
	})
	require.NoError(t, err)
	require.Equal(t, []int64{11, 22}, c.AdminIDs)
	require.True(t, c.IsAdmin(22))
	require.False(t, c.Polls())
	require.True(t, c.Sends())
	require.Equal(t, 3, c.Workers)
}

// TestAPIURL: the server only is accepted (with a path prefix, for a
// proxy); a URL with the /bot<token> part is refused without echoing it.
func TestAPIURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://api.telegram.org", true},
		{"http://127.0.0.1:8081", true},
		{"https://proxy.example/telegram", true},
		{"https://api.telegram.org/bot" + token, false},
		{"https://api.telegram.org/bot" + token + "/", false},
		{"https://api.telegram.org/bot", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "TELEGRAM_API_URL=" + tc.url})
			if tc.ok {
				require.NoError(t, err)
				require.Equal(t, tc.url, c.APIURL)
				return
			}
			require.Error(t, err)
			require.Equal(t, "TELEGRAM_API_URL: the Bot API server only, such as https://api.telegram.org: "+
				"the bot adds /bot<token>/<method> itself; the URL set has a /bot... path (not shown: it may hold the token)", err.Error())
		})
	}
}

func TestFromEnvErrorsNameTheVariable(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"missing token", nil, "TELEGRAM_BOT_TOKEN"},
		{"malformed token", []string{"TELEGRAM_BOT_TOKEN=secret-but-wrong"}, "TELEGRAM_BOT_TOKEN"},
		{"api url", []string{"TELEGRAM_API_URL=ftp://x"}, "TELEGRAM_API_URL"},
		{"api url with the bot path", []string{"TELEGRAM_API_URL=https://api.telegram.org/bot" + token}, "TELEGRAM_API_URL"},
		{"api url with the bot path and a method", []string{"TELEGRAM_API_URL=http://127.0.0.1:8081/bot" + token + "/getMe"}, "TELEGRAM_API_URL"},
		{"api url with an escaped token", []string{"TELEGRAM_API_URL=https://api.telegram.org/bot123456789%3AunknownSecretXYZ"}, "TELEGRAM_API_URL"},
		{"valkey url", []string{"VALKEY_URL=http://nope"}, "VALKEY_URL"},
		{"valkey url with a parameter valkey-go ignores", []string{"VALKEY_URL=redis://10.0.0.1:26379?master-set=mymaster"}, "VALKEY_URL"},
		{"key tag empty", []string{"VALKEY_KEY_TAG="}, "VALKEY_KEY_TAG"},
		{"negative replicas to wait for", []string{"VALKEY_WAIT_REPLICAS=-1"}, "VALKEY_WAIT_REPLICAS"},
		{"17 replicas to wait for", []string{"VALKEY_WAIT_REPLICAS=17"}, "VALKEY_WAIT_REPLICAS"},
		{"replica wait of 0", []string{"VALKEY_WAIT_REPLICAS=1", "VALKEY_WAIT_TIMEOUT=0s"}, "VALKEY_WAIT_TIMEOUT"},
		{"replica wait over a minute", []string{"VALKEY_WAIT_REPLICAS=2", "VALKEY_WAIT_TIMEOUT=2m"}, "VALKEY_WAIT_TIMEOUT"},
		{"key tag with braces", []string{"VALKEY_KEY_TAG={bot}"}, "VALKEY_KEY_TAG"},
		{"key tag holds the token", []string{"VALKEY_KEY_TAG=" + token}, "VALKEY_KEY_TAG"},
		{"admin not a number", []string{"ADMIN_IDS=12,abc"}, "ADMIN_IDS"},
		{"admin negative", []string{"ADMIN_IDS=-5"}, "ADMIN_IDS"},
		{"global rate zero", []string{"TELEGRAM_GLOBAL_RATE=0"}, "TELEGRAM_GLOBAL_RATE"},
		{"global rate text", []string{"TELEGRAM_GLOBAL_RATE=fast"}, "TELEGRAM_GLOBAL_RATE"},
		{"chat rate", []string{"TELEGRAM_CHAT_RATE=1000"}, "TELEGRAM_CHAT_RATE"},
		{"group rate", []string{"TELEGRAM_GROUP_RATE=-1"}, "TELEGRAM_GROUP_RATE"},
		{"role", []string{"BOT_ROLE=both"}, "BOT_ROLE"},
		{"workers", []string{"WORKERS=0"}, "WORKERS"},
		{"workers above the cap", []string{"WORKERS=4097"}, "WORKERS"},
		{"reply rate negative", []string{"TELEGRAM_REPLY_RATE=-1"}, "TELEGRAM_REPLY_RATE"},
		{"reply rate too high", []string{"TELEGRAM_REPLY_RATE=10001"}, "TELEGRAM_REPLY_RATE"},
		{"paid broadcast rate negative", []string{"TELEGRAM_PAID_BROADCAST_RATE=-1"}, "TELEGRAM_PAID_BROADCAST_RATE"},
		{"paid broadcast rate over Telegram's 1000", []string{"TELEGRAM_PAID_BROADCAST_RATE=1001"}, "TELEGRAM_PAID_BROADCAST_RATE"},
		{"paid broadcast rate below the free one", []string{"TELEGRAM_PAID_BROADCAST_RATE=29"}, "TELEGRAM_PAID_BROADCAST_RATE"},
		{"paid broadcasts with one shared budget", []string{"TELEGRAM_PAID_BROADCAST_RATE=1000", "TELEGRAM_REPLY_RATE=0"}, "TELEGRAM_PAID_BROADCAST_RATE"},
		{"workers text", []string{"WORKERS=many"}, "WORKERS"},
		{"worker lease without unit", []string{"WORKER_LEASE=30"}, "WORKER_LEASE"},
		{"worker lease text", []string{"WORKER_LEASE=soon"}, "WORKER_LEASE"},
		{"worker lease too long", []string{"WORKER_LEASE=2h"}, "WORKER_LEASE"},
		{"flood window negative", []string{"FLOOD_WINDOW=-1s"}, "FLOOD_WINDOW"},
		{"flood window too long", []string{"FLOOD_WINDOW=2h"}, "FLOOD_WINDOW"},
		{"flood user messages negative", []string{"FLOOD_USER_MESSAGES=-1"}, "FLOOD_USER_MESSAGES"},
		{"flood chat taps too many", []string{"FLOOD_CHAT_TAPS=1000001"}, "FLOOD_CHAT_TAPS"},
		{"http addr", []string{"HTTP_ADDR=8080"}, "HTTP_ADDR"},
		{"handlers negative", []string{"HANDLERS=-1"}, "HANDLERS"},
		{"handlers too many", []string{"HANDLERS=5000"}, "HANDLERS"},
		{"handler lease too short", []string{"HANDLER_LEASE=10ms"}, "HANDLER_LEASE"},
		{"webhook url not http", []string{"TELEGRAM_WEBHOOK_URL=ftp://x/hook", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook url relative", []string{"TELEGRAM_WEBHOOK_URL=/hook", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook path with an escaped space", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/tg%20hook", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook path with braces", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/tg/{token}", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook path with a space", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/tg hook", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook path with a dot-dot segment", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/a/../hook", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook path with an empty segment", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/a//hook", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook path with a colon", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/a:b", "TELEGRAM_WEBHOOK_SECRET=s"}, "TELEGRAM_WEBHOOK_URL"},
		{"webhook without a secret", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/hook"}, "TELEGRAM_WEBHOOK_SECRET"},
		{"webhook secret with a space", []string{"TELEGRAM_WEBHOOK_URL=https://bot.example/hook", "TELEGRAM_WEBHOOK_SECRET=a b"}, "TELEGRAM_WEBHOOK_SECRET"},
		{"log level", []string{"LOG_LEVEL=loud"}, "LOG_LEVEL"},
		{"console addr", []string{"CONSOLE_ADDR=8081", "CONSOLE_TOKEN=" + strings.Repeat("ab", 16)}, "CONSOLE_ADDR"},
		{"console without a token", []string{"CONSOLE_ADDR=127.0.0.1:8081"}, "CONSOLE_TOKEN"},
		{"console token too short", []string{"CONSOLE_ADDR=127.0.0.1:8081", "CONSOLE_TOKEN=" + strings.Repeat("ab", 15) + "c"}, "CONSOLE_TOKEN"},
		{"console token one character", []string{"CONSOLE_ADDR=127.0.0.1:8081", "CONSOLE_TOKEN=" + strings.Repeat("a", 40)}, "CONSOLE_TOKEN"},
		{"console token is the bot token", []string{"CONSOLE_ADDR=127.0.0.1:8081", "CONSOLE_TOKEN=" + token}, "CONSOLE_TOKEN"},
		// Values quoted in an error are redacted when they hold the token.
		{"api url holds the token", []string{"TELEGRAM_API_URL=ftp://x/bot" + token}, "TELEGRAM_API_URL"},
		{"workers holds the token", []string{"WORKERS=" + token}, "WORKERS"},
		{"admin ids hold the token", []string{"ADMIN_IDS=" + token}, "ADMIN_IDS"},
		{"api url with a query", []string{"TELEGRAM_API_URL=http://127.0.0.1:1?x=1"}, "TELEGRAM_API_URL"},
		{"api url with an empty query", []string{"TELEGRAM_API_URL=http://127.0.0.1:1?"}, "TELEGRAM_API_URL"},
		{"api url with a fragment", []string{"TELEGRAM_API_URL=https://api.telegram.org#x"}, "TELEGRAM_API_URL"},
	}
	// A token pasted on the wrong line, TELEGRAM_BOT_TOKEN empty: the value
	// quoted by that variable's error is redacted all the same.
	for _, v := range []string{"ADMIN_IDS", "HANDLERS", "VALKEY_WAIT_REPLICAS", "TELEGRAM_CHAT_RATE", "FLOOD_WINDOW", "WORKER_LEASE"} {
		cases = append(cases, struct {
			name string
			env  []string
			want string
		}{"the token in " + v + " and none set", []string{"TELEGRAM_BOT_TOKEN=", v + "=" + token}, v})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			envv := tc.env
			if tc.want != "TELEGRAM_BOT_TOKEN" {
				envv = append([]string{"TELEGRAM_BOT_TOKEN=" + token}, envv...)
			}
			_, err := config.FromEnv(envv)
			require.Error(t, err)
			var ce *config.Error
			require.True(t, errors.As(err, &ce), "error %v is not a *config.Error", err)
			require.Equal(t, tc.want, ce.Var)
			require.True(t, strings.HasPrefix(err.Error(), tc.want+": "), err.Error())
			require.NotContains(t, err.Error(), token)
			require.NotContains(t, err.Error(), secret)
			require.NotContains(t, ce.Want, secret, "what errors.As extracts is redacted too")
			require.NotContains(t, err.Error(), "secret-but-wrong")
			require.NotContains(t, err.Error(), "unknownSecretXYZ")
		})
	}
}

func TestLoadDotenvDoesNotOverride(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	require.NoError(t, os.WriteFile(path, []byte("TELEGRAM_BOT_TOKEN="+token+"\nWORKERS=5\nBOT_ROLE=poller\n"), 0o600))
	t.Setenv("BOT_ROLE", "worker")
	t.Setenv("TELEGRAM_BOT_TOKEN", "")
	t.Setenv("WORKERS", "")
	require.NoError(t, os.Unsetenv("TELEGRAM_BOT_TOKEN"))
	require.NoError(t, os.Unsetenv("WORKERS"))
	t.Cleanup(func() { _ = os.Unsetenv("TELEGRAM_BOT_TOKEN"); _ = os.Unsetenv("WORKERS") })
	c, err := config.Load(path)
	require.NoError(t, err)
	require.Equal(t, "worker", c.Role, "a variable already set wins over .env")
	require.Equal(t, 5, c.Workers)
	require.Equal(t, token, c.Token)
}

// TestKeyTagTakesLanesTagsOnlyAndSaysTheRule: VALKEY_KEY_TAG is the hash
// tag of every key, so it takes what lanes.WithTag takes (1-64 of A-Z a-z
// 0-9 . _ -) and nothing else: no brace (the tag must be all Valkey
// Cluster hashes), no ':' (the keys' separator), no space; set but empty is
// refused rather than read as the default, which another bot may be using.
// A refusal names the variable and says the rule.
func TestKeyTagTakesLanesTagsOnlyAndSaysTheRule(t *testing.T) {
	for _, tc := range []struct {
		tag string
		ok  bool
	}{
		{"cm", true},
		{"bot-2", true},
		{"Team_A.bot7", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"{bot}", false},
		{"bot}", false},
		{"bot:2", false},
		{"bot 2", false},
		{"бот", false},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "VALKEY_KEY_TAG=" + tc.tag})
			require.Equal(t, tc.ok, lanes.ValidTag(tc.tag), "the config takes what lanes takes")
			if tc.ok {
				require.NoError(t, err)
				require.Equal(t, tc.tag, c.KeyTag)
				return
			}
			var ce *config.Error
			require.True(t, errors.As(err, &ce), "error %v is not a *config.Error", err)
			require.Equal(t, "VALKEY_KEY_TAG", ce.Var)
			require.True(t, strings.HasPrefix(err.Error(), "VALKEY_KEY_TAG: the hash tag of this bot's keys: "+
				"1-64 characters of A-Z a-z 0-9 . _ - (no braces"), err.Error())
			if tc.tag == "" {
				require.Contains(t, err.Error(), "set but empty (unset it for the default, cm)")
			}
		})
	}
}

// TestParseErrorsSayWhatTheFieldTakes: a value the env library cannot
// parse is reported under its variable with a hint for the field's type.
func TestParseErrorsSayWhatTheFieldTakes(t *testing.T) {
	for _, tc := range []struct {
		env, want string
	}{
		{"WORKER_LEASE=30", `WORKER_LEASE: a Go duration such as 30s (a number with a unit: ms, s, m, h); the value set is not: unable to parse duration: time: missing unit in duration "30"`},
		{"WORKER_LEASE=soon", "WORKER_LEASE: a Go duration such as 30s"},
		{"ADMIN_IDS=12,abc", `ADMIN_IDS: Telegram user ids, positive whole numbers, comma-separated (e.g. 11,22; a comma at the end is fine); got "abc", not a whole number`},
		{"WORKERS=many", `WORKERS: a whole number, most sends in flight per process, 1..4096; got "many", not a whole number`},
		{"TELEGRAM_GLOBAL_RATE=30/s", `TELEGRAM_GLOBAL_RATE: a whole number, messages/s for the whole bot, 1..10000 (Telegram allows about 30); got "30/s", not a whole number`},
		{"TELEGRAM_GLOBAL_RATE=abc", `TELEGRAM_GLOBAL_RATE: a whole number, messages/s for the whole bot, 1..10000 (Telegram allows about 30); got "abc", not a whole number`},
		{"TELEGRAM_GLOBAL_RATE=99999999999999999999", `TELEGRAM_GLOBAL_RATE: a whole number, messages/s for the whole bot, 1..10000 (Telegram allows about 30); got "99999999999999999999", out of range`},
		{"TELEGRAM_CHAT_RATE=1.5", `TELEGRAM_CHAT_RATE: a whole number, messages/s per private chat, 1..100 (Telegram allows about 1); got "1.5", not a whole number`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			_, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, tc.env})
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), err.Error())
		})
	}
}

// A whole-number variable set to what is not a whole number ("abc") is
// refused with the range an out-of-range value ("-5") is refused with, so
// neither error leaves out what the variable takes (TELEGRAM_GLOBAL_RATE=abc
// said only "a whole number"): every int field of Config (from the env
// tags of its sections) and ADMIN_IDS's ids.
func TestAWholeNumberThatDoesNotParseStatesTheRangeAsOneOutOfRangeDoes(t *testing.T) {
	type numVar struct{ name, low string }
	vars := []numVar{{"ADMIN_IDS", "-5"}}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[config.Config]()) {
		if v, _, _ := strings.Cut(f.Tag.Get("env"), ","); v != "" && f.Type.Kind() == reflect.Int {
			vars = append(vars, numVar{v, "-5"})
		}
	}
	require.Len(t, vars, 14, "ADMIN_IDS and the 13 whole-number variables")
	wantOf := func(t *testing.T, env string) string {
		_, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, env})
		var ce *config.Error
		require.ErrorAs(t, err, &ce)
		return ce.Want
	}
	for _, tc := range vars {
		t.Run(tc.name, func(t *testing.T) {
			low := wantOf(t, tc.name+"="+tc.low)
			rule, ok := strings.CutSuffix(low, "; got "+tc.low)
			require.True(t, ok, "an out-of-range value ends its error: %s", low)
			for _, bad := range []string{"abc", "1.5", "99999999999999999999"} {
				got := wantOf(t, tc.name+"="+bad)
				require.Contains(t, got, rule, "%s=%s states the range %s=%s does", tc.name, bad, tc.name, tc.low)
				require.Contains(t, got, strconv.Quote(bad), "and the value set")
			}
		})
	}
}

// ADMIN_IDS takes a comma at the end ("11," after deleting the last id):
// it is not a missing id, and spaces around the commas are not part of
// an id. An empty id elsewhere may be a lost one and is refused, naming
// the variable (it said `parsing "": invalid syntax`). Set but empty is
// nobody, as unset.
func TestAdminIDsTakeACommaAtTheEndButNoEmptyID(t *testing.T) {
	for _, tc := range []struct {
		ids  string
		want []int64
		err  string
	}{
		{"11,", []int64{11}, ""},
		{"11, 22,", []int64{11, 22}, ""},
		{" 11 , ", []int64{11}, ""},
		{"11,22", []int64{11, 22}, ""},
		{"", nil, ""},
		{"11,,22", nil, "an id is empty (a comma at the start, or two in a row)"},
		{",11", nil, "an id is empty"},
		{"11,,", nil, "an id is empty"},
		{",", nil, "an id is empty"},
	} {
		t.Run(tc.ids, func(t *testing.T) {
			c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "ADMIN_IDS=" + tc.ids})
			if tc.err == "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, c.AdminIDs)
				return
			}
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "ADMIN_IDS", ce.Var)
			require.Contains(t, err.Error(), tc.err)
		})
	}
}

// TestEveryParseErrorNamesItsVariable sets each non-string field's variable
// (from the env tags of Config's sections) to garbage: the error names that variable, not
// the Go field.
func TestEveryParseErrorNamesItsVariable(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeFor[config.Config]()) {
		v, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if v == "" || f.Type.Kind() == reflect.String {
			continue
		}
		t.Run(v, func(t *testing.T) {
			_, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, v + "=garbage!"})
			var ce *config.Error
			require.True(t, errors.As(err, &ce), "error %v is not a *config.Error", err)
			require.Equal(t, v, ce.Var)
			require.NotContains(t, ce.Want, f.Name+":")
		})
	}
}

// TestLoadMalformedDotenv: a .env that godotenv cannot parse is reported
// with the file, the line and the kind of mistake, never with godotenv's
// message (it quotes the raw value, the token when that is the bad line).
func TestLoadMalformedDotenv(t *testing.T) {
	const leaked = "987654321:ZZsecretTokenThatMustNotLeak_0123"
	for _, tc := range []struct {
		name, content string
		line          int
		problem       string
	}{
		{"unterminated double quote", "TELEGRAM_BOT_TOKEN=\"" + leaked + "\n", 1, "a quoted value has no closing \""},
		{"unterminated quote on a later line", "WORKERS=3\nBOT_ROLE=\"all\"\n# comment\nTELEGRAM_BOT_TOKEN=\"" + leaked + "\nLOG_LEVEL=info\n", 4, "a quoted value has no closing \""},
		{"unterminated single quote, CRLF", "WORKERS=3\r\nTELEGRAM_BOT_TOKEN='" + leaked + "\r\nLOG_LEVEL=info\r\n", 2, "a quoted value has no closing '"},
		{"unterminated after an escaped quote", "A=\"x\\\"y\"\nTELEGRAM_BOT_TOKEN=\"" + leaked + " \\\" \n", 2, "a quoted value has no closing \""},
		{"bad variable name", "WORKERS=3\n\nTELEGRAM-BOT-TOKEN=" + leaked + "\n", 3, "a variable name has a character other than"},
		{"bad variable name with a space", "TELEGRAM BOT-TOKEN=" + leaked + "\n", 1, "a variable name has a character other than"},
		{"no '=' after the name", "WORKERS=3\nTELEGRAM_BOT_TOKEN " + leaked + "\nLOG_LEVEL=info\n", 2, "no '=' after the variable name"},
		{"a bare word", "# settings\nWORKERS=3\n\n  " + leaked[:9] + "\n", 4, "no '=' after the variable name"},
		{"no '=' after a multi-line quoted value", "A=\"one\ntwo=2\nthree\"\nTELEGRAM_BOT_TOKEN " + leaked + "\n", 4, "no '=' after the variable name"},
		{"no '=' after a BOM", "\xEF\xBB\xBFTELEGRAM_BOT_TOKEN " + leaked + "\n", 1, "no '=' after the variable name"},
		// An empty name or one no shell takes: os.Setenv refused the first
		// with no line ("cannot set a variable: setenv: invalid argument"),
		// godotenv took the others silently.
		{"no name before '='", "WORKERS=3\n=" + leaked + "\n", 2, "no variable name before '='"},
		{"only spaces before '='", "WORKERS=3\n\n   = " + leaked + "\n", 3, "no variable name before '='"},
		{"no name after export", "export =" + leaked + "\n", 1, "no variable name before '='"},
		{"a name starting with a digit", "1TELEGRAM_BOT_TOKEN=" + leaked + "\n", 1, "a variable name has a character other than letters, digits and '_', or starts with a digit"},
		{"a name with a dot", "WORKERS=3\nTELEGRAM.BOT_TOKEN=" + leaked + "\n", 2, "a variable name has a character other than letters, digits and '_', or starts with a digit"},
		{"a name with a dot, yaml-style", "TELEGRAM.BOT_TOKEN: " + leaked + "\n", 1, "a variable name has a character other than letters, digits and '_'"},
		{"a bad name after a multi-line quoted value", "A=\"one\ntwo=2\n\"\n9LIVES=" + leaked + "\n", 4, "or starts with a digit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".env")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			_, err := config.Load(path)
			require.Error(t, err)
			var de *config.DotenvError
			require.True(t, errors.As(err, &de), "error %v is not a *config.DotenvError", err)
			require.Equal(t, tc.line, de.Line)
			require.True(t, strings.HasPrefix(err.Error(), path+": line "), err.Error())
			require.Contains(t, err.Error(), tc.problem)
			require.NotContains(t, err.Error(), "ZZsecret")
			require.NotContains(t, err.Error(), "987654321")
		})
	}
}

// TestLoadDotenvAccepts: .env forms that are well-formed load, each
// variable with its value: a UTF-8 byte order mark before line 1 (written
// by some Windows editors) is dropped, not read as part of the first name;
// "export NAME=value", "NAME: value", comments, CRLF line ends and a
// multi-line quoted value whose inner lines have no '='.
func TestLoadDotenvAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          map[string]string
	}{
		{"BOM before line 1", "\xEF\xBB\xBFWORKERS=3\nBOT_ROLE=worker\n", map[string]string{"WORKERS": "3", "BOT_ROLE": "worker"}},
		{"BOM, CRLF", "\xEF\xBB\xBFWORKERS=4\r\nLOG_LEVEL=warn\r\n", map[string]string{"WORKERS": "4", "LOG_LEVEL": "warn"}},
		{"export and yaml-style", "export WORKERS=5\nLOG_LEVEL: debug\n", map[string]string{"WORKERS": "5", "LOG_LEVEL": "debug"}},
		{"comments and blank lines", "# a comment without =\n\n   # indented\nWORKERS=6 # trailing\n", map[string]string{"WORKERS": "6"}},
		{"multi-line quoted value", "ADMIN_IDS=\"1,\n2\"\nWORKERS=7\n", map[string]string{"ADMIN_IDS": "1,\n2", "WORKERS": "7"}},
		{"POSIX names: lower case, a leading '_', digits after the first", "codemojex_test_x=1\n_CODEMOJEX_TEST_Y=2\nCODEMOJEX_TEST_3=3\n",
			map[string]string{"codemojex_test_x": "1", "_CODEMOJEX_TEST_Y": "2", "CODEMOJEX_TEST_3": "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k := range tc.want {
				t.Setenv(k, "") // restored after the test
				require.NoError(t, os.Unsetenv(k))
			}
			path := filepath.Join(t.TempDir(), ".env")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			t.Setenv("TELEGRAM_BOT_TOKEN", "123456789:AAHsecretTOKENforConfigTests_0123")
			_, err := config.Load(path)
			if err != nil {
				var ce *config.Error
				require.True(t, errors.As(err, &ce), "only validation may fail here, not the .env: %v", err)
			}
			for k, v := range tc.want {
				got, ok := os.LookupEnv(k)
				require.True(t, ok, "%s set", k)
				require.Equal(t, v, got, k)
			}
		})
	}
}

// A URL's password never appears in a configuration error: a VALKEY_URL
// that does not parse (url.Parse quotes the whole value), one with a
// wrong scheme, a TELEGRAM_API_URL with userinfo and a wrong scheme, or
// one that does not parse. RedactURL, which the start-up log uses too,
// keeps the user and hides the password.
func TestURLPasswordsNeverInErrors(t *testing.T) {
	const pw = "MyValkeyPassw0rd"
	for _, tc := range []struct {
		name, env, want string
	}{
		{"valkey url that does not parse", "VALKEY_URL=redis://:" + pw + "@[::1", "VALKEY_URL"},
		{"valkey url with a bad port", "VALKEY_URL=redis://u:" + pw + "@host:99999999999/0", "VALKEY_URL"},
		{"valkey url with a wrong scheme", "VALKEY_URL=http://u:" + pw + "@host:6379/0", "VALKEY_URL"},
		{"valkey url with an unknown parameter", "VALKEY_URL=redis://u:" + pw + "@host:6379/0?timeout=1s", "VALKEY_URL"},
		{"api url with a wrong scheme", "TELEGRAM_API_URL=ftp://api:" + pw + "@host/", "TELEGRAM_API_URL"},
		{"api url that does not parse", "TELEGRAM_API_URL=http://api:" + pw + "@[::1", "TELEGRAM_API_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, tc.env})
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), pw)
		})
	}
	require.Equal(t, `http://api:xxxxx@127.0.0.1:8081`, config.RedactURL("http://api:"+pw+"@127.0.0.1:8081"))
	require.NotContains(t, config.RedactURL("http://api:"+pw+"@[::1"), pw)
}

// A paid broadcast rate below the free bulk rate (TELEGRAM_GLOBAL_RATE)
// is refused at startup, the error naming both values: the paid send
// (0.1 Star a copy) would be slower than the free one. One at the free
// rate or above, or 0 (off), is accepted.
func TestAPaidBroadcastRateBelowTheFreeRateIsRefusedNamingBoth(t *testing.T) {
	for _, tc := range []struct {
		global, paid string
		refused      bool
	}{
		{"30", "29", true},
		{"50", "1", true},
		{"30", "30", false},
		{"30", "1000", false},
		{"30", "0", false},
		{"1000", "999", true},
	} {
		t.Run(tc.global+"/"+tc.paid, func(t *testing.T) {
			_, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "TELEGRAM_GLOBAL_RATE=" + tc.global, "TELEGRAM_PAID_BROADCAST_RATE=" + tc.paid})
			if !tc.refused {
				require.NoError(t, err)
				return
			}
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "TELEGRAM_PAID_BROADCAST_RATE", ce.Var)
			require.Contains(t, ce.Error(), "TELEGRAM_GLOBAL_RATE="+tc.global)
			require.Contains(t, ce.Error(), "got "+tc.paid+",")
		})
	}
}

// The URLs docs/operations.md shows ("Connecting to Valkey") are accepted,
// each read by valkey-go as the docs say: a password, TLS, a Unix socket,
// Sentinel's master set, a Cluster's seed addresses.
func TestTheValkeyURLsTheDocsShowAreAccepted(t *testing.T) {
	for _, tc := range []struct {
		url   string
		check func(t *testing.T, o valkey.ClientOption)
	}{
		{"redis://:s3cret@10.0.0.1:6379/0", func(t *testing.T, o valkey.ClientOption) {
			require.Equal(t, "s3cret", o.Password)
			require.Equal(t, []string{"10.0.0.1:6379"}, o.InitAddress)
		}},
		{"rediss://bot:s3cret@valkey.example.com:6380/0", func(t *testing.T, o valkey.ClientOption) {
			require.NotNil(t, o.TLSConfig)
			require.Equal(t, "valkey.example.com", o.TLSConfig.ServerName)
			require.Equal(t, "bot", o.Username)
		}},
		{"unix:///run/valkey/valkey.sock?db=0", func(t *testing.T, o valkey.ClientOption) {
			require.Equal(t, []string{"/run/valkey/valkey.sock"}, o.InitAddress)
		}},
		{"redis://10.0.0.1:26379?addr=10.0.0.2:26379&addr=10.0.0.3:26379&master_set=mymaster", func(t *testing.T, o valkey.ClientOption) {
			require.Equal(t, "mymaster", o.Sentinel.MasterSet)
			require.Len(t, o.InitAddress, 3)
		}},
		{"redis://10.0.0.1:6379?addr=10.0.0.2:6379&addr=10.0.0.3:6379&dial_timeout=3s", func(t *testing.T, o valkey.ClientOption) {
			require.Len(t, o.InitAddress, 3)
			require.Equal(t, 3*time.Second, o.Dialer.Timeout)
		}},
	} {
		t.Run(tc.url, func(t *testing.T) {
			c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "VALKEY_URL=" + tc.url})
			require.NoError(t, err)
			o, err := valkey.ParseURL(c.ValkeyURL)
			require.NoError(t, err)
			tc.check(t, o)
		})
	}
}

// TestAnEmptyVariableThatBeatsTheDotenvFileIsNamed: a variable set to ""
// in the environment keeps its empty value over the .env file's (Load),
// and EmptyOverrides names it so the start can say so; a variable set to
// a value of its own (an intended override), one the file leaves empty and
// one the environment does not set are not named, and no value is shown.
func TestAnEmptyVariableThatBeatsTheDotenvFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	require.NoError(t, os.WriteFile(path, []byte("TELEGRAM_BOT_TOKEN="+token+"\nLOG_LEVEL=debug\nBOT_ROLE=poller\nHTTP_ADDR=\nWORKERS=5\n"), 0o600))
	t.Setenv("LOG_LEVEL", "")
	t.Setenv("BOT_ROLE", "worker")
	t.Setenv("HTTP_ADDR", "")
	t.Setenv("WORKERS", "")
	require.NoError(t, os.Unsetenv("WORKERS"))
	t.Setenv("TELEGRAM_BOT_TOKEN", "")
	c, err := config.Load(path)
	require.Error(t, err, "the empty token beats the file's: no token")
	require.NotContains(t, err.Error(), token)
	require.Empty(t, c.Token)
	require.Equal(t, []string{"LOG_LEVEL", "TELEGRAM_BOT_TOKEN"}, config.EmptyOverrides(path))
	require.Nil(t, config.EmptyOverrides(filepath.Join(dir, "absent.env")))
	require.Nil(t, config.EmptyOverrides(""))
}
