package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// TestBroadcastTo25Chats: every known chat gets the broadcast exactly once
// and the admin's progress message ends with the final counts.
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

	const text = "📣 Server maintenance at 22:00 UTC"
	h.say(0, admin, "/broadcast "+text)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	final := "✅ Broadcast done: 25 sent, 0 failed, 0 remaining of 25"
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
		require.Equal(t, 1, n, "chat %d gets the broadcast exactly once", c)
	}
	var progress []tgemu.Message
	for _, m := range h.emu.Messages(adminID) {
		if strings.Contains(m.Text, "Broadcast") {
			progress = append(progress, m)
		}
	}
	if _, ok := any(r.app.notes).(progressEditor); ok {
		require.Len(t, progress, 1, "ONE progress message, kept up to date by edits")
		require.Equal(t, final, progress[0].CurrentText())
		require.NotEmpty(t, progress[0].Edits)
	} else {
		t.Log("notifier has no edit support yet: the final counts came as a second message")
		require.Len(t, progress, 2)
	}
}
