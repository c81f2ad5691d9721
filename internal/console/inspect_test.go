package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestJobPageFindsAJobByIDAndShowsWhereItStands: a job searched by id is
// shown with its queue, lane, state (waiting, its place in its lane, the
// lane's park), attempts and payload (its text); the Jobs page lists its
// lane's pending jobs in send order, each linked to its Job page; a
// malformed id is refused with an answer on the page, a broadcast's id
// opens the broadcast's page, and an id no queue holds says so (404; a
// malformed id 400). No page shows the bot token (every answer is checked).
func TestJobPageFindsAJobByIDAndShowsWhereItStands(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	ctx := context.Background()
	const chat = 4343
	until, err := e.app.Store().Inspector().Park(ctx, tgjob.QueueNotify, tgjob.Group(chat), time.Hour)
	require.NoError(t, err)
	var ids []lanes.JobID
	for i := range 3 {
		got, err := e.app.Notifier().Notify(ctx, chat, notifier.Message{Text: "parked note " + strconv.Itoa(i), Class: notifier.Notification})
		require.NoError(t, err)
		ids = append(ids, got...)
	}
	require.Len(t, ids, 3)
	_, page := b.get("/job?id=" + string(ids[1]))
	require.Contains(t, page, `<section class="job" data-id="`+string(ids[1])+`">`)
	require.Contains(t, page, `<td class="job-queue">notify</td>`)
	require.Contains(t, page, `<a href="/chat?id=4343">4343</a>`)
	require.Contains(t, page, `<td class="job-state">waiting, 1 ahead of it in its lane; its lane is parked until `+until.UTC().Format(time.DateTime)+` UTC</td>`)
	require.Contains(t, page, `<td class="job-attempts">0 failed of 0 claims</td>`)
	require.Contains(t, page, `&#34;text&#34;: &#34;parked note 1&#34;`, "the payload, indented JSON")

	_, page = b.get("/jobs?queue=notify&lane=" + tgjob.Group(chat))
	var at []int
	for _, id := range ids {
		i := strings.Index(page, `<tr data-id="`+string(id)+`"><td><a href="/job?id=`+string(id)+`">`)
		require.GreaterOrEqual(t, i, 0, "listed and linked: %s", id)
		at = append(at, i)
	}
	require.IsIncreasing(t, at, "in send order")

	resp, page := b.get("/job?id=job_nope")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a malformed id")
	require.Contains(t, page, `<p class="flash bad" id="job-error">❌ &#34;job_nope&#34; is not a job id`, "answered on the page")
	bc := "bc_" + strings.Repeat("0", 26)
	resp, _ = b.get("/job?id=" + bc)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "a broadcast's id")
	require.Equal(t, "/broadcast?id="+bc, resp.Header.Get("Location"))
	unknown := "job_" + strings.Repeat("0", 26)
	resp, page = b.get("/job?id=" + unknown)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "an id no queue holds")
	require.Contains(t, page, `id="job-none"`)
	_, page = b.get("/jobs?queue=notify")
	require.Contains(t, page, "Retrying in notify")
	require.Contains(t, page, `id="jobs-none"`)
}

// TestWeightsPageListsEveryNonDefaultWeightAndSetsOne: the chats given a
// weight are listed with it, linked to their Chat page, and a weight set
// from the page is /weight's (its answer shown back on the Weights page,
// and audited as the console's); set to 1 the chat leaves the list.
func TestWeightsPageListsEveryNonDefaultWeightAndSetsOne(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	_, page := b.get("/weights")
	require.Contains(t, page, `id="no-weights"`)
	for i, chat := range []string{"501", "502", "-100503"} {
		require.True(t, strings.HasPrefix(e.ask("/weight "+chat+" "+strconv.Itoa(2+i)), "✅"))
	}
	_, page = b.get("/weights")
	for i, chat := range []string{"501", "502", "-100503"} {
		require.Contains(t, page, `<tr data-chat="`+chat+`"><td><a href="/chat?id=`+chat+`">`+chat+`</a></td>`)
		require.Contains(t, page, `<input type="hidden" name="chat" value="`+chat+`"><input type="hidden" name="back" value="weights">
<input name="weight" class="weight" value="`+strconv.Itoa(2+i)+`"`)
	}
	page = b.post("/chat/weight", url.Values{"chat": {"502"}, "weight": {"9"}, "back": {"weights"}})
	text, ok := flash(t, page)
	require.True(t, ok, text)
	require.Equal(t, "✅ Chat 502: weight set to 9 (was 3), for replies and notifications alike.", text)
	require.Contains(t, page, `<h1>Weights</h1>`, "back on the Weights page")
	require.Contains(t, page, `value="9"`)
	page = b.post("/chat/weight", url.Values{"chat": {"501"}, "weight": {"1"}, "back": {"weights"}})
	require.NotContains(t, page, `data-chat="501"`, "back to the default: not listed")
	_, audit := b.get("/audit")
	require.Contains(t, audit, "<td>console</td><td>weight set</td><td>chat 502: weight 9 (was 3)</td>")
}

// TestBroadcastPageShowsItsTextPlanCountsAndState: a broadcast's page,
// linked from the Broadcasts page, shows its text, its mode, its plan (a
// scheduled, spread one: its start and pace), its counts and its state;
// one delivered reads done with every copy sent.
func TestBroadcastPageShowsItsTextPlanCountsAndState(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	e.knownChats(90_000, 4)
	now := e.broadcast("📣 detail <b>now</b>")
	later := e.broadcast("in 1h over 2h 🕘 detail later")
	_, list := b.get("/broadcasts")
	for _, id := range []string{now, later} {
		require.Contains(t, list, `<a href="/broadcast?id=`+id+`"><code>`+id+`</code></a>`)
	}
	ctx := context.Background()
	require.Eventually(t, func() bool {
		p, err := e.app.Notifier().Progress(ctx, now)
		return err == nil && p.Done()
	}, wait, 20*time.Millisecond)
	_, page := b.get("/broadcast?id=" + now)
	require.Contains(t, page, `<pre class="bc-text">📣 detail &lt;b&gt;now&lt;/b&gt;</pre>`, "its text, escaped")
	require.Contains(t, page, `<td id="bc-state">done</td>`)
	require.Contains(t, page, `<td id="bc-mode">free</td>`)
	require.Regexp(t, `<td id="bc-plan">started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</td>`, page)
	require.Contains(t, page, `· 5 sent · 0 failed · 0 cancelled`, "the 4 chats and the admin")
	require.Contains(t, page, "by admin 9001")

	_, page = b.get("/broadcast?id=" + later)
	require.Contains(t, page, `<pre class="bc-text">🕘 detail later</pre>`)
	require.Contains(t, page, `<td id="bc-state">scheduled</td>`)
	require.Regexp(t, `<td id="bc-plan">starts \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(scheduled\) · spread at about `, page)
	require.Contains(t, page, `id="bc-stop"`, "a scheduled one can be stopped")
	stopped := b.post("/broadcasts/stop", url.Values{"id": {later}})
	text, ok := flash(t, stopped)
	require.True(t, ok, text)
	_, page = b.get("/broadcast?id=" + later)
	require.Regexp(t, `(?s)<table id="bc-timeline">.*<td>admin 9001</td><td>broadcast sent</td><td>`+later+` to 5 chats, from .*`+
		`<td>console</td><td>broadcast stopped</td><td>`+later+`: `, page, "its timeline, oldest first: sent by the admin, stopped from the console")
}

// A broadcast's page for one whose record is gone says which it is: expired
// when the audit log has it sent (200: its audit entry and timeline are
// shown); else no such broadcast, the page saying so: an id not shaped
// like one ("bc_zzz") never named one (400, as the Job page answers a
// malformed id), and nothing is known of one that is (404: never sent, or
// ended long ago).
func TestAnUnknownBroadcastsPageIs404AndSaysWhetherItExpiredOrNeverWas(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	e.knownChats(94_000, 1)
	gone := e.broadcast("in 1h soon gone")
	require.NoError(t, e.c.Do(context.Background(), e.c.B().Del().Key("{"+e.tag+"}:n:bc:"+gone).Build()).Error(), "its record expired")
	for _, tc := range []struct {
		id, state string
		code      int
	}{
		{gone, "expired (its record is kept a day after it ends)", http.StatusOK},
		{"bc_zzz", "no such broadcast: bc_zzz is not a broadcast id (bc_ and 26 letters and digits)", http.StatusBadRequest},
		{"bc_" + strings.Repeat("0", 26), "no such broadcast is known: never sent, or ended more than a day ago (its record is kept a day after it ends)", http.StatusNotFound},
	} {
		resp, page := b.get("/broadcast?id=" + tc.id)
		require.Equal(t, tc.code, resp.StatusCode, tc.id)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), tc.id)
		require.Contains(t, page, `<td id="bc-state">`+tc.state+`</td>`, tc.id)
	}
}

// A broadcast's page takes its id in any case, as /broadcast stop does
// (broadcast.CanonicalID): "bc_01abc…" or "BC_01ABC…" is sent (303) to
// the canonical id's page, which shows it; from the Job page too. A
// malformed id is answered 400 and a well-formed unknown one 404, the
// same answers whichever case it is typed in.
func TestABroadcastsPageTakesItsIDInAnyCase(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	e.knownChats(96_000, 1)
	id := e.broadcast("in 1h 🔡 any case")
	ulid := strings.TrimPrefix(id, "bc_")
	for _, typed := range []string{"bc_" + strings.ToLower(ulid), "BC_" + ulid, "Bc_" + strings.ToLower(ulid[:5]) + ulid[5:]} {
		for _, path := range []string{"/broadcast?id=", "/job?id="} {
			resp, _ := b.get(path + typed)
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, path+typed)
			require.Equal(t, "/broadcast?id="+id, resp.Header.Get("Location"), path+typed)
		}
	}
	resp, page := b.get("/broadcast?id=" + id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, page, `<td id="bc-state">scheduled</td>`)
	unknown := "bc_01" + strings.Repeat("a", 24)
	for _, tc := range []struct {
		id   string
		code int
	}{
		{"bc_zzz", http.StatusBadRequest},
		{"BC_ZZZ", http.StatusBadRequest},
		{"bc_" + ulid + "0", http.StatusBadRequest},
		{"bc_01" + strings.Repeat("u", 24), http.StatusBadRequest},
		{"nonsense", http.StatusBadRequest},
		{"bc_" + strings.ToUpper(unknown[3:]), http.StatusNotFound},
	} {
		resp, _ := b.get("/broadcast?id=" + url.QueryEscape(tc.id))
		require.Equal(t, tc.code, resp.StatusCode, tc.id)
	}
	resp, _ = b.get("/broadcast?id=" + unknown)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "well-formed in lower case: to its canonical page")
	require.Equal(t, "/broadcast?id=bc_"+strings.ToUpper(unknown[3:]), resp.Header.Get("Location"))
}

// While a broadcast is scheduled and none has finished, the Broadcasts
// page lists it under Scheduled and says Recent holds none finished yet
// (not "None in the audit log", which it is in); stopped
// before it started, it is listed under Recent as stopped (its plan "was
// to start … (stopped before it)", not "(scheduled)"), and its page
// reads stopped, 0% with 0 sent (not 100%).
func TestBroadcastsPageShowsAScheduledOneAndAStoppedOneAsTheyAre(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	e.knownChats(93_000, 2)
	id := e.broadcast("in 1h 🕘 soon")
	_, list := b.get("/broadcasts")
	require.Regexp(t, `(?s)<div id="scheduled">\s*<div class="bc" data-id="`+id+`">`, list, "listed as scheduled")
	require.Contains(t, list, `<p class="note" id="none-recent">None finished yet: the running and scheduled ones are above.</p>`)
	require.NotContains(t, list, "None in the audit log")

	text, ok := flash(t, b.post("/broadcasts/stop", url.Values{"id": {id}}))
	require.True(t, ok, text)
	_, list = b.get("/broadcasts")
	require.Contains(t, list, `<p class="note" id="none-scheduled">No broadcast scheduled.</p>`)
	require.Contains(t, list, `<p class="note" id="none-running">No broadcast running.</p>`)
	require.Regexp(t, `(?s)<tr><td><a href="/broadcast\?id=`+id+`"><code>`+id+`</code></a></td>[^\n]*<td>was to start \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(stopped before it\)</td>[^\n]*\n<td>stopped</td></tr>`, list)
	_, page := b.get("/broadcast?id=" + id)
	require.Contains(t, page, `<td id="bc-state">stopped</td>`)
	require.NotContains(t, page, "(scheduled)", "no longer scheduled")
	require.Contains(t, page, `<progress max="100" value="0"></progress> 0%`, "stopped before it started: nothing sent")
	require.Contains(t, page, ` · 0 sent · 0 failed · 3 cancelled`)
}

// A scheduled broadcast (not started yet) is listed under Scheduled, not
// Running, and a started one (here spread over an hour: still running)
// under Running, not Scheduled.
func TestAScheduledBroadcastIsListedUnderScheduledNotRunning(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	e.knownChats(95_000, 2)
	later := e.broadcast("in 1h 🕘 later")
	now := e.broadcast("over 1h ⏳ spread now")
	_, list := b.get("/broadcasts")
	scheduled := regexp.MustCompile(`(?s)<h2>Scheduled</h2>\s*<div id="scheduled">(.*?)</div>\s*<h2>Running</h2>`).FindStringSubmatch(list)
	require.NotNil(t, scheduled, "a Scheduled section before Running: %s", list)
	running := regexp.MustCompile(`(?s)<h2>Running</h2>\s*<div id="running">(.*?)</div>\s*<h2>Recent</h2>`).FindStringSubmatch(list)
	require.NotNil(t, running, "a Running section: %s", list)
	require.Contains(t, scheduled[1], `data-id="`+later+`"`, "the scheduled one under Scheduled")
	require.NotContains(t, scheduled[1], `data-id="`+now+`"`, "the started one not under Scheduled")
	require.Contains(t, running[1], `data-id="`+now+`"`, "the started one under Running")
	require.NotContains(t, running[1], `data-id="`+later+`"`, "the scheduled one not under Running")
}

// A broadcast with a text per language shows every language's text,
// labelled by its language (the default first, then the catalog's order),
// each escaped, a language's marked with its lang and dir="auto" (Persian
// is right to left).
func TestBroadcastPageShowsEveryLanguagesText(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.browser()
	b.signIn()
	e.knownChats(91_000, 2)
	id := e.broadcast("📣 <b>news</b>\n[fa]\n📣 اخبار\n[ru]\n📣 новости")
	_, page := b.get("/broadcast?id=" + id)
	require.Regexp(t, `(?s)<h2>Texts, one per language</h2>\s*`+
		`<h3 class="bc-lang">default <span class="note">\(every chat whose language has no text of its own\)</span></h3>\s*<pre class="bc-text">📣 &lt;b&gt;news&lt;/b&gt;</pre>\s*`+
		`<h3 class="bc-lang">\[ru\]</h3>\s*<pre class="bc-text" lang="ru" dir="auto">📣 новости</pre>\s*`+
		`<h3 class="bc-lang">\[fa\]</h3>\s*<pre class="bc-text" lang="fa" dir="auto">📣 اخبار</pre>`, page)
}
