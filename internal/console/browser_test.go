package console_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// screenshotsEnv names the directory the browser test writes a screenshot
// of each page to (make console-screenshots sets it to docs/console).
const screenshotsEnv = "CONSOLE_SCREENSHOTS"

// chromium finds chromium, or skips the test loudly (fails it in CI):
// testkit.Chromium.
func chromium(t *testing.T) string {
	return testkit.Chromium(t, "the console's browser test")
}

// TestConsoleInABrowser drives the console in headless Chromium: a wrong
// token is refused and the right one signs in; a broadcast's progress bar
// moves and its Stop button stops it; a weight set on the Chat page is what
// /weight then says; a dead letter requeued from its page is delivered; a
// POST forged from the signed-in page without the CSRF token is refused
// and changes nothing. With CONSOLE_SCREENSHOTS set it writes a PNG of
// each page there.
func TestConsoleInABrowser(t *testing.T) {
	bin := chromium(t)
	// A low global rate so the broadcast's progress is seen moving.
	e := start(t, "TELEGRAM_GLOBAL_RATE=10")
	shots := os.Getenv(screenshotsEnv)
	if shots != "" {
		require.NoError(t, os.MkdirAll(shots, 0o755))
	}
	b := newChrome(t, bin)
	ctx, run, text, submit := b.ctx, b.run, b.text, b.submit
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err, "screenshot "+name)
		require.NoError(t, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644))
	}
	base := e.srv.URL

	// Sign in: a wrong token first.
	run("wrong token", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), strings.Repeat("w", 40)), chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#login-error")))
	require.Equal(t, "Wrong token.", text("#login-error"))
	shot("signin")
	run("sign in", chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#v-updates")))

	// A known audience and some traffic for the Overview.
	chats := e.knownChats(70_000, 60)
	e.ask("/start")
	ctxB := context.Background()
	e.emu.SetChatStatus(4242, tgemu.ChatBlocked)
	_, err := e.app.Notifier().Notify(ctxB, 4242, notifier.Message{Text: "a letter to requeue", Class: notifier.Notification})
	require.NoError(t, err)

	// A broadcast: its progress moves on the page, then Stop stops it. Five
	// chats' notification lanes are parked, so it cannot finish before the
	// Stop however slow the machine.
	for _, c := range chats[len(chats)-5:] {
		_, err := e.app.Store().Inspector().Park(ctxB, tgjob.QueueNotify, tgjob.Group(c), time.Hour)
		require.NoError(t, err)
	}
	id := e.broadcast("📣 maintenance at 22:00")
	run("broadcasts", chromedp.Navigate(base+"/broadcasts"), chromedp.WaitVisible(chromedp.CSS(`.bc[data-id="`+id+`"] progress`)))
	progress := func() int {
		p, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('.bc[data-id="`+id+`"] progress').value`))
		require.NoError(t, err, "progress")
		return int(p)
	}
	first := progress()
	require.Eventually(t, func() bool { return progress() > first }, wait, 100*time.Millisecond, "the progress bar moves (live, without a reload)")
	shot("broadcasts")
	// The Overview while it runs: the chart has points, the rates move.
	run("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#chart polyline")))
	time.Sleep(1500 * time.Millisecond) // a live refresh or two
	require.Regexp(t, `^bulk \d+% of \d+/s · global \d+% of \d+/s · reply \d+% of \d+/s$`, text("#v-budgets"), "each send budget's use, live: the total over replies and bulk too")
	shot("overview")
	run("queues", chromedp.Navigate(base+"/queues"), chromedp.WaitVisible(chromedp.CSS("#queue-notify")))
	shot("queues")
	run("back to broadcasts", chromedp.Navigate(base+"/broadcasts"), chromedp.WaitVisible(chromedp.CSS(`.bc[data-id="`+id+`"] progress`)))
	stopped := submit("stop", `.bc[data-id="`+id+`"] button.stop`)
	require.True(t, strings.HasPrefix(stopped, "🛑 Broadcast "+id+" stopped: "), stopped)
	p, err := e.app.Notifier().Progress(ctxB, id)
	require.NoError(t, err)
	require.True(t, p.Stopped, "the broadcast is stopped")
	require.Greater(t, p.Cancelled, 0, "copies were still queued at the stop")

	// A weight: found by id, set on the Chat page; /weight agrees; 0 says
	// what /weight says.
	chat := strconv.FormatInt(chats[1], 10)
	run("find chat", chromedp.Navigate(base+"/chat"), chromedp.SendKeys(chromedp.CSS("#chat-q"), chat),
		chromedp.Click(chromedp.CSS("#chat-find")), chromedp.WaitVisible(chromedp.CSS("#weight")))
	setWeight := func(w string) string {
		run("weight "+w, chromedp.SetValue(chromedp.CSS("#weight"), w))
		return submit("set weight "+w, "#set-weight")
	}
	require.Equal(t, e.ask("/weight "+chat+" 0"), setWeight("0"))
	require.Equal(t, "✅ Chat "+chat+": weight set to 7 (was 1), for replies and notifications alike.", setWeight("7"))
	require.Equal(t, "Chat "+chat+": weight 7 (default 1), for replies and notifications alike.", e.ask("/weight "+chat))
	shot("chat")

	// A forged POST from the signed-in page, without the CSRF token.
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/chat/weight", {method: "POST", credentials: "same-origin",
		body: new URLSearchParams({chat: "`+chat+`", weight: "9"})}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "forged post")
	require.Equal(t, 403, status, "a POST without the CSRF token is refused")
	w, err := e.app.Store().Inspector().Weight(ctxB, chat)
	require.NoError(t, err)
	require.Equal(t, 7, w, "and changed nothing")

	// A dead letter, requeued from its page, is delivered.
	var dead lanes.JobID
	require.Eventually(t, func() bool {
		ds, err := e.app.Store().Inspector().DeadLetters(ctxB, tgjob.QueueNotify, lanes.DeadQuery{Newest: 1})
		if err == nil && len(ds) == 1 {
			dead = ds[0].ID
		}
		return dead != ""
	}, wait, 20*time.Millisecond)
	e.emu.SetChatStatus(4242, tgemu.ChatActive)
	row := `tr[data-id="` + string(dead) + `"]`
	run("dead letters", chromedp.Navigate(base+"/dead?queue=notify"), chromedp.WaitVisible(chromedp.CSS(row)))
	shot("dead")
	requeued := submit("requeue", row+" button.requeue")
	require.True(t, strings.HasPrefix(requeued, "✅ Requeued 1 dead letter (notify 1)."), requeued)
	wctx, wcancel := context.WithTimeout(ctxB, wait)
	defer wcancel()
	msgs, err := e.emu.WaitForMessages(wctx, 4242, 1)
	require.NoError(t, err)
	require.Equal(t, "a letter to requeue", msgs[0].Text, "the requeued letter is delivered")

	run("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS("#audit")))
	require.Contains(t, text("#audit"), "console")
	shot("audit")
}

// chrome is testkit's headless Chromium tab (closed when the test ends)
// with the steps the console's tests share.
type chrome struct {
	*testkit.Chrome
	t   *testing.T
	ctx context.Context
}

// newChrome starts headless Chromium (testkit.NewChrome: a fresh profile,
// 120 s for the whole test, dialogs such as the Stop and Purge buttons'
// confirm() accepted).
func newChrome(t *testing.T, bin string) *chrome {
	t.Helper()
	c := testkit.NewChrome(t, bin)
	return &chrome{Chrome: c, t: t, ctx: c.Ctx}
}

// run does steps; what names them in a failure (testkit.Chrome.Run).
func (b *chrome) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.Run(what, steps...)
}

// text is the (trimmed) text of the element sel (testkit.Chrome.Text).
func (b *chrome) text(sel string) string {
	b.t.Helper()
	return b.Text(sel)
}

// submit clicks a form's button and waits for the answer of the page it
// lands on: the flash of a page shown before is removed first, so it is
// not taken for the new one.
func (b *chrome) submit(what, button string) string {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(() => { const f = document.getElementById("flash"); if (f) f.remove(); return true })()`))
	require.NoError(b.t, err, what)
	b.run(what, chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS("#flash")))
	return b.text("#flash")
}

// signIn signs in to the console at base with the harness's token.
func (b *chrome) signIn(base string) {
	b.t.Helper()
	b.run("sign in", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#v-updates")))
}

// TestComposeABroadcastInTheBrowser composes broadcasts on the Broadcasts
// page in headless Chromium: the form (no paid mode with paid broadcasts
// off) previews what the Telegram preview says, nothing sent; Confirm
// starts it and every known chat gets it once. A scheduled one ("in 1h")
// confirmed four times at once and then once more starts one broadcast (the
// last confirmation answers that it is sent), is listed as scheduled with
// its start and stopped with every copy cancelled, none delivered. The
// audit names the console, one entry per broadcast.
func TestComposeABroadcastInTheBrowser(t *testing.T) {
	bin := chromium(t)
	e := start(t)
	b := newChrome(t, bin)
	base := e.srv.URL
	b.signIn(base)
	chats := e.knownChats(80_000, 5)
	compose := func(text, in string) {
		t.Helper()
		b.run("compose "+text, chromedp.Navigate(base+"/broadcasts"), chromedp.WaitVisible(chromedp.CSS("#compose-text")),
			chromedp.SendKeys(chromedp.CSS("#compose-text"), text))
		if in != "" {
			b.run("compose in "+in, chromedp.SendKeys(chromedp.CSS("#compose-in"), in))
		}
		b.run("preview "+text, chromedp.Click(chromedp.CSS("#compose-preview")), chromedp.WaitVisible(chromedp.CSS("#preview")))
	}
	noMode, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.getElementById("compose-mode") === null`))
	require.NoError(t, err)
	require.True(t, noMode, "no paid mode while paid broadcasts are off")

	const now = "📣 composed in the console"
	compose(now, "")
	require.Equal(t, broadcast.PreviewText(now, 5, 1000), b.text("#preview-text"), "the Telegram preview")
	require.Equal(t, "✅ Send", b.text("#confirm"))
	count := func(text string) map[int64]int {
		got := map[int64]int{}
		for _, c := range chats {
			for _, m := range e.emu.Messages(c) {
				if m.Text == text {
					got[c]++
				}
			}
		}
		return got
	}
	require.Empty(t, count(now), "nothing sent before the confirmation")
	m := regexp.MustCompile(`^📣 Sending to 5 chats: broadcast (bc_\w+)\.$`).FindStringSubmatch(b.submit("confirm", "#confirm"))
	require.NotNil(t, m)
	id := m[1]
	ctx := context.Background()
	require.Eventually(t, func() bool {
		p, err := e.app.Notifier().Progress(ctx, id)
		return err == nil && p.Done() && p.Sent == 5
	}, wait, 20*time.Millisecond, "every chat's copy delivered")
	require.Equal(t, map[int64]int{chats[0]: 1, chats[1]: 1, chats[2]: 1, chats[3]: 1, chats[4]: 1}, count(now), "every chat once")

	const later = "🕘 composed for later"
	compose(later, "1h")
	require.Regexp(t, `\n\n🕘 Starts at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 1 h\)\.$`, b.text("#preview-text"))
	statuses, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]int](`(() => {
		const f = document.getElementById("confirm-form");
		const post = () => fetch(f.action, {method: "POST", credentials: "same-origin", body: new URLSearchParams(new FormData(f))}).then(r => r.status);
		return Promise.all([post(), post(), post(), post()]);
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "confirm four times at once")
	require.Equal(t, []int{200, 200, 200, 200}, statuses)
	m = regexp.MustCompile(`^Already sent \(broadcast (bc_\w+)\)\.$`).FindStringSubmatch(b.submit("confirm again", "#confirm"))
	require.NotNil(t, m)
	scheduled := m[1]
	row := `.bc[data-id="` + scheduled + `"]`
	b.run("listed", chromedp.Navigate(base+"/broadcasts"), chromedp.WaitVisible(chromedp.CSS(row+" .bc-plan")))
	require.Regexp(t, `^starts \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(scheduled\)$`, b.text(row+" .bc-plan"))
	require.Equal(t, "🛑 Broadcast "+scheduled+" stopped: 0 sent before the stop, 5 cancelled.",
		b.submit("stop", row+" button.stop"))
	require.Empty(t, count(later), "nothing of the scheduled one sent")

	es, err := e.app.Admin().Audit(ctx, 50)
	require.NoError(t, err)
	var sent []string
	for _, a := range es {
		if a.Action == broadcast.ActionSent {
			sent = append(sent, a.Actor()+": "+a.Detail)
		}
	}
	require.Len(t, sent, 2, "one entry per broadcast: %v", sent)
	require.Regexp(t, `^console: `+scheduled+` to 5 chats, from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$`, sent[0])
	require.Equal(t, "console: "+id+" to 5 chats", sent[1])
	b.run("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS("#audit")))
	require.Contains(t, b.text("#audit"), "console\tbroadcast sent\t"+id+" to 5 chats")
}
