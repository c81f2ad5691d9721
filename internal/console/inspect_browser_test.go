package console_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestJobsWeightsAndABroadcastsPageInTheBrowser drives the new pages in
// headless Chromium: a job searched by id with the Job page's form shows
// where it stands, and once its lane is resumed and it is sent the page
// says, live (no reload), that no queue holds it; the Weights page lists
// a weight set with /weight, sets another from its row (the answer shown,
// the store changed), and shows a weight set meanwhile live; a
// broadcast's page, reached from its link on the Broadcasts page, shows
// its text and state and turns to stopped live when it is stopped; the
// Audit page shows a new entry live. No page shows the bot token.
func TestJobsWeightsAndABroadcastsPageInTheBrowser(t *testing.T) {
	bin := chromium(t)
	e := start(t)
	b := newChrome(t, bin)
	base := e.srv.URL
	b.signIn(base)
	ctx := context.Background()
	// liveText is the text of sel as one script reads it ("" when absent):
	// a live part is replaced while the page is open, so a node found by
	// one command may be gone by the next.
	liveText := func(sel string) string {
		s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(document.querySelector(`+strconv.Quote(sel)+`) || {textContent: ""}).textContent.trim()`))
		if err != nil {
			return ""
		}
		return s
	}
	seen := func(sel string) func() bool { return func() bool { return liveText(sel) != "" } }
	noToken := func(what string) {
		t.Helper()
		html, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		require.NoError(t, err, what)
		testkit.RequireNoToken(t, html, e.emu.Token(), what)
	}

	// A job, found by id with the form; sent once its lane is resumed: the
	// page says so live.
	chat := e.knownChats(61_610, 1)[0]
	in := e.app.Store().Inspector()
	_, err := in.Park(ctx, tgjob.QueueNotify, tgjob.Group(chat), time.Hour)
	require.NoError(t, err)
	ids, err := e.app.Notifier().Notify(ctx, chat, notifier.Message{Text: "find me", Class: notifier.Notification})
	require.NoError(t, err)
	require.Len(t, ids, 1)
	id := string(ids[0])
	b.run("job search", chromedp.Navigate(base+"/job"), chromedp.WaitVisible(chromedp.CSS("#job-id")),
		chromedp.SendKeys(chromedp.CSS("#job-id"), id), chromedp.Click(chromedp.CSS("#job-find")),
		chromedp.WaitVisible(chromedp.CSS(`section.job[data-id="`+id+`"]`)))
	require.Equal(t, "notify", b.text(".job-queue"))
	require.True(t, strings.HasPrefix(b.text(".job-state"), "waiting, 0 ahead of it in its lane; its lane is parked until "), b.text(".job-state"))
	require.Contains(t, b.text(".payload"), `"text": "find me"`)
	noToken("the job page")
	require.NoError(t, in.ResumeLane(ctx, tgjob.QueueNotify, tgjob.Group(chat)))
	require.Eventually(t, seen("#job-none"), wait, 100*time.Millisecond, "job sent: no queue holds it, live")

	// Weights: listed, set from the row, and a new one shown live.
	e.ask("/weight 7001 4")
	b.run("weights", chromedp.Navigate(base+"/weights"), chromedp.WaitVisible(chromedp.CSS(`tr[data-chat="7001"]`)),
		chromedp.SetValue(chromedp.CSS(`tr[data-chat="7001"] input.weight`), "6"))
	require.Equal(t, "✅ Chat 7001: weight set to 6 (was 4), for replies and notifications alike.",
		b.submit("set weight", `tr[data-chat="7001"] button.set-weight`))
	w, err := in.Weight(ctx, "7001")
	require.NoError(t, err)
	require.Equal(t, 6, w)
	e.ask("/weight 7002 3")
	require.Eventually(t, seen(`tr[data-chat="7002"]`), wait, 100*time.Millisecond, "a weight set meanwhile, live")
	noToken("the weights page")

	// A broadcast's page from its link; stopped meanwhile: live.
	e.knownChats(71_000, 3)
	bc := e.broadcast("in 1h 🕘 the browser's broadcast")
	b.run("broadcast page", chromedp.Navigate(base+"/broadcasts"), chromedp.WaitVisible(chromedp.CSS(`a[href="/broadcast?id=`+bc+`"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/broadcast?id=`+bc+`"]`)), chromedp.WaitVisible(chromedp.CSS("#bc-state")))
	require.Equal(t, "scheduled", b.text("#bc-state"))
	require.Equal(t, "🕘 the browser's broadcast", b.text(".bc-text"))
	noToken("the broadcast's page")
	_, err = e.app.Admin().StopBroadcast(ctx, admin.WhoConsole, bc)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return liveText("#bc-state") == "stopped" }, wait, 100*time.Millisecond, "stopped, live")

	// The Audit page, live.
	b.run("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS("#audit")))
	e.ask("/weight 7003 2")
	require.Eventually(t, func() bool { return strings.Contains(liveText("#audit"), "chat 7003: weight 2 (was 1)") }, wait, 100*time.Millisecond,
		"a new entry, live")
}

// On the open Broadcasts page (no reload), a scheduled broadcast's card
// moves from Scheduled to Running once it starts (here its start moved to
// the past in its record), and each list then says whether it is empty.
func TestAScheduledBroadcastsCardMovesUnderRunningWhenItStartsInTheBrowser(t *testing.T) {
	bin := chromium(t)
	e := start(t)
	b := newChrome(t, bin)
	base := e.srv.URL
	b.signIn(base)
	e.knownChats(96_000, 2)
	id := e.broadcast("in 1h 🕘 soon, then sooner")
	card := `.bc[data-id="` + id + `"]`
	b.run("broadcasts", chromedp.Navigate(base+"/broadcasts"), chromedp.WaitVisible(chromedp.CSS("#scheduled "+card)))
	require.Equal(t, "No broadcast running.", b.text("#none-running"))
	ctx := context.Background()
	require.NoError(t, e.c.Do(ctx, e.c.B().Hset().Key("{"+e.tag+"}:n:bc:"+id).FieldValue().
		FieldValue("at", strconv.FormatInt(time.Now().Add(-time.Second).UnixMilli(), 10)).Build()).Error(), "its start is past")
	moved := `document.querySelector('#running ` + card + `') !== null && document.querySelector('#scheduled ` + card + `') === null && ` +
		`document.getElementById("none-running") === null && document.getElementById("none-scheduled") !== null`
	require.Eventually(t, func() bool {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](moved))
		return err == nil && ok
	}, wait, 100*time.Millisecond, "the card moved under Running, live")
	require.Equal(t, "No broadcast scheduled.", b.text("#none-scheduled"))
}
