package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/notifier"
)

// A broadcast's progress is the share of its copies sent or failed: a
// copy cancelled by a stop is no progress, so a broadcast stopped before
// it started reads 0% (not 100%), one stopped midway how far it got.
func TestABroadcastsPercentCountsOnlyCopiesSentOrFailed(t *testing.T) {
	now := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		p    notifier.Progress
		want int
	}{
		{"running, half sent", notifier.Progress{Total: 10, Sent: 5, Remaining: 5}, 50},
		{"done, one failed", notifier.Progress{Total: 10, Sent: 9, Failed: map[string]int{"forbidden": 1}}, 100},
		{"stopped before it started", notifier.Progress{Total: 3, Cancelled: 3, Stopped: true}, 0},
		{"stopped midway", notifier.Progress{Total: 200, Sent: 60, Cancelled: 140, Stopped: true}, 30},
		{"stopped, copies in flight", notifier.Progress{Total: 10, Sent: 2, Cancelled: 6, Remaining: 2, Stopped: true}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, rowOf(admin.BroadcastView{Progress: tc.p, Known: true}, now).Percent)
		})
	}
}
