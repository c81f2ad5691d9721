package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/config"
)

// TestFileLimitShortOnlyWhenASendingProcessCannotOpenWorkersConnections:
// the start-up warning fires for a process that sends (BOT_ROLE all or
// worker) whose descriptor limit is below WORKERS + 64, and never for a
// poller or handler, a limit that suffices, or a limit it cannot read.
func TestFileLimitShortOnlyWhenASendingProcessCannotOpenWorkersConnections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		role  string
		limit uint64
		ok    bool
		short bool
	}{
		{"all, 1024 for 1536 senders", config.RoleAll, 1024, true, true},
		{"worker, one short", config.RoleWorker, 1536 + 63, true, true},
		{"worker, exactly enough", config.RoleWorker, 1536 + 64, true, false},
		{"all, Docker's 1048576", config.RoleAll, 1 << 20, true, false},
		{"poller sends nothing", config.RolePoller, 1024, true, false},
		{"handler sends nothing", config.RoleHandler, 1024, true, false},
		{"limit unknown", config.RoleAll, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Config{Intake: config.Intake{Role: tc.role}, Worker: config.Worker{Workers: 1536}}
			require.Equal(t, tc.short, fileLimitShort(cfg, tc.limit, tc.ok))
		})
	}
}
