package testkit

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Chromium finds Debian's chromium (scripts/ensure-chromium.sh installs it)
// and returns its path; without it the test skips loudly, and fails in CI
// (SkipOrFail). what names the test's need in the message.
func Chromium(t testing.TB, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	SkipOrFail(t, "no chromium on PATH: "+what+" needs it (scripts/ensure-chromium.sh installs Debian's chromium as root; "+
		"elsewhere install chromium by hand)")
	return ""
}

// Chrome is a headless Chromium tab for a browser test (closed when the
// test ends).
type Chrome struct {
	T   testing.TB
	Ctx context.Context
}

// NewChrome starts headless Chromium (bin, from Chromium) with a fresh
// profile and a 1280×900 window; every step of the test must be done
// within 120 s. JavaScript alert() and confirm() dialogs are accepted.
func NewChrome(t testing.TB, bin string) *Chrome {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Headless,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(cancelB)
	ctx, cancel := context.WithTimeout(bctx, 120*time.Second)
	t.Cleanup(cancel)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return &Chrome{T: t, Ctx: ctx}
}

// Run does steps; what names them in a failure.
func (b *Chrome) Run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	require.NoError(b.T, chromedp.Do(b.Ctx, steps...), what)
}

// Text is the (trimmed) text of the element sel.
func (b *Chrome) Text(sel string) string {
	b.T.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(b.T, err, "read "+sel)
	return strings.TrimSpace(s)
}

// Eval evaluates the JavaScript expression js in the page and returns its
// value as T (a JSON-decodable type).
func Eval[T any](b *Chrome, js string) T {
	b.T.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[T](js))
	require.NoError(b.T, err, "evaluate "+js)
	return v
}
