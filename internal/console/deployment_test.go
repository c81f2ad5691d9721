package console_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/console"
	"github.com/codemojex/codemojex/internal/procs"
)

// overviewJSON is /api/overview as the tests read it.
type overviewJSON struct {
	Points []struct {
		Messages  map[string]float64 `json:"messages"`
		Processes int                `json:"processes"`
	} `json:"points"`
	Totals map[string]float64 `json:"totals"`
}

// TestOverviewRatesAndTotalsAreTheWholeDeployments: the console served by
// a poller process, which sends nothing itself, shows what a second
// process (role all) sent: the totals summed over both processes'
// heartbeats equal the messages the emulator received (sent, and sent on
// the reply queue), the reply rate was seen above 0, the rates are summed
// over 2 processes, and the Overview says its rates are the deployment's.
func TestOverviewRatesAndTotalsAreTheWholeDeployments(t *testing.T) {
	t.Parallel()
	e := start(t, "BOT_ROLE=poller")
	e.process() // role all: it handles and sends
	b := e.browser()
	b.signIn()
	chats := e.knownChats(60_000, 20)
	var ov overviewJSON
	received := 0
	require.Eventually(t, func() bool {
		received = 0
		for _, c := range chats {
			received += len(e.emu.Messages(c))
		}
		_, js := b.get("/api/overview")
		ov = overviewJSON{}
		require.NoError(t, json.Unmarshal([]byte(js), &ov))
		return len(ov.Points) > 0 && ov.Points[len(ov.Points)-1].Processes == 2 &&
			ov.Totals[procs.FigureSent] == float64(received) && ov.Totals[procs.FigureQueue+"reply"] == float64(received)
	}, wait, 100*time.Millisecond, "the totals are both processes' (%d received): %+v", received, ov.Totals)
	require.GreaterOrEqual(t, received, len(chats))
	top := 0.0
	for _, p := range ov.Points {
		top = max(top, p.Messages["reply"])
	}
	require.Greater(t, top, 0.0, "the reply queue's rate, from the other process's heartbeats")
	_, page := b.get("/")
	require.Contains(t, page, "Rates are the whole deployment's: summed over the")
}

// serveConsole runs one more console of e's bot with cfg (its Token set
// to the harness's) until stop or the end of the test, and returns a
// browser for it.
func (e *env) serveConsole(cfg console.Config) (*browser, func()) {
	t := e.t
	t.Helper()
	cfg.Token, cfg.Log = token, e.logs.Logger()
	con, err := console.New(e.app.Admin(), cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- con.Run(ctx, ln) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-done)
		}
	}
	t.Cleanup(stop)
	other := *e
	other.srv = &httptest.Server{URL: "http://" + ln.Addr().String()}
	return other.browser(), stop
}

// history reads /api/history's points (raw JSON, oldest first) and each
// one's time.
func (b *browser) history() ([]json.RawMessage, []int64) {
	b.t.Helper()
	_, js := b.get("/api/history")
	var h struct {
		Points []json.RawMessage `json:"points"`
	}
	require.NoError(b.t, json.Unmarshal([]byte(js), &h))
	ts := make([]int64, len(h.Points))
	for i, p := range h.Points {
		var at struct {
			T int64 `json:"t"`
		}
		require.NoError(b.t, json.Unmarshal(p, &at))
		ts[i] = at.T
	}
	return h.Points, ts
}

// TestHistoryIsKeptInValkeyForEveryConsoleAndARestart: the history a
// console samples (here one a 200 ms period) is in Valkey: a console
// started after it stopped (a restart) shows the same points at once, and
// so does a console that wrote none of them (the harness's, its period a
// minute); one point a period, in order, each its period's start.
func TestHistoryIsKeptInValkeyForEveryConsoleAndARestart(t *testing.T) {
	t.Parallel()
	e := start(t)
	fast := console.Config{Sample: 50 * time.Millisecond, HistoryEvery: 200 * time.Millisecond}
	first, stop := e.serveConsole(fast)
	first.signIn()
	e.knownChats(62_000, 3)
	var pts []json.RawMessage
	var ts []int64
	require.Eventually(t, func() bool {
		pts, ts = first.history()
		return len(pts) >= 3
	}, wait, 50*time.Millisecond, "the first console's samples")
	stop()
	require.IsIncreasing(t, ts, "one point a period, in order")
	for _, at := range ts {
		require.Zero(t, at%200, "each point at its period's start: %d", at)
	}
	restarted, _ := e.serveConsole(fast)
	restarted.signIn()
	again, _ := restarted.history()
	require.GreaterOrEqual(t, len(again), len(pts))
	require.Equal(t, pts, again[:len(pts)], "a restart keeps the history")
	b := e.browser()
	b.signIn()
	other, _ := b.history()
	require.GreaterOrEqual(t, len(other), len(pts))
	require.Equal(t, pts, other[:len(pts)], "every console shows the same")
}
