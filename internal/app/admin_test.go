package app

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

func TestAdminCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	admin, eve := user(adminID, "Admin"), user(801, "Eve")
	ctx := context.Background()
	weight := func(chat string) int {
		w, err := r.app.Store().Inspector().Weight(ctx, tgjob.QueueNotify, chat)
		require.NoError(t, err)
		return w
	}

	for _, tc := range []struct {
		name string
		from int64
		text string
		want string
	}{
		{"refused weight", eve.ID, "/weight 42 5", "⛔ /weight is for bot admins only."},
		{"refused weights", eve.ID, "/weights", "⛔ /weights is for bot admins only."},
		{"refused lanes", eve.ID, "/lanes", "⛔ /lanes is for bot admins only."},
		{"refused dlq", eve.ID, "/dlq", "⛔ /dlq is for bot admins only."},
		{"refused broadcast", eve.ID, "/broadcast hi", "⛔ /broadcast is for bot admins only."},
		{"missing arguments", adminID, "/weight", "❌ Missing arguments: which chat? Usage: /weight <chat_id> [<weight 1-1000>]"},
		{"non-numeric chat id", adminID, "/weight abc 5", `❌ Chat id "abc" is not a number. Usage: /weight <chat_id> [<weight 1-1000>]`},
		{"chat id too large", adminID, "/weight 99999999999999999999 5", "❌ Chat id 99999999999999999999 is too large to be a chat id."},
		{"chat id zero", adminID, "/weight 0 5", "❌ Chat id 0 is not a chat."},
		{"weight zero", adminID, "/weight 42 0", "❌ Weight 0 is too small: the minimum is 1 (weights are 1 to 1000)."},
		{"weight negative", adminID, "/weight 42 -3", "❌ Weight -3 is negative: weights are 1 to 1000."},
		{"weight fractional", adminID, "/weight 42 2.5", "❌ Weight 2.5: write the weight as a whole number from 1 to 1000, like 5."},
		{"weight in exponent form", adminID, "/weight 42 1e3", "❌ Weight 1e3: write the weight as a whole number from 1 to 1000, like 5."},
		{"weight with a decimal point", adminID, "/weight 42 1.0", "❌ Weight 1.0: write the weight as a whole number from 1 to 1000, like 5."},
		{"weight negative fractional", adminID, "/weight 42 -0.5", "❌ Weight -0.5 is negative: weights are 1 to 1000."},
		{"weight too negative for an integer", adminID, "/weight 42 -99999999999999999999", "❌ Weight -99999999999999999999 is negative: weights are 1 to 1000."},
		{"weight above maximum", adminID, "/weight 42 1001", "❌ Weight 1001 is above the maximum of 1000."},
		{"weight too large for an integer", adminID, "/weight 42 99999999999999999999", "❌ Weight 99999999999999999999 is too large for an integer; the maximum is 1000."},
		{"weight not a number", adminID, "/weight 42 heavy", `❌ Weight "heavy" is not a number: use a whole number from 1 to 1000.`},
		{"extra arguments", adminID, "/weight 42 5 7", "❌ Too many arguments: 3 given, at most 2. Usage: /weight <chat_id> [<weight 1-1000>]"},
		{"weights extra arguments", adminID, "/weights all", "❌ /weights takes no arguments."},
		{"lanes extra arguments", adminID, "/lanes x", "❌ /lanes takes no arguments."},
		{"dlq extra arguments", adminID, "/dlq x", "❌ /dlq takes no arguments."},
		{"show default", adminID, "/weight 42", "Chat 42: notification lane weight 1 (default 1)."},
		{"set", adminID, "/weight 42 5", "✅ Chat 42: notification lane weight set to 5 (was 1)."},
		{"set group", adminID, "/weight@codemojex_test_bot -100777 300", "✅ Chat -100777: notification lane weight set to 300 (was 1)."},
		{"show set", adminID, "/weight 42", "Chat 42: notification lane weight 5 (default 1)."},
		{"list", adminID, "/weights", "Notification lane weights (others: 1):\n• chat -100777: 300\n• chat 42: 5"},
		{"dlq empty", adminID, "/dlq", "No dead letters."},
		{"broadcast without text", adminID, "/broadcast", "❌ Missing text. Usage: /broadcast <text>"},
	} {
		from := user(tc.from, "U")
		require.Equal(t, tc.want, h.ask(0, from, tc.text), tc.name)
	}
	require.Equal(t, 5, weight("42"), "refused and bad commands changed nothing")
	require.Equal(t, 300, weight("-100777"))

	// /lanes: the deepest lanes with depth, weight and in flight. The lane
	// is parked (as after a 429) so its notifications stay pending.
	n := r.app.Notifier()
	_, err := r.app.Store().Inspector().Park(ctx, tgjob.QueueNotify, "42", time.Minute)
	require.NoError(t, err)
	for range 3 {
		_, err := n.Notify(ctx, 42, notifyMsg("queued"))
		require.NoError(t, err)
	}
	lanesReply := h.ask(0, admin, "/lanes")
	require.Contains(t, lanesReply, "Queue reply:")
	require.Contains(t, lanesReply, "Queue notify:")
	require.Contains(t, lanesReply, "• chat 42: depth 3, weight 5, in flight 0, parked until ")

	// /dlq after a message to a chat that blocked the bot.
	h.emu.SetChatStatus(4242, tgemu.ChatBlocked)
	_, err = n.Notify(ctx, 4242, notifyMsg("hello?"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ds, err := r.app.Store().Inspector().DeadLetters(ctx, tgjob.QueueNotify, lanes.DeadQuery{Newest: 1})
		return err == nil && len(ds) == 1
	}, wait, 20*time.Millisecond)
	require.Regexp(t, `Recent dead letters \(newest first\):\n• \S+ \S+ chat 4242 \(notify\): forbidden.*, \d+ attempts`, h.ask(0, admin, "/dlq"))
}
