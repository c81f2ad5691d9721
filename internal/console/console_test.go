package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/console"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/version"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestConsoleRefusesAWeakToken: New refuses a token under 32 characters or
// of too little entropy (config.ValidateConsoleToken) with the
// configuration error naming CONSOLE_TOKEN and how to make one (the
// console does not start).
func TestConsoleRefusesAWeakToken(t *testing.T) {
	for _, weak := range []string{"short", "passwordpasswordpasswordpassword"} {
		_, err := console.New(nil, console.Config{Token: weak})
		var ce *config.Error
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, "CONSOLE_TOKEN", ce.Var)
		require.ErrorContains(t, err, "make one with: openssl rand -hex 32")
	}
}

// TestSignInRefusesWrongTokensAndIsRateLimited: every page needs a
// session (a GET is sent to the sign-in page, a POST refused); a wrong
// token is refused (401) and sets no session; after 5 wrong ones in a row
// from one address the next wrong one is answered 429, and the right
// token still signs in from that address; the right token signs in with
// an HttpOnly, SameSite=Strict cookie (not Secure over plain HTTP); every
// answer carries the strict CSP.
func TestSignInRefusesWrongTokensAndIsRateLimited(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	for _, p := range []string{"/", "/queues", "/chat", "/dead", "/broadcasts", "/audit", "/api/overview"} {
		resp, _ := b.get(p)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, p)
		require.Equal(t, "/login", resp.Header.Get("Location"), p)
	}
	resp, _ := b.do(http.MethodPost, "/chat/weight", url.Values{"chat": {"42"}, "weight": {"5"}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a change without a session")

	good := e.browser()
	good.signIn()
	jarURL, _ := url.Parse(e.srv.URL)
	require.Len(t, good.http.Jar.Cookies(jarURL), 1)

	resp, body := b.do(http.MethodPost, "/login", url.Values{"token": {strings.Repeat("x", 40)}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body, "Wrong token.")
	require.Empty(t, resp.Cookies(), "no session for a wrong token")
	require.Equal(t, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		resp.Header.Get("Content-Security-Policy"))
	for range 4 {
		resp, _ = b.do(http.MethodPost, "/login", url.Values{"token": {token + "x"}})
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	resp, _ = b.do(http.MethodPost, "/login", url.Values{"token": {token + "x"}})
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the 6th wrong token in a row")
	require.Empty(t, resp.Cookies(), "no session for a wrong token")
	b.signIn() // the right token, from the same address, right after
	resp, _ = b.get("/")
	require.Equal(t, http.StatusOK, resp.StatusCode, "signed in despite the wrong tokens before")

	resp, _ = good.get("/")
	require.Equal(t, http.StatusOK, resp.StatusCode, "a signed-in browser is not affected by the limit")
}

// TestRightTokenSignsInAfterManyWrongOnes: a lockout never refuses the
// right token. Behind a proxy every client shares its address: with
// CONSOLE_TRUSTED_PROXIES unset, 50 wrong tokens from that address (each
// claiming another client in X-Forwarded-For, which is not believed) are
// refused, all but the first few with 429, and the operator's right token
// from that same address still signs in, every time.
func TestRightTokenSignsInAfterManyWrongOnes(t *testing.T) {
	t.Parallel()
	e := start(t)
	attacker, operator := e.browser(), e.browser()
	codes := map[int]int{}
	for i := range 50 {
		req := attacker.request(http.MethodPost, "/login", url.Values{"token": {fmt.Sprintf("%s-guess-%d", token, i)}})
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
		resp, _ := attacker.send(req)
		require.Empty(t, resp.Cookies(), "no session for a wrong token")
		codes[resp.StatusCode]++
		if i%10 == 9 {
			operator.signIn()
		}
	}
	require.Equal(t, 50, codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests], "every wrong token refused: %v", codes)
	require.GreaterOrEqual(t, codes[http.StatusTooManyRequests], 40, "X-Forwarded-For from an untrusted peer does not split the count: %v", codes)
	resp, _ := operator.get("/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestForwardedForIsTrustedOnlyFromTheConfiguredProxy: with the loopback
// (the test's client) as a trusted proxy, wrong sign-ins are counted per
// client named by X-Forwarded-For (a client over its limit does not limit
// another) and logged under it; a spoofed entry left of the client's is
// not believed (the count follows the entry the proxy appended); without
// the proxy trusted the header changes nothing: all are one client.
func TestForwardedForIsTrustedOnlyFromTheConfiguredProxy(t *testing.T) {
	t.Parallel()
	e := start(t)
	serve := func(trusted ...string) string {
		var ps []netip.Prefix
		for _, p := range trusted {
			ps = append(ps, netip.MustParsePrefix(p))
		}
		con, err := console.New(e.app.Admin(), console.Config{Token: token, TrustedProxies: ps, Log: e.logs.Logger()})
		require.NoError(t, err)
		srv := httptest.NewServer(con.Handler())
		t.Cleanup(srv.Close)
		return srv.URL
	}
	// wrongFrom sends a wrong token to base through a proxy at 127.0.0.1
	// that says the client was xff, and returns the status.
	wrongFrom := func(base, xff string) int {
		req, err := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(url.Values{"token": {token + "x"}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", xff)
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	// limitedAfter sends wrong tokens until one is answered 429 and
	// returns how many were sent (0: none in 20).
	limitedAfter := func(base, xff string) int {
		for i := 1; i <= 20; i++ {
			if code := wrongFrom(base, xff); code == http.StatusTooManyRequests {
				return i
			}
		}
		return 0
	}

	trusting := serve("127.0.0.0/8", "10.0.0.0/8")
	require.NotZero(t, limitedAfter(trusting, "203.0.113.7"), "one client is limited")
	require.Equal(t, http.StatusTooManyRequests, wrongFrom(trusting, "203.0.113.7, 10.1.2.3"), "behind a second trusted proxy: the same client")
	require.Equal(t, http.StatusUnauthorized, wrongFrom(trusting, "203.0.113.8"), "another client is not")
	require.Equal(t, http.StatusUnauthorized, wrongFrom(trusting, "203.0.113.7, 203.0.113.9"),
		"a spoofed entry before the one the proxy appended is not believed: client 203.0.113.9")
	require.Contains(t, e.logs.String(), "client=203.0.113.8", "logged under the client the proxy names")

	ignoring := serve() // nothing trusted: every request is 127.0.0.1's
	require.NotZero(t, limitedAfter(ignoring, "203.0.113.7"))
	require.Equal(t, http.StatusTooManyRequests, wrongFrom(ignoring, "203.0.113.8"), "the header is not believed from an untrusted peer")

	otherProxy := serve("10.0.0.0/8") // a proxy elsewhere trusted, not the loopback
	require.NotZero(t, limitedAfter(otherProxy, "203.0.113.7"))
	require.Equal(t, http.StatusTooManyRequests, wrongFrom(otherProxy, "203.0.113.8"), "only the configured proxy is believed")
}

// TestSessionCookieIsHttpOnlyAndStrict: the session cookie is HttpOnly,
// SameSite=Strict, and Secure when the request came over https (through a
// proxy saying so).
func TestSessionCookieIsHttpOnlyAndStrict(t *testing.T) {
	t.Parallel()
	e := start(t)
	for _, tc := range []struct {
		proto  string
		secure bool
	}{{"", false}, {"https", true}} {
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Len(t, resp.Cookies(), 1)
		ck := resp.Cookies()[0]
		require.True(t, ck.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
		require.Equal(t, tc.secure, ck.Secure, "proto %q", tc.proto)
		require.GreaterOrEqual(t, len(ck.Value), 40, "a random session id")
	}
}

// TestChangesNeedTheCSRFTokenAndAreAuditedAsConsole: a weight change
// without the session's CSRF token (or with another's) is refused (403) and
// changes nothing; with it the weight is set, /weight agrees, and the audit
// log (the Audit page and /audit) names "console". A weight of 0 in the
// form gets exactly /weight 42 0's answer. GET never changes anything.
func TestChangesNeedTheCSRFTokenAndAreAuditedAsConsole(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	other := e.browser()
	other.signIn()
	ctx := context.Background()
	weight := func() int {
		w, err := e.app.Store().Inspector().Weight(ctx, "42")
		require.NoError(t, err)
		return w
	}
	for _, form := range []url.Values{
		{"chat": {"42"}, "weight": {"5"}},
		{"chat": {"42"}, "weight": {"5"}, "csrf": {""}},
		{"chat": {"42"}, "weight": {"5"}, "csrf": {other.csrf()}},
	} {
		resp, body := b.do(http.MethodPost, "/chat/weight", form)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Contains(t, body, "CSRF")
	}
	resp, _ := b.get("/chat/weight?chat=42&weight=5")
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "no change on GET")
	require.Equal(t, 1, weight(), "nothing changed")

	page := b.post("/chat/weight", url.Values{"chat": {"42"}, "weight": {"0"}})
	text, ok := flash(t, page)
	require.False(t, ok)
	require.Equal(t, e.ask("/weight 42 0"), text, "the form's weight 0 says what /weight 42 0 says")
	require.Equal(t, 1, weight())

	page = b.post("/chat/weight", url.Values{"chat": {"x42"}, "weight": {"5"}})
	text, ok = flash(t, page)
	require.False(t, ok)
	require.Equal(t, e.ask("/weight x42 5"), text, "a wrong chat id in the form says what /weight x42 5 says")
	require.Equal(t, 1, strings.Count(page, `class="flash bad"`), "and says it once")

	page = b.post("/chat/weight", url.Values{"chat": {"42"}, "weight": {"5"}})
	text, ok = flash(t, page)
	require.True(t, ok)
	require.Equal(t, "✅ Chat 42: weight set to 5 (was 1), for replies and notifications alike.", text)
	require.Equal(t, "Chat 42: weight 5 (default 1), for replies and notifications alike.", e.ask("/weight 42"))
	_, audit := b.get("/audit")
	require.Contains(t, audit, "<td>console</td><td>weight set</td><td>chat 42: weight 5 (was 1)</td>")
	require.Regexp(t, `\n• \S+ \S+ console: weight set, chat 42: weight 5 \(was 1\)$`, e.ask("/audit"))
}

// TestRequeueADeadLetterDeliversIt: a message dead-lettered (the chat had
// blocked the bot) is listed on the Dead letters page, filtered by reason;
// requeued from there (with its id) after the chat unblocked, it is
// delivered; the requeue is audited as /dlq requeue's, by "console".
// Purge-all removes what matches only.
func TestRequeueADeadLetterDeliversIt(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	e.emu.SetChatStatus(4242, tgemu.ChatBlocked)
	_, err := e.app.Notifier().Notify(ctx, 4242, notifier.Message{Text: "hello again", Class: notifier.Notification})
	require.NoError(t, err)
	var id lanes.JobID
	require.Eventually(t, func() bool {
		ds, err := e.app.Store().Inspector().DeadLetters(ctx, tgjob.QueueNotify, lanes.DeadQuery{Newest: 1})
		if err == nil && len(ds) == 1 {
			id = ds[0].ID
		}
		return id != ""
	}, wait, 20*time.Millisecond)
	_, page := b.get("/dead?queue=notify&reason=forbidden")
	require.Contains(t, page, `data-id="`+string(id)+`"`)
	require.Contains(t, page, "hello again")
	_, page = b.get("/dead?queue=notify&reason=too+long")
	require.NotContains(t, page, string(id), "the reason filter")
	require.Contains(t, page, "No dead letters match.")

	e.emu.SetChatStatus(4242, tgemu.ChatActive)
	page = b.post("/dead/requeue", url.Values{"queue": {"notify"}, "id": {string(id)}})
	text, ok := flash(t, page)
	require.True(t, ok, text)
	require.True(t, strings.HasPrefix(text, "✅ Requeued 1 dead letter (notify 1)."), text)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	msgs, err := e.emu.WaitForMessages(wctx, 4242, 1)
	require.NoError(t, err)
	require.Equal(t, "hello again", msgs[0].Text, "the requeued letter is delivered")
	_, audit := b.get("/audit")
	require.Contains(t, audit, "<td>console</td><td>dead letters requeued</td><td>1 (notify 1)</td>")

	page = b.post("/dead/purge", url.Values{"queue": {"notify"}, "reason": {"forbidden"}})
	text, _ = flash(t, page)
	require.Equal(t, "No dead letters to purge.", text)
}

// TestEveryPageRendersTheBotsState: each page answers 200 with the state
// the chat commands show: the queues of /lanes, a chat found by its
// username with its weight and lanes, a running broadcast with a Stop that
// stops it (audited as console), the Overview's live JSON.
func TestEveryPageRendersTheBotsState(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	e.ask("/start")
	_, page := b.get("/queues")
	for _, q := range []string{"update", "reply", "notify"} {
		require.Contains(t, page, `id="queue-`+q+`"`)
	}
	resp, page := b.get("/chat?q=adm")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "one chat found: its page %s", page)
	require.Equal(t, "/chat?id=9001", resp.Header.Get("Location"))
	_, page = b.get("/chat?id=9001")
	require.Contains(t, page, "Chat 9001 · Admin")
	require.Contains(t, page, `name="weight" id="weight" value="1"`)
	require.Contains(t, page, "No game running.")
	require.True(t, strings.HasPrefix(e.ask("/play"), "🔐 New code"), "a game starts")
	_, page = b.get("/chat?id=9001")
	require.Contains(t, page, `<pre class="board">10 of 10 attempts left.</pre>`, "its game's board")
	_, page = b.get("/chat?id=abc")
	require.Contains(t, page, "Chat id &#34;abc&#34; is not a number.")

	// A broadcast kept running: its chats' notification lanes are parked.
	for _, c := range e.knownChats(70_000, 20) {
		_, err := e.app.Store().Inspector().Park(ctx, tgjob.QueueNotify, tgjob.Group(c), time.Hour)
		require.NoError(t, err)
	}
	_, err := e.app.Store().Inspector().Park(ctx, tgjob.QueueNotify, tgjob.Group(adminID), time.Hour)
	require.NoError(t, err)
	id := e.broadcast("parked")
	_, page = b.get("/broadcasts")
	require.Contains(t, page, `class="bc" data-id="`+id+`"`)
	require.Contains(t, page, "by admin 9001 · free</div>", "who sent it and its mode")
	page = b.post("/broadcasts/stop", url.Values{"id": {id}})
	text, ok := flash(t, page)
	require.True(t, ok, text)
	require.Equal(t, "🛑 Broadcast "+id+" stopped: 0 sent before the stop, 21 cancelled.", text)
	require.Contains(t, page, "<td>free</td>\n<td>stopped</td>")
	_, audit := b.get("/audit")
	require.Contains(t, audit, "<td>console</td><td>broadcast stopped</td>")

	var js string
	require.Eventually(t, func() bool {
		_, js = b.get("/api/overview")
		return strings.Contains(js, `"points":[{`)
	}, wait, 50*time.Millisecond, "the overview samples")
	require.Contains(t, js, `"budgets":["bulk","global","reply"]`, "the send budgets with replies apart (TELEGRAM_REPLY_RATE > 0): bulk, reply and their total, from the app's codemojex_budget_limit")
	resp, page = b.get("/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, page, `id="v-oldest"`)
}

// TestOverviewListsTheChatsBeingLimited: a user flooding the bot past the
// intake limit (FLOOD_USER_MESSAGES) is listed on the Overview as /lanes
// lists it, linked to its Chat page; a quiet chat is not.
func TestOverviewListsTheChatsBeingLimited(t *testing.T) {
	t.Parallel()
	e := start(t, "FLOOD_USER_MESSAGES=5")
	b := e.browser()
	b.signIn()
	_, page := b.get("/")
	require.Contains(t, page, `id="none-limited"`)
	e.ask("/start")
	for range 20 {
		_, err := e.emu.InjectMessage(tgemu.TextMessage{ChatID: 801, Text: "/help"})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		_, page = b.get("/")
		return strings.Contains(page, `<td><a href="/chat?id=801">801</a></td>`)
	}, wait, 50*time.Millisecond, "the flooder is listed")
	require.NotContains(t, page, `href="/chat?id=9001"`, "the quiet admin is not")
	require.Contains(t, e.ask("/lanes"), "• chat 801 limited, listed until ")
}

// TestDeadLettersPageAndActOnOneOrAllMatching: 30 dead letters of two
// reasons page 25 at a time (newest first, older/newer links); purging one
// by id deletes only it; requeue-all-matching a reason requeues exactly
// that reason's letters; each action is audited as /dlq's with who console.
func TestDeadLettersPageAndActOnOneOrAllMatching(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	in := e.app.Store().Inspector()
	// Two chats' lanes dead-lettered whole: 20 "gone" letters of chat 51
	// and 10 "moved" of chat 52 (their lanes parked, so nothing is sent first).
	for _, l := range []struct {
		chat   int64
		n      int
		reason string
	}{{51, 20, "gone"}, {52, 10, "moved"}} {
		_, err := in.Park(ctx, tgjob.QueueNotify, tgjob.Group(l.chat), time.Hour)
		require.NoError(t, err)
		for i := range l.n {
			_, err := e.app.Notifier().Notify(ctx, l.chat, notifier.Message{Text: "m" + strconv.Itoa(i), Class: notifier.Notification})
			require.NoError(t, err)
		}
		ids, err := in.DeadLane(ctx, tgjob.QueueNotify, tgjob.Group(l.chat), l.reason)
		require.NoError(t, err)
		require.Len(t, ids, l.n)
	}
	rows := func(page string) int { return strings.Count(page, `<tr data-id="`) }
	_, page := b.get("/dead?queue=notify")
	require.Equal(t, 25, rows(page), "a page of 25")
	require.Contains(t, page, "30 dead letters in notify")
	require.Contains(t, page, `skip=25">older →</a>`)
	_, page = b.get("/dead?queue=notify&skip=25")
	require.Equal(t, 5, rows(page), "the last 5")
	require.Contains(t, page, `skip=0">← newer</a>`)
	require.NotContains(t, page, "older →")
	_, page = b.get("/dead?queue=notify&reason=moved")
	require.Equal(t, 10, rows(page))

	one := regexp.MustCompile(`<tr data-id="(job_\w+)">`).FindStringSubmatch(page)[1]
	page = b.post("/dead/purge", url.Values{"queue": {"notify"}, "id": {one}})
	text, ok := flash(t, page)
	require.True(t, ok, text)
	require.Equal(t, "🗑 Purged 1 dead letters (notify 1).", text)
	page = b.post("/dead/requeue", url.Values{"queue": {"notify"}, "reason": {"moved"}})
	text, _ = flash(t, page)
	require.True(t, strings.HasPrefix(text, "✅ Requeued 9 dead letters (notify 9)."), text)
	_, page = b.get("/dead?queue=notify")
	require.Equal(t, 20, rows(page), "the 20 gone letters are left")
	require.NotContains(t, page, "moved")
	st, err := in.Stats(ctx, tgjob.QueueNotify, 0)
	require.NoError(t, err)
	require.Equal(t, 9, st.Pending, "the requeued letters are back on their (parked) lane")
	_, audit := b.get("/audit")
	require.Contains(t, audit, "<td>console</td><td>dead letters purged</td><td>1 (notify 1)</td>")
	require.Contains(t, audit, "<td>console</td><td>dead letters requeued</td><td>9 (notify 9)</td>")
	resp, _ := b.get("/dead?queue=nope")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// TestSessionCookieIsSecureOverTLS: served over TLS, the session cookie is
// Secure.
func TestSessionCookieIsSecureOverTLS(t *testing.T) {
	t.Parallel()
	e := start(t)
	con, err := console.New(e.app.Admin(), console.Config{Token: token})
	require.NoError(t, err)
	srv := httptest.NewTLSServer(con.Handler())
	defer srv.Close()
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.PostForm(srv.URL+"/login", url.Values{"token": {token}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	require.True(t, resp.Cookies()[0].Secure)
	require.True(t, resp.Cookies()[0].HttpOnly)
}

// TestQueuesPageReadsABoundedNumberOfLanes: with more lanes than
// admin.LaneScan in a queue the Queues page still answers, from the first
// LaneScan lanes read, and says so (the store is paused so the lanes stay).
func TestQueuesPageReadsABoundedNumberOfLanes(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	m := lanes.NewMinter()
	items := make([]lanes.Item, 0, admin.LaneScan+100)
	for i := range admin.LaneScan + 100 {
		items = append(items, lanes.Item{Group: strconv.Itoa(-100_000 - i), ID: m.New(), Payload: []byte(`{"v":1,"chat":1,"text":"x"}`)})
	}
	in := e.app.Store().Inspector()
	require.NoError(t, in.Pause(ctx, time.Hour))
	_, err := e.app.Store().Enqueue(ctx, tgjob.QueueNotify, items)
	require.NoError(t, err)
	_, page := b.get("/queues")
	require.Contains(t, page, fmt.Sprintf("The deepest of the first %d lanes read.", admin.LaneScan))
	require.Contains(t, page, fmt.Sprintf("%d pending", admin.LaneScan+100))
	require.NoError(t, in.Resume(ctx))
}

// A lane's in-flight cap reads "none" on the Queues and Chat pages when
// it is the default (lanes.DefaultLaneLimit: every lane of the bot, whose
// queues set no cap), not 1000000 next to the depth, where it read as a
// depth limit; a cap set on the lane shows as its number.
func TestALaneLimitReadsNoneAtTheDefaultAndItsNumberWhenSet(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	in := e.app.Store().Inspector()
	require.NoError(t, in.Pause(ctx, time.Hour)) // the lanes keep their jobs
	t.Cleanup(func() { _ = in.Resume(context.Background()) })
	m := lanes.NewMinter()
	for _, tc := range []struct {
		chat  int64
		limit int // set on the lane; 0: the default
		want  string
	}{
		{-100_201, 0, "none"},
		{-100_202, 3, "3"},
		{-100_203, lanes.DefaultLaneLimit - 1, strconv.Itoa(lanes.DefaultLaneLimit - 1)},
	} {
		t.Run(tc.want, func(t *testing.T) {
			g := tgjob.Group(tc.chat)
			_, err := e.app.Store().Enqueue(ctx, tgjob.QueueNotify, []lanes.Item{{Group: g, ID: m.New(), Payload: []byte(`{"v":1,"chat":1,"text":"x"}`)}})
			require.NoError(t, err)
			if tc.limit > 0 {
				require.NoError(t, in.SetLaneLimit(ctx, tgjob.QueueNotify, g, tc.limit))
			}
			_, page := b.get("/queues")
			require.Regexp(t, `<tr><td><a href="/chat\?id=`+g+`">`+g+`</a></td><td><a [^>]*>1</a></td><td>1</td><td>0</td><td>`+tc.want+`</td>`, page)
			_, page = b.get("/chat?id=" + g)
			require.Regexp(t, `<tr><td>notify</td><td>1</td><td>0</td><td>`+tc.want+`</td>`, page)
			require.NotContains(t, page, "1000000")
		})
	}
}

// TestAuditPagesThroughTheLog: the Audit page shows the 50 newest entries
// (as /audit's log) and an older link to the next 50, until the oldest; a
// malformed page id is refused.
func TestAuditPagesThroughTheLog(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	for i := range 60 {
		_, err := e.app.Admin().SetWeight(ctx, admin.WhoConsole, strconv.Itoa(1000+i), "2")
		require.NoError(t, err)
	}
	rows := func(page string) int { return strings.Count(page, "<td>console</td>") }
	_, page := b.get("/audit")
	require.Equal(t, 50, rows(page))
	require.Contains(t, page, "chat 1059: weight 2 (was 1)", "the newest first")
	older := regexp.MustCompile(`href="/audit\?before=([0-9-]+)" id="audit-older"`).FindStringSubmatch(page)
	require.NotNil(t, older, "a link to older entries")
	_, page = b.get("/audit?before=" + older[1])
	require.Equal(t, 10, rows(page), "the 10 oldest")
	require.Contains(t, page, "chat 1000: weight 2 (was 1)")
	require.NotContains(t, page, `id="audit-older"`, "the last page")
	resp, _ := b.get("/audit?before=x")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

var (
	previewRE = regexp.MustCompile(`(?s)<pre id="preview-text">(.*?)</pre>`)
	tokenRE   = regexp.MustCompile(`name="token" value="([^"]+)"`)
	confirmRE = regexp.MustCompile(`<button id="confirm">(.*?)</button>`)
)

// TestComposePaidUpToTheStarsBalance: with paid broadcasts on, the
// Broadcasts form offers paid; a paid composition's preview shows the
// Telegram paid preview's cost and the bot's Stars balance and, the
// balance covering 2 of 3 copies, confirms "💫 2 paid, rest free"; a
// confirmation without the CSRF token is refused and starts nothing; with
// it, 2 copies go paid and 1 free, the balance spent on exactly those,
// audited as console with the Telegram detail. With no Stars left a paid
// composition has no Confirm.
func TestComposePaidUpToTheStarsBalance(t *testing.T) {
	t.Parallel()
	e := start(t, "TELEGRAM_PAID_BROADCAST_RATE=1000")
	b := e.browser()
	b.signIn()
	e.knownChats(81_000, 3)
	e.emu.SetStarBalance(2)
	_, page := b.get("/broadcasts")
	require.Contains(t, page, `<select name="mode" id="compose-mode">`)
	compose := func(form url.Values) string {
		t.Helper()
		form.Set("csrf", b.csrf())
		resp, page := b.do(http.MethodPost, "/broadcasts/compose", form)
		require.Equal(t, http.StatusOK, resp.StatusCode, "the preview is shown at once")
		return page
	}
	page = compose(url.Values{"text": {"💫 paid news"}, "mode": {"paid"}})
	pv := previewRE.FindStringSubmatch(page)
	require.NotNil(t, pv, page)
	text := htmlUnescape(pv[1])
	require.Contains(t, text, "• 💫 Send paid: in about 1 s at 1000 messages/s, for about 0.3 Telegram Stars (3 copies × 0.1 Star, from the bot's balance).")
	require.Contains(t, text, "\n"+broadcast.BalanceText(2, 3)+"\n")
	require.Equal(t, []string{`<button id="confirm">💫 2 paid, rest free</button>`}, confirmRE.FindAllString(page, -1))
	tok := tokenRE.FindStringSubmatch(page)
	require.NotNil(t, tok)

	resp, _ := b.do(http.MethodPost, "/broadcasts/confirm", url.Values{"token": {tok[1]}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "no CSRF token")
	es, err := e.app.Admin().Audit(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, es, "nothing started")

	answer, ok := flash(t, b.post("/broadcasts/confirm", url.Values{"token": {tok[1]}}))
	require.True(t, ok, answer)
	m := regexp.MustCompile(`^📣 Sending to 3 chats \(paid up to the balance, then free\): broadcast (bc_\w+)\.$`).FindStringSubmatch(answer)
	require.NotNil(t, m, answer)
	paid, free := 0, 0
	require.Eventually(t, func() bool {
		paid, free = 0, 0
		for _, m := range e.emu.AllMessages() {
			switch {
			case m.Text == "💫 paid news" && m.Paid:
				paid++
			case m.Text == "💫 paid news":
				free++
			}
		}
		return paid+free == 3
	}, wait, 20*time.Millisecond)
	require.Equal(t, []int{2, 1}, []int{paid, free}, "as many paid as the balance covered, the rest free")
	require.Zero(t, e.emu.StarBalance())
	es, err = e.app.Admin().Audit(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, []string{"console", broadcast.ActionSent, m[1] + " to 3 chats, paid up to 2 copies then free (about 0.2 Stars)"},
		[]string{es[0].Actor(), es[0].Action, es[0].Detail})

	page = compose(url.Values{"text": {"💫 more"}, "mode": {"paid"}})
	require.Contains(t, htmlUnescape(previewRE.FindStringSubmatch(page)[1]), broadcast.BalanceText(0, 3))
	require.NotContains(t, page, `id="confirm"`)
	require.Contains(t, page, `id="no-confirm"`)
	page = compose(url.Values{"text": {"💫 more"}, "mode": {"free"}, "over": {"30s"}})
	answer, ok = flash(t, page)
	require.False(t, ok)
	require.Equal(t, `❌ "over" 30s: want 1 minute to 7 days.`, answer)
	require.Contains(t, page, `<textarea name="text" id="compose-text" rows="4" required>💫 more</textarea>`, "the form kept as filled")
}

// composePreview composes form (free or paid) on b's Broadcasts page and
// returns the page with its preview. A 503 (the store slower than the
// console's StoreTimeout for a moment: a test's 200 ms on a busy CI host,
// where the preview's reads took longer) is tried again until wait, as
// its Retry-After asks; any other answer but 200 fails t.
func composePreview(t *testing.T, b *browser, form url.Values) string {
	t.Helper()
	form.Set("csrf", b.csrf())
	deadline := time.Now().Add(wait)
	resp, page := b.do(http.MethodPost, "/broadcasts/compose", form)
	for resp.StatusCode == http.StatusServiceUnavailable && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		resp, page = b.do(http.MethodPost, "/broadcasts/compose", form)
	}
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	require.NotNil(t, previewRE.FindStringSubmatch(page), page)
	return page
}

// A composed preview's Cancel is a form (POST, CSRF token) that cancels
// that preview as the Telegram preview's Cancel does: back to the
// Broadcasts page saying it was cancelled, without the preview; a later
// confirmation of its token (browser Back then Send, a second tab) answers
// that it was cancelled and starts nothing, and a second Cancel says it
// was cancelled before. Nothing is sent or audited.
func TestCancelThenConfirmStartsNothingAndSaysWhy(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	e.knownChats(82_000, 2)
	page := composePreview(t, b, url.Values{"text": {"📣 maybe not"}, "mode": {"free"}})
	tok := tokenRE.FindStringSubmatch(page)
	require.NotNil(t, tok, page)
	require.Regexp(t, `<form method="post" action="/broadcasts/cancel" id="cancel-form" class="inline"><input type="hidden" name="csrf" value="[^"]+"><input type="hidden" name="token" value="`+tok[1]+`"><button id="preview-cancel">Cancel</button></form>`, page)

	page = b.post("/broadcasts/cancel", url.Values{"token": {tok[1]}})
	answer, ok := flash(t, page)
	require.True(t, ok, answer)
	require.Equal(t, broadcast.ComposedCancelled, answer)
	require.NotContains(t, page, `id="preview"`, "cancelled: the page without the preview")

	answer, ok = flash(t, b.post("/broadcasts/confirm", url.Values{"token": {tok[1]}}))
	require.False(t, ok, answer)
	require.Equal(t, broadcast.ToastWasCancelled, answer, "the confirmation of a cancelled preview says why it starts nothing")
	answer, ok = flash(t, b.post("/broadcasts/cancel", url.Values{"token": {tok[1]}}))
	require.True(t, ok, answer)
	require.Equal(t, broadcast.ToastWasCancelled, answer, "cancelled once")

	es, err := e.app.Admin().Audit(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, es, "nothing started (a start is audited)")
	bs, err := e.app.Admin().Broadcasts(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, bs)
	for _, m := range e.emu.AllMessages() {
		require.NotEqual(t, "📣 maybe not", m.Text, "nothing sent")
	}
}

// A preview's Cancel without the session's CSRF token (or with another
// session's) is refused (403) and cancels nothing: the preview is still
// confirmed, once, by its own session.
func TestCancelOfAPreviewNeedsTheCSRFToken(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	other := e.browser()
	other.signIn()
	e.knownChats(83_000, 2)
	tok := tokenRE.FindStringSubmatch(composePreview(t, b, url.Values{"text": {"📣 still wanted"}, "mode": {"free"}}))
	require.NotNil(t, tok)
	for _, form := range []url.Values{
		{"token": {tok[1]}},
		{"token": {tok[1]}, "csrf": {""}},
		{"token": {tok[1]}, "csrf": {other.csrf()}},
	} {
		resp, body := b.do(http.MethodPost, "/broadcasts/cancel", form)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
		require.Contains(t, body, "CSRF")
	}
	resp, _ := b.get("/broadcasts/cancel?token=" + tok[1])
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "no cancel on GET")
	answer, ok := flash(t, b.post("/broadcasts/confirm", url.Values{"token": {tok[1]}}))
	require.True(t, ok, answer)
	require.Regexp(t, `^📣 Sending to 2 chats: broadcast bc_\w+\.$`, answer, "not cancelled: confirmed")
}

// A composed preview's text asks for what the page offers: the free one
// "Send or Cancel" (its Confirm is ✅ Send); a paid one, whose page offers
// one Confirm (the paid send, or none when the Stars balance covers no
// copy), not the Telegram paid preview's "Choose, or Cancel" among two
// buttons, but that Confirm, or, with none, that it cannot be sent paid.
func TestComposedPreviewAsksForTheConfirmItOffers(t *testing.T) {
	t.Parallel()
	e := start(t, "TELEGRAM_PAID_BROADCAST_RATE=1000")
	b := e.browser()
	b.signIn()
	e.knownChats(84_000, 2)
	for _, tc := range []struct {
		mode    string
		balance int64
		asks    string
		confirm []string
	}{
		{"free", 0, "Send or Cancel within 10 minutes.", []string{`<button id="confirm">✅ Send</button>`}},
		{"paid", 5, "Confirm 💫 Send paid, or Cancel, within 10 minutes (to send it free, choose free and preview again).",
			[]string{`<button id="confirm">💫 Send paid</button>`}},
		{"paid", 1, "Confirm 💫 1 paid, rest free, or Cancel, within 10 minutes (to send it free, choose free and preview again).",
			[]string{`<button id="confirm">💫 1 paid, rest free</button>`}},
		{"paid", 0, "It cannot be sent paid: Cancel, or choose free and preview again.", nil},
	} {
		e.emu.SetStarBalance(tc.balance)
		page := composePreview(t, b, url.Values{"text": {"📣 maybe"}, "mode": {tc.mode}})
		text := htmlUnescape(previewRE.FindStringSubmatch(page)[1])
		require.True(t, strings.HasSuffix(text, tc.asks), "%s, balance %d: %q", tc.mode, tc.balance, text)
		require.NotContains(t, text, "Choose", "%s, balance %d: one Confirm at most", tc.mode, tc.balance)
		require.Equal(t, tc.confirm, confirmRE.FindAllString(page, -1), "%s, balance %d", tc.mode, tc.balance)
		require.Contains(t, page, `id="preview-cancel"`, "%s, balance %d: the Cancel it names", tc.mode, tc.balance)
	}
}

// A composition whose mode is neither free nor paid (a hand-made POST, a
// stale form) is refused 400 saying what the mode must be: nothing is
// previewed (no preview stored, none shown), so nothing can be confirmed.
func TestAComposedModeOtherThanFreeOrPaidIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, "TELEGRAM_PAID_BROADCAST_RATE=1000")
	b := e.browser()
	b.signIn()
	e.knownChats(85_000, 2)
	for _, mode := range []string{"bogus", "PAID", "free "} {
		resp, body := b.do(http.MethodPost, "/broadcasts/compose", url.Values{"text": {"📣 which way"}, "mode": {mode}, "csrf": {b.csrf()}})
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, mode)
		require.Equal(t, fmt.Sprintf("❌ mode %q: want free or paid. Nothing was previewed.\n", mode), body, mode)
	}
	keys, err := e.c.Do(context.Background(), e.c.B().Keys().Pattern("{"+e.tag+"}:app:bcp:*").Build()).AsStrSlice()
	require.NoError(t, err)
	require.Empty(t, keys, "no preview stored")
	page := composePreview(t, b, url.Values{"text": {"📣 which way"}, "mode": {"free"}})
	require.Equal(t, []string{`<button id="confirm">✅ Send</button>`}, confirmRE.FindAllString(page, -1), "free is still free")
}

// A scheduled paid broadcast (nothing spent yet) is listed, on the
// Broadcasts page and its own, with the cost its preview estimated, its
// copies (up to its paid cap) × 0.1 Star, not "paid (0.0 Stars)", which
// reads as free.
func TestAScheduledPaidBroadcastShowsItsEstimatedCost(t *testing.T) {
	t.Parallel()
	e := start(t, "TELEGRAM_PAID_BROADCAST_RATE=1000")
	b := e.browser()
	b.signIn()
	e.knownChats(86_000, 2)
	for _, tc := range []struct {
		balance int64
		mode    string
	}{
		{10, "paid (about 0.2 Stars estimated: 2 copies × 0.1 Star)"},
		{1, "paid (about 0.1 Stars estimated: 1 copy × 0.1 Star)"}, // paid up to the balance: 1 copy
	} {
		e.emu.SetStarBalance(tc.balance)
		tok := tokenRE.FindStringSubmatch(composePreview(t, b, url.Values{"text": {"💫 later"}, "mode": {"paid"}, "in": {"1h"}}))
		require.NotNil(t, tok)
		answer, ok := flash(t, b.post("/broadcasts/confirm", url.Values{"token": {tok[1]}}))
		require.True(t, ok, answer)
		id := broadcastIDRE.FindStringSubmatch(answer)
		require.NotNil(t, id, answer)
		_, list := b.get("/broadcasts")
		require.Regexp(t, `<div class="bc-head"><a href="/broadcast\?id=`+id[1]+`"><code>`+id[1]+`</code></a> · sent [^<]* · `+regexp.QuoteMeta(tc.mode)+`</div>`, htmlUnescape(list))
		_, page := b.get("/broadcast?id=" + id[1])
		require.Contains(t, htmlUnescape(page), `<td id="bc-mode">`+tc.mode+`</td>`)
		require.NotContains(t, list+page, "0.0 Stars")
	}
}

// One preview to confirm, the newest, in the console as in Telegram: a
// second composition in the same session (another tab, the browser's
// Back) replaces the first, whose Confirm then answers that it was
// replaced and starts nothing; another session's preview is its own.
// In Telegram a second /broadcast replaces the admin's first preview
// alike: its Send answers so (toast), its message says so, nothing of it
// is sent. Each flow starts exactly the newest.
func TestANewPreviewReplacesTheEarlierUnconfirmedOne(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	other := e.browser()
	other.signIn()
	chats := e.knownChats(87_000, 2)
	token := func(page string) string {
		t.Helper()
		m := tokenRE.FindStringSubmatch(page)
		require.NotNil(t, m, page)
		return m[1]
	}
	tab1 := token(composePreview(t, b, url.Values{"text": {"📣 tab one"}, "mode": {"free"}}))
	theirs := token(composePreview(t, other, url.Values{"text": {"📣 theirs"}, "mode": {"free"}}))
	tab2 := token(composePreview(t, b, url.Values{"text": {"📣 tab two"}, "mode": {"free"}}))
	answer, ok := flash(t, b.post("/broadcasts/confirm", url.Values{"token": {tab1}}))
	require.False(t, ok, answer)
	require.Equal(t, broadcast.ToastReplaced, answer, "the earlier preview of the session")
	for _, c := range []struct {
		b   *browser
		tok string
	}{{b, tab2}, {other, theirs}} {
		answer, ok = flash(t, c.b.post("/broadcasts/confirm", url.Values{"token": {c.tok}}))
		require.True(t, ok, answer)
		require.Regexp(t, `^📣 Sending to 2 chats: broadcast bc_\w+\.$`, answer)
	}

	tap := func(m tgemu.Message, label string) string { // the toast
		t.Helper()
		var kb models.InlineKeyboardMarkup
		require.NoError(t, json.Unmarshal([]byte(m.ReplyMarkup), &kb))
		for _, btn := range kb.InlineKeyboard[0] {
			if btn.Text != label {
				continue
			}
			u, err := e.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: m.ID, From: models.User{ID: adminID, FirstName: "Admin"}, Data: btn.CallbackData})
			require.NoError(t, err)
			var toast string
			require.Eventually(t, func() bool {
				for _, a := range e.emu.CallbackAnswers() {
					if a.QueryID == u.CallbackQuery.ID {
						toast = a.Text
						return true
					}
				}
				return false
			}, wait, 20*time.Millisecond)
			return toast
		}
		t.Fatalf("no %q button: %s", label, m.ReplyMarkup)
		return ""
	}
	require.True(t, strings.HasPrefix(e.ask("/broadcast 📣 chat one"), "📣 Broadcast preview."))
	msgs := e.emu.Messages(adminID)
	one := msgs[len(msgs)-1]
	require.True(t, strings.HasPrefix(e.ask("/broadcast 📣 chat two"), "📣 Broadcast preview."))
	msgs = e.emu.Messages(adminID)
	two := msgs[len(msgs)-1]
	require.Equal(t, broadcast.ToastReplaced, tap(one, "✅ Send"), "the admin's earlier preview")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	edited, err := e.emu.WaitForEdits(ctx, adminID, one.ID, 1)
	require.NoError(t, err)
	require.Equal(t, broadcast.ToastReplaced, edited.CurrentText(), "its message says so")
	require.NotContains(t, tap(two, "✅ Send"), "replaced", "the newest is sent")

	want := map[string]int{"📣 tab two": 2, "📣 theirs": 2, "📣 chat two": 2}
	got := map[string]int{}
	require.Eventually(t, func() bool {
		got = map[string]int{}
		for _, c := range chats {
			for _, m := range e.emu.Messages(c) {
				if strings.HasPrefix(m.Text, "📣") {
					got[m.Text]++
				}
			}
		}
		return len(got) >= len(want) && got["📣 chat two"] == 2 && got["📣 tab two"] == 2 && got["📣 theirs"] == 2
	}, wait, 20*time.Millisecond, "the newest previews sent")
	require.Equal(t, want, got, "nothing of a replaced preview sent")
	es, err := e.app.Admin().Audit(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, es, 3, "three broadcasts started")
}

// The Processes page lists every live process of the deployment from
// Valkey, not only the one serving the console: this process (its roles,
// version) and another process's heartbeat; a process that stopped is gone.
func TestProcessesPageListsTheWholeDeployment(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	other := procs.Process{ID: "elsewhere:7:0007", Roles: []string{"worker"}, Version: "v9.9.9-other", Started: time.Now(),
		Figures: map[string]float64{"messages sent": 12}}
	reg := procs.New(e.c, e.tag)
	_, err := reg.Beat(ctx, other, time.Minute)
	require.NoError(t, err)
	var page string
	require.Eventually(t, func() bool {
		_, page = b.get("/processes")
		return strings.Count(page, "<tr data-id=") == 2
	}, wait, 20*time.Millisecond, "this process and the other")
	require.Contains(t, page, `<td class="roles">poller, handler, worker`)
	require.Contains(t, page, `<td class="version">`+html.EscapeString(version.String())+`</td>`)
	require.Contains(t, page, `<tr data-id="elsewhere:7:0007">`)
	require.Contains(t, page, `<td class="version">v9.9.9-other</td>`)
	require.Contains(t, page, "messages sent 12")
	require.NoError(t, reg.Forget(ctx, other.ID))
	_, page = b.get("/processes")
	require.Equal(t, 1, strings.Count(page, "<tr data-id="), "the stopped process is gone")
}

// A composed text over the console's form limit (64 KiB) is refused with
// 413 and a reason saying the limit and what to do, not a bare "bad form";
// nothing is previewed or sent.
func TestAFormOverTheLimitIsRefusedWithItsReason(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	resp, body := b.do(http.MethodPost, "/broadcasts/compose", url.Values{"csrf": {b.csrf()}, "text": {strings.Repeat("a", 70<<10)}, "mode": {"free"}})
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Contains(t, body, "form too large: a form is at most 64 KiB")
	require.Contains(t, body, "nothing was changed")
	_, page := b.get("/broadcasts")
	require.NotContains(t, page, "aaaaaaaa", "nothing previewed")
}

// TestQueuesPageShowsEachSendBudgetAndWhyItLastWentDown: the Queues page
// lists the send budgets as /lanes does, each at its rate now of its
// ceiling: with replies apart (the default; this env's bulk rate is 1,000)
// the total over replies and bulk at its start, probed; after 429s from several chats lowered the
// bulk budget, when, why, from what and the hold's cap.
func TestQueuesPageShowsEachSendBudgetAndWhyItLastWentDown(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	_, page := b.get("/queues")
	require.Contains(t, page, "Messages per second (a 1.01 s window, for the server clock&#39;s rounding). The configured rate is a ceiling",
		"the budgets' window said per second, not per 1.01s")
	require.Regexp(t, `<tr id="budget-global"><td>global</td><td>1000</td><td>1100</td><td>0</td>\s*<td>replies and bulk together: started at 1000, raised while messages wait, a 429 takes a raise back</td>\s*<td>never</td></tr>`, page)
	require.Regexp(t, `<tr id="budget-bulk"><td>bulk</td><td>1000</td><td>1000</td><td>0</td>\s*<td>halved on 429s from several chats while it is full, never below what it proved, climbs back by itself</td>\s*<td>never</td></tr>`, page)
	require.Contains(t, page, `<tr id="budget-reply"><td>reply</td><td>100</td><td>100</td>`)

	lowered, _, err := e.app.Store().Inspector().LowerBudget(ctx, tgjob.QueueNotify, "429 from several chats")
	require.NoError(t, err)
	require.True(t, lowered)
	_, page = b.get("/queues")
	require.Regexp(t, `<tr id="budget-bulk"><td>bulk</td><td>500</td><td>1000</td><td>0</td>\s*<td>[^<]*</td>\s*<td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: 429 from several chats, from 1000; at most 750 until [^;]+ UTC; 1 in all</td></tr>`, page)
	require.Regexp(t, `<tr id="budget-global"><td>global</td><td>500</td><td>1100</td>`, page, "the total over replies and bulk halved too")
}
