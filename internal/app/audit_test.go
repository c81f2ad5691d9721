package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	admin := user(adminID, "Admin")
	in := r.app.Store().Inspector()
	deadLetters := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool {
			st, err := in.Stats(ctx, tgjob.QueueNotify, 0)
			return err == nil && st.Dead == n
		}, wait, 20*time.Millisecond)
	}

	require.Equal(t, "No admin actions recorded.", h.ask(0, admin, "/audit"))
	h.ask(0, admin, "/weight 42")   // a read
	h.ask(0, admin, "/weight 42 0") // a bad argument
	require.Equal(t, "No dead letters to requeue. Dead updates are not requeued (their chat has moved on); /dlq purge deletes them.",
		h.ask(0, admin, "/dlq requeue")) // nothing to requeue
	require.Equal(t, "Chat 42: weight is already 1; unchanged.", h.ask(0, admin, "/weight 42 1"), "a no-op")
	require.Equal(t, "No admin actions recorded.", h.ask(0, admin, "/audit"), "nothing changed, nothing recorded")

	require.Equal(t, "✅ Chat 42: weight set to 5 (was 1), for replies and notifications alike.", h.ask(0, admin, "/weight 42 5"))
	require.Equal(t, "Chat 42: weight is already 5; unchanged.", h.ask(0, admin, "/weight 42 5"), "a no-op: not recorded")

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
	require.Equal(t, "✅ Requeued 1 dead letters (reply 0, notify 1). Dead updates are not requeued (their chat has moved on); /dlq purge deletes them.",
		h.ask(0, admin, "/dlq requeue"))
	deadLetters(1)
	require.Equal(t, "🗑 Purged 1 dead letters (update 0, reply 0, notify 1).", h.ask(0, admin, "/dlq purge"))
	deadLetters(0)

	got := h.ask(0, admin, "/audit")
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
	for _, action := range []string{actionWeightSet, broadcast.ActionSent, actionDeadRequeued, actionDeadPurged} {
		require.Contains(t, logs, fmt.Sprintf("msg=\"admin action\" component=audit admin=%d action=%q", adminID, action))
	}
}

// TestAuditStreamIsCapped: the audit stream keeps about its cap (XADD
// MAXLEN ~ N trims whole stream nodes): after 5x the cap it holds at least
// the cap and less than the cap plus one node (stream-node-max-entries,
// 100 by default), and the newest entry is the last one recorded.
func TestAuditStreamIsCapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	const limit = 200
	l := &auditLog{c: h.c, keys: keyspace{tag: h.tag}, max: limit, log: slog.New(slog.DiscardHandler)}
	for i := range 5 * limit {
		require.NoError(t, l.Record(ctx, adminWho(adminID), actionWeightSet, fmt.Sprintf("entry %d", i)))
	}
	n, err := l.Len(ctx)
	require.NoError(t, err)
	node, err := h.c.Do(ctx, h.c.B().ConfigGet().Parameter("stream-node-max-entries").Build()).AsStrMap()
	require.NoError(t, err)
	t.Logf("audit stream: %d entries after %d recorded, cap ~%d, stream-node-max-entries %s", n, 5*limit, limit, node["stream-node-max-entries"])
	require.GreaterOrEqual(t, n, limit)
	require.Less(t, n, limit+101)
	last, err := l.Last(ctx, auditShown)
	require.NoError(t, err)
	require.Len(t, last, auditShown)
	require.Equal(t, fmt.Sprintf("entry %d", 5*limit-1), last[0].Detail)
	require.Equal(t, fmt.Sprintf("entry %d", 5*limit-auditShown), last[auditShown-1].Detail)
}
