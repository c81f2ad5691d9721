package console_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
