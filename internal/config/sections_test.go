package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/worker"
)

// TestSectionsValidate: each section validates its own variables and
// names the one at fault; the defaults are valid.
func TestSectionsValidate(t *testing.T) {
	def, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		section interface{ Validate() error }
		want    string // the variable named; "" = valid
	}{
		{"telegram default", def.Telegram, ""},
		{"telegram no token", config.Telegram{APIURL: def.APIURL}, "TELEGRAM_BOT_TOKEN"},
		{"telegram admin 0", config.Telegram{Token: token, APIURL: def.APIURL, AdminIDs: []int64{0}}, "ADMIN_IDS"},
		{"valkey default", def.Valkey, ""},
		{"valkey http", config.Valkey{ValkeyURL: "http://x", KeyTag: "cm"}, "VALKEY_URL"},
		{"valkey no tag", config.Valkey{ValkeyURL: def.ValkeyURL}, "VALKEY_KEY_TAG"},
		{"valkey tag with braces", config.Valkey{ValkeyURL: def.ValkeyURL, KeyTag: "{cm}"}, "VALKEY_KEY_TAG"},
		{"valkey wait for a replica", config.Valkey{ValkeyURL: def.ValkeyURL, KeyTag: "cm", WaitReplicas: 1, WaitTimeout: time.Second}, ""},
		{"valkey wait without a timeout", config.Valkey{ValkeyURL: def.ValkeyURL, KeyTag: "cm", WaitReplicas: 1}, "VALKEY_WAIT_TIMEOUT"},
		{"valkey wait for 17", config.Valkey{ValkeyURL: def.ValkeyURL, KeyTag: "cm", WaitReplicas: 17, WaitTimeout: time.Second}, "VALKEY_WAIT_REPLICAS"},
		{"rates default", def.Rates, ""},
		{"rates global 0", config.Rates{ChatRate: 1, GroupRate: 20}, "TELEGRAM_GLOBAL_RATE"},
		{"rates paid without replies", config.Rates{GlobalRate: 30, PaidBroadcastRate: 50, ChatRate: 1, GroupRate: 20}, "TELEGRAM_PAID_BROADCAST_RATE"},
		{"rates lane depth", config.Rates{GlobalRate: 30, ChatRate: 1, GroupRate: 20, ReplyLaneDepth: -1}, "REPLY_LANE_DEPTH"},
		{"intake default", def.Intake, ""},
		{"intake role", config.Intake{Role: "x", HandlerLease: time.Second}, "BOT_ROLE"},
		{"intake lease", config.Intake{Role: "all"}, "HANDLER_LEASE"},
		{"intake webhook secret", config.Intake{Role: "all", HandlerLease: time.Second, WebhookURL: "https://x/h"}, "TELEGRAM_WEBHOOK_SECRET"},
		{"worker default", def.Worker, ""},
		{"worker at the worker's cap", config.Worker{Workers: worker.MaxSenders, WorkerLease: time.Second}, ""},
		{"worker above the worker's cap", config.Worker{Workers: worker.MaxSenders + 1, WorkerLease: time.Second}, "WORKERS"},
		{"worker lease 0", config.Worker{Workers: 1}, "WORKER_LEASE"},
		{"flood default", def.Flood, ""},
		{"flood off", config.Flood{}, ""},
		{"flood window", config.Flood{FloodWindow: -time.Second}, "FLOOD_WINDOW"},
		{"flood taps", config.Flood{FloodChatTaps: 1_000_001}, "FLOOD_CHAT_TAPS"},
		{"http default", def.HTTP, ""},
		{"http port only", config.HTTP{HTTPAddr: "8080"}, "HTTP_ADDR"},
		{"console off", def.Console, ""},
		{"console short token", config.Console{ConsoleAddr: "127.0.0.1:1", ConsoleToken: "abc"}, "CONSOLE_TOKEN"},
		{"console addr", config.Console{ConsoleAddr: "x", ConsoleToken: strings.Repeat("ab", 16)}, "CONSOLE_ADDR"},
		{"log default", def.Log, ""},
		{"log loud", config.Log{LogLevel: "loud"}, "LOG_LEVEL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.section.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			var ce *config.Error
			require.True(t, errors.As(err, &ce), "error %v is not a *config.Error", err)
			require.Equal(t, tc.want, ce.Var)
		})
	}
}

// TestDefaultsAreTheComponents': the defaults that are a component's
// constant come from it, and the sections convert to the components'
// configurations.
func TestDefaultsAreTheComponents(t *testing.T) {
	c, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "TELEGRAM_PAID_BROADCAST_RATE=70"})
	require.NoError(t, err)
	require.Equal(t, worker.DefaultSenders, c.Workers)
	require.Equal(t, lanes.DefaultTag, c.KeyTag)
	wc := c.WorkerConfig()
	require.Equal(t, []any{token, c.APIURL, c.Workers, c.WorkerLease, 30 + 100 + 70},
		[]any{wc.Token, wc.ServerURL, wc.Senders, wc.Lease, wc.ClaimRate})
	l := c.NotifierLimits()
	require.Equal(t, []int{30, 100, 70, 1, 20, 100},
		[]int{l.GlobalPerSecond, l.ReplyPerSecond, l.PaidPerSecond, l.PrivatePerSecond, l.GroupPerMinute, l.ReplyLaneDepth})
	fl := c.Flood.Limits()
	require.Equal(t, []any{10 * time.Second, 10, 30, 30, 200}, []any{fl.Window, fl.UserMessages, fl.UserTaps, fl.ChatMessages, fl.ChatTaps})
}
