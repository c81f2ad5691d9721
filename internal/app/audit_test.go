package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestAdminActionsAreAudited: a weight set, a broadcast sent, dead letters
// requeued and dead letters purged are each logged with the admin's user id
// and recorded in the audit stream; /audit shows them newest first; a
// command that changes nothing (a bad argument, a read) records nothing.
func TestAdminActionsAreAudited(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	ctx := context.Background()
	adminUser := user(adminID, "Admin")
	in := r.app.Store().Inspector()
	deadLetters := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool {
			st, err := in.Stats(ctx, tgjob.QueueNotify, 0)
			return err == nil && st.Dead == n
		}, wait, 20*time.Millisecond)
	}

	require.Equal(t, "No admin actions recorded.", h.ask(0, adminUser, "/audit"))
	h.ask(0, adminUser, "/weight 42")   // a read
	h.ask(0, adminUser, "/weight 42 0") // a bad argument
	require.Equal(t, "No dead letters to requeue. Dead updates are not requeued (their chat has moved on); /dlq purge deletes them.",
		h.ask(0, adminUser, "/dlq requeue")) // nothing to requeue
	require.Equal(t, "Chat 42: weight is already 1; unchanged.", h.ask(0, adminUser, "/weight 42 1"), "a no-op")
	require.Equal(t, "No admin actions recorded.", h.ask(0, adminUser, "/audit"), "nothing changed, nothing recorded")

	require.Equal(t, "✅ Chat 42: weight set to 5 (was 1), for replies and notifications alike.", h.ask(0, adminUser, "/weight 42 5"))
	require.Equal(t, "Chat 42: weight is already 5; unchanged.", h.ask(0, adminUser, "/weight 42 5"), "a no-op: not recorded")
	one := strings.Split(h.ask(0, adminUser, "/audit"), "\n")
	require.Len(t, one, 2)
	require.Equal(t, "The last admin action:", one[0], "one action: no plural")

	h.say(0, user(10_600, "U"), "/start")
	h.texts(10_600, 1)
	pv, buttons := h.broadcastPreview("audited")
	h.tapAdmin(pv.ID, buttons["✅ Send"])
	h.texts(10_600, 2)

	// A chat that blocked the bot: its message is a dead letter; requeued,
	// it dies again (still blocked); then purged.
	h.emu.SetChatStatus(4242, tgemu.ChatBlocked)
	_, err := r.app.Notifier().Notify(ctx, 4242, notifyMsg("hello?"))
	require.NoError(t, err)
	deadLetters(1)
	require.Equal(t, "✅ Requeued 1 dead letter (reply 0, notify 1). Dead updates are not requeued (their chat has moved on); /dlq purge deletes them.",
		h.ask(0, adminUser, "/dlq requeue"))
	deadLetters(1)
	require.Equal(t, "🗑 Purged 1 dead letters (update 0, reply 0, notify 1).", h.ask(0, adminUser, "/dlq purge"))
	deadLetters(0)

	got := h.ask(0, adminUser, "/audit")
	lines := strings.Split(got, "\n")
	require.Equal(t, "Last 4 admin actions (newest first):", lines[0], got)
	require.Len(t, lines, 5, got)
	for i, want := range []string{
		"admin 9001: dead letters purged, 1 (update 0, reply 0, notify 1)",
		"admin 9001: dead letters requeued, 1 (reply 0, notify 1)",
		"admin 9001: broadcast sent, bc_",
		"admin 9001: weight set, chat 42: weight 5 (was 1)",
	} {
		require.Regexp(t, `^• \d{4}-\d\d-\d\d \d\d:\d\d:\d\d `, lines[i+1])
		require.Contains(t, lines[i+1], want)
	}
	logs := h.logs.String()
	for _, action := range []string{admin.ActionWeightSet, broadcast.ActionSent, admin.ActionDeadRequeued, admin.ActionDeadPurged} {
		require.Contains(t, logs, fmt.Sprintf("msg=\"admin action\" component=audit admin=%d action=%q", adminID, action))
	}
}
