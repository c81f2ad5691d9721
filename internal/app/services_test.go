package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServicesPerRole: each role runs its services, in the start order
// docs/architecture.md states (stopped in the reverse one: the poller
// first, the HTTP server last but for the flood notices' wait).
func TestServicesPerRole(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		role string
		want []string
	}{
		{"all", []string{"heartbeat", "flood notices", "http", "migrations", "worker", "broadcast filler", "handlers", "poller"}},
		{"poller", []string{"heartbeat", "flood notices", "http", "migrations", "poller"}},
		{"handler", []string{"heartbeat", "flood notices", "http", "migrations", "handlers"}},
		{"worker", []string{"heartbeat", "flood notices", "http", "migrations", "worker", "broadcast filler"}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			a, _ := h.newApp([]string{"BOT_ROLE=" + tc.role})
			defer a.Close()
			var names []string
			for _, s := range a.Services() {
				names = append(names, s.Name())
			}
			require.Equal(t, tc.want, names)
		})
	}
	a, _ := h.newApp(nil, WithIntakeOnly())
	defer a.Close()
	var names []string
	for _, s := range a.leaderServices() {
		names = append(names, s.Name())
	}
	require.Equal(t, []string{"lease", "getUpdates"}, names, "an intake-only process tracks no broadcast")
}
