package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestBroadcastTo25Chats: 26 known chats, one of which blocked the bot: the
// other 25 get the broadcast exactly once, and the admin's chat has exactly ONE progress
// message, kept up to date by edits through the queue, ending with the
// final counts.
func TestBroadcastTo25Chats(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	admin := user(adminID, "Admin")
	chats := []int64{adminID}
	for i := range 25 {
		chats = append(chats, int64(10_000+i))
	}
	for _, c := range chats { // each chat talks to the bot once: it is known
		h.say(0, user(c, "U"), "/start")
	}
	for _, c := range chats {
		h.texts(c, 1)
	}
	blocked := chats[len(chats)-1]
	h.emu.SetChatStatus(blocked, tgemu.ChatBlocked) // 403 from now on

	const text = "📣 Server maintenance at 22:00 UTC"
	h.say(0, admin, "/broadcast "+text)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	final := "✅ Broadcast done: 25 sent, 1 failed (forbidden 1), 0 remaining of 26"
	require.NoError(t, h.emu.WaitUntil(ctx, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if m.CurrentText() == final {
				return true
			}
		}
		return false
	}), "the progress message ends with the final counts")

	time.Sleep(300 * time.Millisecond) // nothing more may arrive
	got := 0
	for _, c := range chats {
		n := 0
		for _, m := range h.emu.Messages(c) {
			if m.Text == text {
				n++
			}
		}
		want := 1
		if c == blocked {
			want = 0
		}
		require.Equal(t, want, n, "chat %d gets the broadcast exactly once", c)
		got += n
	}
	require.Equal(t, 25, got, "25 chats got the broadcast")
	var progress []tgemu.Message
	for _, m := range h.emu.Messages(adminID) {
		if strings.Contains(m.Text, "Broadcast") {
			progress = append(progress, m)
		}
	}
	require.Len(t, progress, 1, "ONE progress message, kept up to date by edits")
	require.Equal(t, final, progress[0].CurrentText())
	require.NotEmpty(t, progress[0].Edits)
	require.NotEqual(t, final, progress[0].Text, "the final counts came by an edit")
	for _, r := range h.emu.Requests() {
		if strings.EqualFold(r.Method, "editMessageText") {
			require.Equal(t, int64(adminID), r.ChatID)
			require.Equal(t, strconv.Itoa(progress[0].ID), r.Params["message_id"])
		}
	}
}

// TestBroadcastReplayAfterCrash: a crash after /broadcast fanned out but
// before its update was journalled and finished: handled again, the
// broadcast is not sent twice (its key is the update id) and the admin
// still has ONE progress message (its key too).
func TestBroadcastReplayAfterCrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	r := h.start(nil)
	h.waitLeader(r)
	admin := user(adminID, "Admin")
	chats := []int64{adminID, 10_100, 10_101, 10_102}
	for _, c := range chats {
		h.say(0, user(c, "U"), "/start")
	}
	for _, c := range chats {
		h.texts(c, 1)
	}
	const text = "📣 once only"
	u := h.say(0, admin, "/broadcast "+text)
	final := "✅ Broadcast done: 4 sent, 0 failed, 0 remaining of 4"
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	progressMsgs := func() []tgemu.Message {
		var out []tgemu.Message
		for _, m := range h.emu.Messages(adminID) {
			if strings.Contains(m.Text, "Broadcast") {
				out = append(out, m)
			}
		}
		return out
	}
	require.NoError(t, h.emu.WaitUntil(wctx, func() bool {
		p := progressMsgs()
		return len(p) == 1 && p[0].CurrentText() == final
	}))
	a := r.app
	h.waitHandled(r, u.ID)
	r.stop()
	// The crash: right after Broadcast returned, before the journal kept
	// its id ("bcs" written, "bc" not), the update not finished.
	h.rewind(a, u)
	require.NoError(t, a.inbox.SaveJournal(ctx, u.ID, "bcs", "1"))

	h.waitHandledAgain(h.start(nil), u.ID)
	time.Sleep(500 * time.Millisecond)
	for _, c := range chats {
		n := 0
		for _, m := range h.emu.Messages(c) {
			if m.Text == text {
				n++
			}
		}
		require.Equal(t, 1, n, "chat %d gets the broadcast once", c)
	}
	p := progressMsgs()
	require.Len(t, p, 1, "still ONE progress message")
	require.Equal(t, final, p[0].CurrentText())
	for _, m := range h.emu.Messages(adminID) {
		require.NotContains(t, m.Text, "interrupted")
	}
}

// TestBroadcastStopDuringFanOutAtTheGlobalLimit: a broadcast to 2,000 chats
// drains at Telegram's 30 messages/s (the emulator enforces it); the admin
// stops it after about 3 s with /broadcast stop <id>. After the stop no
// further copy is sent: the chats received exactly the copies counted as
// sent, each chat at most one, sent + cancelled = 2,000, and the
// notification lanes hold no copy. The progress message ends with the
// counts of the stop.
func TestBroadcastStopDuringFanOutAtTheGlobalLimit(t *testing.T) {
	t.Parallel()
	h := newHarnessOn(t, testkit.NewEmulator(t, tgemu.WithLimits(tgemu.DefaultLimits())),
		"TELEGRAM_GLOBAL_RATE=30", "TELEGRAM_CHAT_RATE=1", "TELEGRAM_GROUP_RATE=20")
	r := h.start(nil)
	h.waitLeader(r)
	ctx := context.Background()
	admin := user(adminID, "Admin")
	const chatsN = 2000
	// 1,999 known chats; the admin's own chat is the 2,000th (it becomes
	// known with the /broadcast).
	for i := range chatsN - 1 {
		chat := int64(20_000 + i)
		h.emu.AddChat(models.Chat{ID: chat, Type: models.ChatTypePrivate, FirstName: "U"})
		require.NoError(t, r.app.audience.AddChat(ctx, chat))
	}
	const text = "📣 a broadcast that is stopped"
	copies := func() (total, maxPerChat int) {
		per := map[int64]int{}
		for _, m := range h.emu.AllMessages() {
			if m.Text == text {
				total++
				per[m.ChatID]++
				maxPerChat = max(maxPerChat, per[m.ChatID])
			}
		}
		return total, maxPerChat
	}
	h.say(0, admin, "/broadcast "+text)
	var id string
	require.Eventually(t, func() bool {
		all, err := r.app.audience.Tracked(ctx)
		for k := range all {
			id = k
		}
		return err == nil && id != ""
	}, wait, 10*time.Millisecond)
	require.Eventually(t, func() bool { n, _ := copies(); return n >= 90 }, wait, 20*time.Millisecond)

	before := len(h.emu.Messages(adminID))
	h.say(0, admin, "/broadcast stop "+id)
	var stopReply string
	require.Eventually(t, func() bool {
		for _, m := range h.emu.Messages(adminID)[before:] {
			if strings.HasPrefix(m.Text, "🛑 Broadcast "+id+" stopped") {
				stopReply = m.Text
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond)
	atReply, _ := copies()

	var p notifier.Progress
	require.Eventually(t, func() bool {
		var err error
		p, err = r.app.Notifier().Progress(ctx, id)
		return err == nil && p.Done()
	}, wait, 20*time.Millisecond, "the copies in flight at the stop settle")
	time.Sleep(1500 * time.Millisecond) // at 30/s, 45 more copies would arrive if any were left
	delivered, maxPerChat := copies()
	t.Logf("stop: %q; copies delivered when the stop reply arrived %d, at the end %d; progress: sent %d, failed %d, cancelled %d of %d",
		stopReply, atReply, delivered, p.Sent, len(p.Failed), p.Cancelled, p.Total)
	require.Equal(t, chatsN, p.Total)
	require.True(t, p.Stopped)
	require.Empty(t, p.Failed)
	require.Equal(t, chatsN, p.Sent+p.Cancelled, "sent + cancelled = 2,000")
	require.Equal(t, p.Sent, delivered, "the chats received exactly the copies counted as sent: none after the stop beyond those in flight")
	require.Equal(t, 1, maxPerChat, "no chat got a copy twice")
	require.Greater(t, p.Cancelled, chatsN/2, "the stop came early: most copies were cancelled")
	for _, q := range tgjob.Queues() {
		st, err := r.app.Store().Inspector().Stats(ctx, q, 1)
		require.NoError(t, err)
		require.Zero(t, st.Pending+st.InFlight+st.Delayed, "queue %s holds no copy", q)
	}
	last, err := r.app.auditLog.Last(ctx, 1)
	require.NoError(t, err)
	require.Len(t, last, 1)
	require.Equal(t, auditEntry{At: last[0].At, Admin: adminID, Action: actionBroadcastStop,
		Detail: fmt.Sprintf("%s: %d sent before the stop, %d cancelled, %d in flight", id, p.Sent-inFlightAtStop(stopReply), p.Cancelled, inFlightAtStop(stopReply))}, last[0], "the stop is audited")
	// The progress message says the same.
	final := fmt.Sprintf("🛑 Broadcast stopped: %d sent before the stop, 0 failed, %d cancelled of %d", p.Sent, p.Cancelled, chatsN)
	ctxW, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	require.NoError(t, h.emu.WaitUntil(ctxW, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if m.CurrentText() == final {
				return true
			}
		}
		return false
	}), "the progress message ends with the stop's counts")
}

// inFlightAtStop reads "N in flight" from a stop reply.
func inFlightAtStop(reply string) int {
	var n int
	i := strings.LastIndex(reply, ", ")
	_, _ = fmt.Sscanf(reply[i+2:], "%d in flight", &n)
	return n
}
