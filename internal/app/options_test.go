package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/config"
)

// TestNewRefusesBadOptions: an option given a bad value makes New fail
// with an error naming the option, instead of running with a default the
// caller did not ask for.
func TestNewRefusesBadOptions(t *testing.T) {
	cfg, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=123456789:AAbcdefghijklmnopqrstuvwxyz0123456"})
	require.NoError(t, err)
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{WithAuditCap(0), "WithAuditCap(0)"},
		{WithUpdateWaitLimit(0), "WithUpdateWaitLimit(0s)"},
		{WithUpdateWaitLimit(-time.Second), "WithUpdateWaitLimit(-1s)"},
		{WithClaimFailLimit(0), "WithClaimFailLimit(0s)"},
		{WithPollTimeout(500 * time.Millisecond), "WithPollTimeout(500ms)"},
		{WithPollTimeout(1500 * time.Millisecond), "WithPollTimeout(1.5s)"},
		{WithLeaseTTL(0), "WithLeaseTTL(0s)"},
		{WithDrainTimeout(-1), "WithDrainTimeout(-1ns)"},
		{WithEditInterval(0), "WithEditInterval(0s)"},
		{WithClock(nil), "WithClock(nil)"},
		{WithHTTPTimeouts(HTTPTimeouts{Idle: -time.Second}), "WithHTTPTimeouts("},
	} {
		t.Run(tc.want, func(t *testing.T) {
			a, err := New(cfg, tc.opt)
			require.Nil(t, a)
			require.ErrorContains(t, err, "app: "+tc.want)
		})
	}
}
