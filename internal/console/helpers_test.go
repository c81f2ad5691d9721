package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/app"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/console"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// adminID is the bot admin of the harness (ADMIN_IDS).
const adminID = 9001

// token is the console token of the harness.
const token = "test-console-token-0123456789abcdefXYZ"

// wait bounds every wait of a test.
const wait = 20 * time.Second

// env is a running bot (the app against the emulator and a Valkey
// namespace) with its console served on a loopback test server.
type env struct {
	t    *testing.T
	emu  *tgemu.Emulator
	c    valkey.Client
	app  *app.App
	srv  *httptest.Server
	logs *testkit.LogBuffer
	tag  string // the bot's key tag
	// valkeyURL is the shared Valkey's address.
	valkeyURL string
}

// process starts one more process of the bot (the same emulator, Valkey
// and tag) with the given extra environment, running until the test ends.
func (e *env) process(extra ...string) (*app.App, config.Config) {
	t := e.t
	t.Helper()
	cfg, err := config.FromEnv(append([]string{
		"TELEGRAM_BOT_TOKEN=" + e.emu.Token(),
		"TELEGRAM_API_URL=" + e.emu.URL(),
		"VALKEY_URL=" + e.valkeyURL,
		fmt.Sprintf("ADMIN_IDS=%d", adminID),
		"TELEGRAM_GLOBAL_RATE=1000",
		"TELEGRAM_CHAT_RATE=100",
		"TELEGRAM_GROUP_RATE=6000",
		"WORKERS=4",
		"CONSOLE_ADDR=127.0.0.1:0",
		"CONSOLE_TOKEN=" + token,
	}, extra...))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	a, err := app.New(cfg, app.WithValkey(e.c), app.WithTag(e.tag), app.WithPollTimeout(time.Second),
		app.WithLeaseTTL(3*time.Second), app.WithDrainTimeout(5*time.Second), app.WithEditInterval(200*time.Millisecond),
		app.WithListener(ln), app.WithLogger(e.logs.Logger()))
	require.NoError(t, err)
	stop := testkit.RunInBackground(t, "app", wait, a.Run)
	t.Cleanup(func() { require.NoError(t, stop()) })
	return a, cfg
}

// start runs the bot with the given extra environment and serves its
// console, on the shared Valkey.
func start(t *testing.T, extra ...string) *env {
	t.Helper()
	return startOn(t, valkeytest.Shared(t), console.Config{}, extra...)
}

// startOn is start on Valkey vs (a dedicated server for a test that stops
// or stalls it) with the console configured by ccfg (its Token and Log
// are the harness's).
func startOn(t *testing.T, vs *valkeytest.Server, ccfg console.Config, extra ...string) *env {
	t.Helper()
	emu := testkit.NewEmulator(t, testkit.Unlimited("the console's pages, not the bot's pacing"))
	e := &env{t: t, emu: emu, c: vs.Client(t), logs: &testkit.LogBuffer{}, tag: valkeytest.Namespace(t), valkeyURL: vs.URL}
	var cfg config.Config
	e.app, cfg = e.process(extra...)
	ccfg.Token, ccfg.Log = cfg.ConsoleToken, e.logs.Logger()
	con, err := console.New(e.app.Admin(), ccfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- con.Run(ctx, cln) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	e.srv = &httptest.Server{URL: "http://" + cln.Addr().String()}
	testkit.CheckLogsAtEnd(t, e.logs, emu.Token())
	return e
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects (a test checks where it is sent).
type browser struct {
	t    *testing.T
	e    *env
	http *http.Client
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &browser{t: e.t, e: e, http: &http.Client{Jar: jar, Timeout: wait,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// request builds a request to the console (a form body when form is not
// nil).
func (b *browser) request(method, path string, form url.Values) *http.Request {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.e.srv.URL+path, body)
	require.NoError(b.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req
}

// send sends req and returns the answer and its body, which must not show
// the bot token.
func (b *browser) send(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.http.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	testkit.RequireNoToken(b.t, string(raw), b.e.emu.Token(), "a console page")
	return resp, string(raw)
}

// do sends a request and returns the answer and its body.
func (b *browser) do(method, path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	return b.send(b.request(method, path, form))
}

func (b *browser) get(path string) (*http.Response, string) { return b.do(http.MethodGet, path, nil) }

// signIn signs in with the console token.
func (b *browser) signIn() {
	b.t.Helper()
	resp, _ := b.do(http.MethodPost, "/login", url.Values{"token": {token}})
	require.Equal(b.t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(b.t, "/", resp.Header.Get("Location"))
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token from a page's forms.
func (b *browser) csrf() string {
	b.t.Helper()
	_, body := b.get("/audit")
	m := csrfRE.FindStringSubmatch(body)
	require.NotNil(b.t, m, "the page carries the CSRF token")
	return m[1]
}

// post sends a change with the session's CSRF token and follows its
// redirect; it returns the page it lands on.
func (b *browser) post(path string, form url.Values) string {
	b.t.Helper()
	form.Set("csrf", b.csrf())
	resp, _ := b.do(http.MethodPost, path, form)
	require.Equal(b.t, http.StatusSeeOther, resp.StatusCode, "a change answers with a redirect")
	_, page := b.get(resp.Header.Get("Location"))
	return page
}

var flashRE = regexp.MustCompile(`(?s)<p id="flash" class="flash (ok|bad)">(.*?)</p>`)

// flash returns the answer shown on page (unescaped) and whether it is a
// success.
func flash(t *testing.T, page string) (string, bool) {
	t.Helper()
	m := flashRE.FindStringSubmatch(page)
	require.NotNil(t, m, "the page shows the change's answer")
	return htmlUnescape(m[2]), m[1] == "ok"
}

func htmlUnescape(s string) string {
	r := strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`)
	return r.Replace(s)
}

// ask sends text as the admin in the admin's private chat and returns the
// one reply it gets.
func (e *env) ask(text string) string {
	e.t.Helper()
	before := len(e.emu.Messages(adminID))
	_, err := e.emu.InjectMessage(tgemu.TextMessage{ChatID: adminID, From: models.User{ID: adminID, FirstName: "Admin"}, Text: text})
	require.NoError(e.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	msgs, err := e.emu.WaitForMessages(ctx, adminID, before+1)
	require.NoError(e.t, err)
	return msgs[before].CurrentText()
}

// knownChats makes chats first..first+n-1 known to the bot (each sends
// /start and gets its reply) and returns them.
func (e *env) knownChats(first int64, n int) []int64 {
	e.t.Helper()
	var out []int64
	for i := range n {
		id := first + int64(i)
		out = append(out, id)
		_, err := e.emu.InjectMessage(tgemu.TextMessage{ChatID: id, From: models.User{ID: id, FirstName: fmt.Sprintf("User%d", i)}, Text: "/start"})
		require.NoError(e.t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, id := range out {
		_, err := e.emu.WaitForMessages(ctx, id, 1)
		require.NoError(e.t, err)
	}
	return out
}

var broadcastIDRE = regexp.MustCompile(`broadcast (bc_\w+)\.`)

// broadcast sends text to every known chat the way an admin does (the
// /broadcast preview, then its Send button) and returns the broadcast id.
func (e *env) broadcast(text string) string {
	e.t.Helper()
	pv := e.ask("/broadcast " + text)
	require.True(e.t, strings.HasPrefix(pv, "📣 Broadcast preview."), pv)
	msgs := e.emu.Messages(adminID)
	m := msgs[len(msgs)-1]
	var kb models.InlineKeyboardMarkup
	require.NoError(e.t, json.Unmarshal([]byte(m.ReplyMarkup), &kb))
	data := ""
	for _, b := range kb.InlineKeyboard[0] {
		if b.Text == "✅ Send" {
			data = b.CallbackData
		}
	}
	require.NotEmpty(e.t, data)
	_, err := e.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: m.ID, From: models.User{ID: adminID, FirstName: "Admin"}, Data: data})
	require.NoError(e.t, err)
	var id string
	require.Eventually(e.t, func() bool {
		// From this preview on: an earlier broadcast's messages name theirs.
		for _, m := range e.emu.Messages(adminID)[len(msgs)-1:] {
			if s := broadcastIDRE.FindStringSubmatch(m.CurrentText()); s != nil {
				id = s[1]
				return true
			}
		}
		return false
	}, wait, 20*time.Millisecond, "the preview says the broadcast's id")
	return id
}
