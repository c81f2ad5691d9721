package app

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
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
		{WithTag("{cm}"), "WithTag({cm}): a hash tag of 1-64 characters of A-Z a-z 0-9 . _ -"},
		{WithTag(""), "WithTag(): a hash tag of"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			a, err := New(cfg, tc.opt)
			require.Nil(t, a)
			require.ErrorContains(t, err, "app: "+tc.want)
		})
	}
}

// TestKeyTagIsTheConfigsUnlessWithTagSaysOtherwise: the keys' hash tag is
// VALKEY_KEY_TAG (its default lanes.DefaultTag when unset), and WithTag,
// when given, overrides it: one tag per app, never two that disagree
// (every component gets the same one: the lanes store's is checked here,
// the keys the whole bot writes in TestTwoBotsShareOneClusterEachInItsOwnSlot).
func TestKeyTagIsTheConfigsUnlessWithTagSaysOtherwise(t *testing.T) {
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	for _, tc := range []struct {
		name string
		env  []string
		opts []Option
		want string
	}{
		{"unset: the default", nil, nil, lanes.DefaultTag},
		{"set", []string{"VALKEY_KEY_TAG=" + ns + "-cfg"}, nil, ns + "-cfg"},
		{"set, and WithTag", []string{"VALKEY_KEY_TAG=" + ns + "-cfg"}, []Option{WithTag(ns + "-opt")}, ns + "-opt"},
		{"unset, and WithTag", nil, []Option{WithTag(ns + "-opt")}, ns + "-opt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.FromEnv(append([]string{"TELEGRAM_BOT_TOKEN=123456789:AAbcdefghijklmnopqrstuvwxyz0123456"}, tc.env...))
			require.NoError(t, err)
			a, err := New(cfg, append([]Option{WithValkey(c), WithLogger(slog.New(slog.DiscardHandler))}, tc.opts...)...)
			require.NoError(t, err)
			defer a.Close()
			require.Equal(t, tc.want, a.Store().Tag())
			require.Equal(t, tc.want, a.opt.tag)
		})
	}
}

// TestAStartWhileValkeyIsBusyReportsBusy: a bot started while Valkey runs a
// long script fails with the server's BUSY alone, not valkey-go's hint
// that the server lacks client-side caching (it asks for none: the bot
// reads nothing through that cache), which sent chaos readers the wrong
// way.
func TestAStartWhileValkeyIsBusyReportsBusy(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeytest.Options{})
	end := valkeytest.Busy(t, s, 100*time.Millisecond)
	defer end()
	cfg, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=123456789:AAbcdefghijklmnopqrstuvwxyz0123456",
		"VALKEY_URL=redis://" + s.Addr + "/0"})
	require.NoError(t, err)
	_, err = New(cfg, WithLogger(slog.New(slog.DiscardHandler)))
	require.ErrorContains(t, err, "BUSY")
	require.NotContains(t, err.Error(), "DisableCache")
}
