package console_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// screenshotsEnv names the directory the browser test writes a screenshot
// of each page to (make console-screenshots sets it to docs/console).
const screenshotsEnv = "CONSOLE_SCREENSHOTS"

// chromium finds Debian's chromium (scripts/ensure-chromium.sh installs it);
// without it the test skips loudly, and fails in CI (testkit.SkipOrFail).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testkit.SkipOrFail(t, "no chromium on PATH: the console's browser test needs it (scripts/ensure-chromium.sh installs Debian's chromium as root; "+
		"elsewhere install chromium by hand)")
	return ""
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
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Headless,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, 120*time.Second)
	defer cancel()
	// Accept the confirm() of the Stop and Purge buttons.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, steps...), what)
	}
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err, "screenshot "+name)
		require.NoError(t, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644))
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err, "read "+sel)
		return strings.TrimSpace(s)
	}
	base := e.srv.URL
	// submit clicks a form's button and waits for the answer of the page it
	// lands on: the flash of a page shown before is removed first, so it is
	// not taken for the new one.
	submit := func(what, button string) string {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const f = document.getElementById("flash"); if (f) f.remove(); return true })()`))
		require.NoError(t, err, what)
		run(what, chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS("#flash")))
		return text("#flash")
	}

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
	require.Regexp(t, `^bulk \d+% of \d+/s · reply \d+% of \d+/s$`, text("#v-budgets"), "each send budget's use, live")
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
	require.True(t, strings.HasPrefix(requeued, "✅ Requeued 1 dead letters (notify 1)."), requeued)
	wctx, wcancel := context.WithTimeout(ctxB, wait)
	defer wcancel()
	msgs, err := e.emu.WaitForMessages(wctx, 4242, 1)
	require.NoError(t, err)
	require.Equal(t, "a letter to requeue", msgs[0].Text, "the requeued letter is delivered")

	run("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS("#audit")))
	require.Contains(t, text("#audit"), "console")
	shot("audit")
}
