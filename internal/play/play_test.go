package play_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/demo"
	"github.com/codemojex/codemojex/internal/play"
	"github.com/codemojex/codemojex/internal/testkit"
)

// wait bounds each step that waits on the bot (a reply, an edit).
const wait = 60 * time.Second

// startPlayground starts the playground on free ports with the bot built
// for the test; it is closed when the test ends.
func startPlayground(t *testing.T) *play.Playground {
	t.Helper()
	bin := testkit.BuildBot(t)
	logs := &testkit.LogBuffer{}
	p, err := play.Start(context.Background(), logs.Logger(), play.Options{Addr: "127.0.0.1:0",
		Stack: demo.Options{BotBinary: bin}})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.Close(), "the bot stops cleanly")
		if t.Failed() {
			t.Logf("--- playground log ---\n%s", testkit.Tail(logs.String(), 4000))
		}
	})
	return p
}

// TestPlaygroundInABrowser drives the playground's page in headless
// Chromium: Ana (en) types /play, taps four emojis and the submit button,
// and the board is edited in place (the same element, its text changed,
// one edit per tap); Boris (ru) types /start and gets an answer in
// Russian; the console link opens the console signed in. Then the stage
// buttons: 429 arms five faults and Calm clears them, Slow sets the
// emulator's latency, the broadcast reaches Boris, the flood is answered
// with a notice besides the help, the burst's 40 chats are all answered.
func TestPlaygroundInABrowser(t *testing.T) {
	bin := testkit.Chromium(t, "the playground's browser test")
	p := startPlayground(t)
	b := testkit.NewChrome(t, bin)

	b.Run("open the page", chromedp.Navigate(p.URL()), chromedp.WaitVisible(chromedp.CSS("#chat-101")),
		chromedp.Click(chromedp.CSS("#chat-101")), chromedp.WaitEnabled(chromedp.CSS("#text")))
	type_ := func(text string) {
		t.Helper()
		b.Run("type "+text, chromedp.SendKeys(chromedp.CSS("#text"), text), chromedp.Click(chromedp.CSS("#send")))
	}
	type_("/play")
	b.Run("the board shows", chromedp.WaitVisible(chromedp.CSS("#messages .msg.bot .kb button")))
	id := testkit.Eval[string](b, `(() => { const m = [...document.querySelectorAll("#messages .msg.bot")].find(e => e.querySelector(".kb button"));
		m.playProbe = "the board"; return m.dataset.id })()`)
	board := `document.querySelector('#messages .msg[data-id="` + id + `"]')`
	boardText := func() string { return testkit.Eval[string](b, board+`.querySelector(".text").textContent`) }
	edits := func() int {
		n, err := strconv.Atoi(testkit.Eval[string](b, board+`.dataset.edits`))
		require.NoError(t, err)
		return n
	}
	// tap clicks the board's button labelled with one of labels and waits
	// for the edit it brings.
	tap := func(labels ...string) {
		t.Helper()
		before := edits()
		want, err := json.Marshal(labels)
		require.NoError(t, err)
		js := fmt.Sprintf(`(() => { const want = %s; const b = [...%s.querySelectorAll(".kb button")].find(b => want.includes(b.textContent));
			if (!b) return ""; b.click(); return b.textContent })()`, want, board)
		require.NotEmpty(t, testkit.Eval[string](b, js), "a button labelled one of %v", labels)
		require.Eventually(t, func() bool { return edits() > before }, wait, 50*time.Millisecond, "tapping %v edits the board", labels)
	}
	empty := boardText()
	fruits := []string{"🍎", "🍌", "🍇", "🍒"}
	for _, f := range fruits {
		tap(f)
	}
	picked := boardText()
	require.NotEqual(t, empty, picked)
	tap("✅", "☑️")
	require.NotEqual(t, picked, boardText(), "the submitted guess shows on the board")
	require.Equal(t, "the board", testkit.Eval[string](b, `String(`+board+`.playProbe)`), "the board is the same element, edited in place")
	require.Equal(t, 5, edits(), "one edit per tap")
	idn, err := strconv.Atoi(id)
	require.NoError(t, err)
	var boardMsg bool
	for _, m := range p.Emulator().Messages(101) {
		if m.ID == idn {
			boardMsg = true
			require.Len(t, m.Edits, 5, "the emulator saw the five edits of this message")
		}
	}
	require.True(t, boardMsg, "the page's board is the bot's message %d", idn)

	// Boris, in Russian.
	b.Run("Boris's chat", chromedp.Click(chromedp.CSS("#chat-102")), chromedp.WaitEnabled(chromedp.CSS("#text")))
	type_("/start")
	b.Run("Boris gets an answer", chromedp.WaitVisible(chromedp.CSS("#messages .msg.bot .text")))
	require.Regexp(t, regexp.MustCompile(`\p{Cyrillic}`), b.Text("#messages .msg.bot .text"), "Boris (language_code ru) is answered in Russian")

	// Dara, in Persian: laid out right to left (dir=auto, as Telegram
	// lays a text out by its first strong character; a trial found the
	// sentences scrambled left to right).
	b.Run("Dara's chat", chromedp.Click(chromedp.CSS("#chat-105")), chromedp.WaitEnabled(chromedp.CSS("#text")))
	type_("/start")
	b.Run("Dara gets an answer", chromedp.WaitVisible(chromedp.CSS("#messages .msg.bot .text")))
	require.Regexp(t, regexp.MustCompile(`\p{Arabic}`), b.Text("#messages .msg.bot .text"), "Dara (language_code fa) is answered in Persian")
	require.Equal(t, "rtl", testkit.Eval[string](b, `getComputedStyle(document.querySelector("#messages .msg.bot .text")).direction`),
		"a Persian answer is laid out right to left")

	// The console, signed in by the link.
	href := testkit.Eval[string](b, `document.getElementById("console-link").href`)
	b.Run("open the console link", chromedp.Navigate(href))
	consoleURL := ""
	require.Eventually(t, func() bool {
		consoleURL = testkit.Eval[string](b, `document.getElementById("token") || document.readyState !== "complete" ? "" : location.href`)
		return consoleURL != ""
	}, wait, 100*time.Millisecond, "the console shows a page other than its sign-in")
	u, err := url.Parse(consoleURL)
	require.NoError(t, err)
	require.NotEqual(t, mustHost(t, p.URL()), u.Host, "the page is the console's, not the playground's")
	require.Equal(t, "/", u.Path, "signed in: the console's overview, not /login")

	stages(t, p, b)
}

// stages clicks the stage buttons (see TestPlaygroundInABrowser).
func stages(t *testing.T, p *play.Playground, b *testkit.Chrome) {
	emu := p.Emulator()
	b.Run("back to the playground", chromedp.Navigate(p.URL()), chromedp.WaitVisible(chromedp.CSS("#chat-101")))
	stats := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(b.Text("#stats"), want) }, wait, 50*time.Millisecond,
			"the stats say %q; they say %q", want, b.Text("#stats"))
	}
	click := func(name string) { t.Helper(); b.Run("stage "+name, chromedp.Click(chromedp.CSS("#stage-"+name))) }
	click("429")
	stats("armed 1")
	require.Equal(t, 1, emu.PendingFaults(), "one fault armed (for the next 5 sendMessage)")
	click("calm")
	stats("armed 0")
	click("slow")
	stats("latency 1.5 s an answer")
	click("calm")
	stats("latency none")

	click("broadcast")
	require.Eventually(t, func() bool {
		for _, m := range emu.Messages(102) {
			if strings.Contains(m.Text, "Playground news") {
				return true
			}
		}
		return false
	}, wait, 50*time.Millisecond, "the admin's broadcast reaches Boris")

	click("flood")
	require.Eventually(t, func() bool {
		texts := map[string]bool{}
		for _, m := range emu.Messages(play.FlooderID) {
			texts[m.Text] = true
		}
		return len(texts) >= 2
	}, wait, 50*time.Millisecond, "the flood is answered with a notice besides the help")

	click("burst")
	require.Eventually(t, func() bool {
		answered := 0
		for _, c := range emu.Chats() {
			if c.ID >= play.FirstBurstID && c.ID < play.FirstBurstID+40 && len(emu.Messages(c.ID)) > 0 {
				answered++
			}
		}
		return answered == 40
	}, wait, 50*time.Millisecond, "each of the burst's 40 chats is answered")
}

func mustHost(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Host
}

// The cast's admin is the group's administrator too (getChatMember says
// so), so /language in the group sets the board's language there, while a
// player who is not an administrator is refused.
func TestTheAdminSetsTheGroupsLanguage(t *testing.T) {
	p := startPlayground(t)
	send := func(from int64, text string) {
		t.Helper()
		body := fmt.Sprintf(`{"chat": %d, "from": %d, "text": %q}`, play.GroupID, from, text)
		resp, err := http.Post(p.URL()+"/api/send", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	said := func(want string) bool {
		for _, m := range p.Emulator().Messages(play.GroupID) {
			if strings.Contains(m.CurrentText(), want) {
				return true
			}
		}
		return false
	}
	send(demo.AdminID, "/language es")
	require.Eventually(t, func() bool { return said("Idioma de este grupo") }, 30*time.Second, 50*time.Millisecond, "the admin set the group's language")
	require.False(t, said("Only an admin of this group"), "the admin was not refused")
}

// The playground prints, with the emulator's, Valkey's and the console's
// addresses, the bot's /metrics address (a free loopback port, HTTP_ADDR),
// and serves the bot's metrics there (a trial found /metrics on a random
// port it never printed).
func TestPlaygroundPrintsTheMetricsAddressItServes(t *testing.T) {
	bin := testkit.BuildBot(t)
	out := &testkit.LogBuffer{}
	p, err := play.Start(context.Background(), nil, play.Options{Addr: "127.0.0.1:0", Stack: demo.Options{BotBinary: bin, Out: out}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close(), "the bot stops cleanly") })
	m := regexp.MustCompile(`(?m)^metrics (http://127\.0\.0\.1:\d+/metrics) \(health http://127\.0\.0\.1:\d+/healthz\)$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the metrics address is printed: %s", out.String())
	require.Equal(t, p.Metrics(), m[1])
	resp, err := http.Get(m[1])
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "# TYPE codemojex_", "the bot's metrics")
}
