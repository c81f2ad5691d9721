package app

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// TestDurationsLoggedAsText: with the JSON handler (the default logger),
// durations read "500ms", not 500000000 nanoseconds (the getMe retry's
// retry_in, the drain).
func TestDurationsLoggedAsText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var buf testkit.LogBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.emu.InjectFault(tgemu.BadGateway().For("getMe"))
	// A poller alone: the one failing getMe is then the poller's (which
	// logs retry_in), never a worker's warm-up getMe (which took it 2 runs
	// in 5 of the package's tests, the poller's getMe then succeeding).
	r := h.start([]string{"BOT_ROLE=poller"}, WithLogger(log))
	h.waitLeader(r)
	r.stop()

	got := map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), sc.Text())
		for _, k := range []string{"retry_in", "drain"} {
			if v, ok := line[k]; ok {
				got[k] = v
			}
		}
	}
	require.Equal(t, map[string]any{"retry_in": "500ms", "drain": "5s"}, got, buf.String())
}
