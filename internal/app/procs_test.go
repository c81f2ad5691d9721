package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/version"
)

// Two processes of one bot (role all, and a worker) each see both in the
// administration API's Processes (the console's Processes page): their
// roles (the lease holder's "poller lease" among them), the build's version
// and their own figures, whose messages sent add up to the messages the
// emulator received, as do their sends by queue (the replies'); a process that stops leaves the list at once.
func TestEveryProcessListsTheWholeDeployment(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	all := h.start(nil)
	h.waitLeader(all)
	worker := h.start([]string{"BOT_ROLE=worker"})
	ctx := context.Background()
	byRoles := func(ps []procs.Process) map[string]procs.Process {
		out := map[string]procs.Process{}
		for _, p := range ps {
			out[p.Roles[0]] = p
		}
		return out
	}
	for _, r := range []*running{all, worker} {
		var ps []procs.Process
		require.Eventually(t, func() bool {
			var err error
			ps, err = r.app.Admin().Processes(ctx)
			require.NoError(t, err)
			return len(ps) == 2 && len(byRoles(ps)["poller"].Roles) == 4
		}, wait, 10*time.Millisecond, "both processes listed, the leader with its lease")
		got := byRoles(ps)
		require.Equal(t, []string{"poller", "handler", "worker", "poller lease"}, got["poller"].Roles)
		require.Equal(t, []string{"worker"}, got["worker"].Roles)
		for _, p := range ps {
			require.Equal(t, version.String(), p.Version)
			var names []string
			for _, n := range p.FigureNames() {
				if !strings.HasPrefix(n, procs.FigureQueue) {
					names = append(names, n)
				}
			}
			require.Equal(t, []string{"429s", "dead letters", "messages sent", "updates dropped", "updates handled", "updates received"}, names)
			require.NotEqual(t, p.ID, "")
		}
		require.NotEqual(t, got["poller"].ID, got["worker"].ID)
	}
	for i := range 3 {
		h.say(0, user(int64(41+i), "U"), "/help")
	}
	sent := 0
	for i := range 3 {
		sent += len(h.texts(int64(41+i), 1))
	}
	require.Eventually(t, func() bool {
		ps, err := all.app.Admin().Processes(ctx)
		require.NoError(t, err)
		total, replies := 0.0, 0.0
		for _, p := range ps {
			total += p.Figures[procs.FigureSent]
			replies += p.Figures[procs.FigureQueue+"reply"]
		}
		return total == float64(sent) && replies == float64(sent)
	}, wait, 50*time.Millisecond, "the heartbeats' messages sent, and their sends on the reply queue, add up to the emulator's %d", sent)
	worker.stop()
	ps, err := all.app.Admin().Processes(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 1, "a stopped process is removed as it stops, not after its TTL")
	require.Equal(t, "poller", ps[0].Roles[0])
}
