package app

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
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
