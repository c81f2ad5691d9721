package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A broadcast with [ru] and [es] sections reaches each chat once in its
// language: the language_code of its user's updates ("ru-RU" is ru), a
// /language choice before that; fa (no section), en and a language the
// catalog lacks get the default text. The preview shows each language's
// text and how many chats get it; a section of a language the catalog
// lacks is refused with nothing previewed; Sent = the chats.
func TestBroadcastInSeveralLanguagesGivesEachChatItsText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	const def, ru, es = "📣 Big news", "📣 Большие новости", "📣 Grandes noticias"
	users := []struct {
		id         int64
		code, want string
	}{
		{20_001, "ru-RU", ru},
		{20_002, "es", es},
		{20_003, "fa", def},
		{20_004, "en", def},
		{20_005, "es", ru}, // chose Russian with /language
		{20_006, "de", def},
	}
	h.say(0, user(adminID, "Admin"), "/start")
	h.texts(adminID, 1)
	for _, u := range users {
		h.say(0, speaker(u.id, "U", u.code), "/start")
	}
	h.say(0, speaker(20_005, "U", "es"), "/language ru")
	for _, u := range users {
		n := 1
		if u.id == 20_005 {
			n = 2
		}
		h.texts(u.id, n)
	}

	before := len(h.emu.Messages(adminID))
	h.say(0, user(adminID, "Admin"), "/broadcast Hi\n[de]\nHallo")
	got := h.texts(adminID, before+1)
	require.Contains(t, got[len(got)-1], "❌ unknown language [de]", "a section the catalog lacks is refused")
	require.NotContains(t, got[len(got)-1], "Broadcast preview")

	text := def + "\n[ru]\n" + ru + "\n\n[es]\n" + es
	pv, buttons := h.broadcastPreview(text)
	require.Contains(t, pv.Text, "The chats will see:\n\n"+def+"\n\n")
	require.Contains(t, pv.Text, "🌐 [ru] 2 chats will see:\n\n"+ru)
	require.Contains(t, pv.Text, "🌐 [es] 1 chat will see:\n\n"+es)
	require.Contains(t, pv.Text, "🌐 The default text goes to 4 chats")
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, "📣 Sending to 7 chats.", toast)
	final := "✅ Broadcast done: 7 sent, 0 failed, 0 remaining of 7"
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, h.emu.WaitUntil(ctx, func() bool {
		p := h.progressMsgs()
		return len(p) == 1 && p[0].CurrentText() == final
	}), "Sent = the chats")
	time.Sleep(200 * time.Millisecond) // nothing more may arrive
	users = append(users, struct {
		id         int64
		code, want string
	}{adminID, "", def})
	for _, u := range users {
		n := map[string]int{}
		for _, m := range h.emu.Messages(u.id) {
			if strings.HasPrefix(m.Text, "📣 ") && !strings.HasPrefix(m.Text, "📣 Broadcast") {
				n[m.Text]++
			}
		}
		require.Equal(t, map[string]int{u.want: 1}, n, "chat %d (%s) gets its language's text once", u.id, u.code)
	}
}
