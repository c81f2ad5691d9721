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

// TestBroadcastTo25Chats: every known chat but one that blocked the bot gets
// the broadcast exactly once, and the admin's chat has exactly ONE progress
// message, kept up to date by edits through the queue, ending with the
// final counts.
func TestBroadcastTo25Chats(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	admin := user(adminID, "Admin")
	chats := []int64{adminID}
	for i := range 24 {
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
	final := "✅ Broadcast done: 24 sent, 1 failed (forbidden 1), 0 remaining of 25"
	require.NoError(t, h.emu.WaitUntil(ctx, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if m.CurrentText() == final {
				return true
			}
		}
		return false
	}), "the progress message ends with the final counts")

	time.Sleep(300 * time.Millisecond) // nothing more may arrive
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
	}
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
