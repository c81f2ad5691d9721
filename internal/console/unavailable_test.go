package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/console"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// unavailableReqs are requests of every kind that read or change the
// store: pages, the JSON of the live refresh, changes (each POST with the
// session's CSRF token added by requireUnavailable).
var unavailableReqs = []struct {
	method, path string
	form         url.Values
}{
	{http.MethodGet, "/queues", nil},
	{http.MethodGet, "/broadcasts", nil},
	{http.MethodGet, "/chat?id=4242", nil},
	{http.MethodGet, "/audit", nil},
	{http.MethodGet, "/dead", nil},
	{http.MethodGet, "/weights", nil},
	{http.MethodGet, "/processes", nil},
	{http.MethodGet, "/api/broadcasts", nil},
	{http.MethodGet, "/api/history", nil},
	{http.MethodPost, "/chat/weight", url.Values{"chat": {"4242"}, "weight": {"7"}}},
	{http.MethodPost, "/broadcasts/compose", url.Values{"text": {"📣 not now"}, "mode": {"free"}}},
	{http.MethodPost, "/broadcasts/cancel", nil}, // the token: the preview composed before
}

// requireUnavailable sends every unavailableReqs (POSTs with csrf and, for
// the cancel, the preview's token) and requires each answered 503 with
// Retry-After and a short answer saying the store is briefly unavailable
// (JSON for /api/ paths, and for a change that it was not confirmed),
// naming a cause matching cause (a lanes.UnavailableError's, as a
// regular expression); the Overview's JSON, read from memory, still
// answers 200.
func requireUnavailable(t *testing.T, b *browser, csrf, previewToken, cause string) {
	t.Helper()
	for _, rq := range unavailableReqs {
		var form url.Values
		if rq.method == http.MethodPost {
			form = url.Values{"csrf": {csrf}, "token": {previewToken}}
			for k, v := range rq.form {
				form[k] = v
			}
		}
		resp, body := b.do(rq.method, rq.path, form)
		name := rq.method + " " + rq.path
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %s", name, body)
		require.Equal(t, "5", resp.Header.Get("Retry-After"), name)
		msg := body
		if strings.HasPrefix(rq.path, "/api/") {
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"), name)
			var j struct {
				Error      string `json:"error"`
				RetryAfter int    `json:"retry_after_s"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &j), name)
			require.Equal(t, 5, j.RetryAfter, name)
			msg = j.Error
		} else {
			require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"), name)
		}
		require.Regexp(t, `^The bot's store \(Valkey\) is briefly unavailable \((`+cause+`)\): this page will work again in a few seconds; try again in 5 s\.`, msg, name)
		if rq.method == http.MethodPost {
			require.Contains(t, msg, "The change was not confirmed", name)
		} else {
			require.NotContains(t, msg, "change", name)
		}
	}
	resp, _ := b.get("/api/overview")
	require.Equal(t, http.StatusOK, resp.StatusCode, "the Overview's JSON is read from memory")
}

// storeLogs counts the console's log lines about a failed request: WARN
// "briefly unavailable" and ERROR "page failed" or "change failed".
func storeLogs(e *env) (warn, errs int) {
	logs := e.logs.String()
	return strings.Count(logs, "console: the bot's store is briefly unavailable"),
		strings.Count(logs, "console: page failed") + strings.Count(logs, "console: change failed")
}

// While the store is busy (a script running past busy-reply-threshold:
// BUSY), every page, its JSON and every change answers 503 Service
// Unavailable with Retry-After and says the store is briefly unavailable,
// logged at WARN (not ERROR); the changes change nothing (the weight is
// the one before, the preview cancelled by the refused Cancel is still
// there to cancel); and once the script ends, the same pages answer 200
// and the changes work.
func TestABusyStoreAnswers503WithRetryAfterAndChangesNothing(t *testing.T) {
	t.Parallel()
	vs := valkeytest.Start(t, valkeytest.Options{})
	e := startOn(t, vs, console.Config{})
	b := e.browser()
	b.signIn()
	e.knownChats(4242, 1)
	page := composePreview(t, b, url.Values{"text": {"📣 maybe later"}, "mode": {"free"}})
	tok := tokenRE.FindStringSubmatch(page)
	require.NotNil(t, tok, page)
	csrf := b.csrf()
	ctx := context.Background()
	before, err := e.app.Admin().Chat(ctx, 4242)
	require.NoError(t, err)

	end := valkeytest.Busy(t, vs, 50*time.Millisecond)
	requireUnavailable(t, b, csrf, tok[1], "BUSY")
	end()

	warn, errs := storeLogs(e)
	require.Equal(t, len(unavailableReqs), warn, "each 503 logged at WARN")
	require.Zero(t, errs, "none at ERROR")
	after, err := e.app.Admin().Chat(ctx, 4242)
	require.NoError(t, err)
	require.Equal(t, before.Weight, after.Weight, "the weight set while busy was not")
	answer, ok := flash(t, b.post("/broadcasts/cancel", url.Values{"token": {tok[1]}}))
	require.True(t, ok, answer)
	require.Equal(t, broadcast.ComposedCancelled, answer, "the preview was not cancelled while busy: cancelled now")
	answer, ok = flash(t, b.post("/chat/weight", url.Values{"chat": {"4242"}, "weight": {"7"}}))
	require.True(t, ok, answer)
	require.Contains(t, answer, "weight set to 7")
	for _, rq := range unavailableReqs {
		if rq.method == http.MethodGet {
			resp, body := b.get(rq.path)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s once the script ended: %s", rq.path, body)
		}
	}
}

// A store that is gone (its server killed: connections dropped, then
// refused) or that does not answer within Config.StoreTimeout (a script
// running, busy-reply-threshold not reached yet) is answered as a busy
// one: 503 with Retry-After, naming the cause. Once the server is back,
// the pages answer 200.
func TestAGoneOrSilentStoreAnswers503(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cause string
		fault func(t *testing.T, vs *valkeytest.Server) (undo func())
	}{
		// Mostly refused; a call may meet its connection closed as the
		// server dies, its write on the dead connection answered by a
		// reset (broken pipe: busy CI), a dial cut short by the deadline
		// (i/o timeout), or valkey-go's retries of a read reaching the
		// deadline.
		{"killed", "connection refused|connection closed|connection reset|timeout|deadline", func(t *testing.T, vs *valkeytest.Server) func() {
			vs.Kill()
			return func() { vs.Restart(t) }
		}},
		{"silent", "deadline", func(t *testing.T, vs *valkeytest.Server) func() {
			return valkeytest.Busy(t, vs, 8*time.Second) // far past StoreTimeout: no answer before it
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs := valkeytest.Start(t, valkeytest.Options{})
			e := startOn(t, vs, console.Config{StoreTimeout: 200 * time.Millisecond})
			b := e.browser()
			b.signIn()
			e.knownChats(4242, 1)
			page := composePreview(t, b, url.Values{"text": {"📣 maybe later"}, "mode": {"free"}, "in": {"1h"}})
			tok := tokenRE.FindStringSubmatch(page)
			require.NotNil(t, tok, page)
			csrf := b.csrf()
			undo := tc.fault(t, vs)
			requireUnavailable(t, b, csrf, tok[1], tc.cause)
			undo()
			_, errs := storeLogs(e)
			require.Zero(t, errs, "nothing logged at ERROR")
			require.Eventually(t, func() bool {
				resp, _ := b.get("/audit")
				return resp.StatusCode == http.StatusOK
			}, wait, 50*time.Millisecond, "the pages answer again once the server is back")
		})
	}
}

// A client that goes away while its page waits on the store (a tab
// closed during a BUSY script) is nobody's fault: the request is logged
// at INFO and answered 499, nothing at WARN or ERROR (it was a 500 logged
// at ERROR, "context canceled": a trial's finding).
func TestAClientGoneBeforeTheStoreAnsweredIsNotAnError(t *testing.T) {
	t.Parallel()
	vs := valkeytest.Start(t, valkeytest.Options{})
	e := startOn(t, vs, console.Config{StoreTimeout: 8 * time.Second})
	b := e.browser()
	b.signIn()
	undo := valkeytest.Busy(t, vs, 8*time.Second) // no answer, and no BUSY, before the client leaves
	defer undo()
	for _, path := range []string{"/queues", "/api/history", "/audit"} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := b.http.Do(b.request(http.MethodGet, path, nil).WithContext(ctx))
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "%s: the client gave up", path)
	}
	require.Eventually(t, func() bool {
		return strings.Count(e.logs.String(), "console: the client went away before the answer") == 3
	}, wait, 20*time.Millisecond, "each request logged once at INFO")
	warn, errs := storeLogs(e)
	require.Zero(t, warn, "nothing logged at WARN")
	require.Zero(t, errs, "nothing logged at ERROR")
	require.NotContains(t, e.logs.String(), "level=ERROR")
}

// A store error that is not the store briefly unavailable (a key of the
// wrong type: the audit stream made a string) is a fault of the bot's
// data, not of the moment: 500, logged at ERROR, no Retry-After.
func TestAStoreErrorThatIsNotPassingStays500(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	require.NoError(t, e.c.Do(ctx, e.c.B().Set().Key(admin.NewKeys(e.tag).Audit()).Value("not a stream").Build()).Error())
	resp, body := b.get("/audit")
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, body)
	require.Empty(t, resp.Header.Get("Retry-After"))
	require.Equal(t, "the console could not read the bot's state: admin: audit: WRONGTYPE Operation against a key holding the wrong kind of value\n", body)
	warn, errs := storeLogs(e)
	require.Zero(t, warn)
	require.Equal(t, 1, errs, "logged at ERROR")
}
