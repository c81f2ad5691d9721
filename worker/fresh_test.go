package worker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
)

const (
	kb1 = `{"inline_keyboard":[[{"text":"🍎","callback_data":"a"}]]}`
	kb2 = `{"inline_keyboard":[[{"text":"🍌","callback_data":"b"}]]}`
)

// Edits of one message queued while none was sent coalesce into one
// editMessageText carrying the latest text and keyboard; the edit finds
// its message through the send's job id, queued before the send went out.
func TestEditLatestSendsOnlyTheLatestFrame(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const chat = int64(81)
	ids, err := e.n.Notify(e.ctx, chat, notifier.Message{Text: "frame 0", Markup: kb1, Editable: true})
	require.NoError(t, err)
	var carrier string
	for i, text := range []string{"frame 1", "frame 2", "frame 3"} {
		id, replaced, err := e.n.EditLatest(e.ctx, chat, ids[0], notifier.Message{Text: text, Markup: kb2})
		require.NoError(t, err)
		require.Equal(t, i > 0, replaced)
		if i == 0 {
			carrier = string(id)
		}
		require.Equal(t, carrier, string(id))
	}
	e.start(e.config())
	m, err := e.emu.WaitForEdits(e.ctx, chat, e.waitMsgs(chat, 1)[0].ID, 1)
	require.NoError(t, err)
	require.Equal(t, kb1, m.ReplyMarkup)
	require.Len(t, m.Edits, 1, "one edit for three frames")
	require.Equal(t, "frame 3", m.Edits[0].Text)
	require.Equal(t, kb2, m.Edits[0].ReplyMarkup)

	// An edit without markup removes the keyboard.
	_, _, err = e.n.EditLatest(e.ctx, chat, ids[0], notifier.Message{Text: "over"})
	require.NoError(t, err)
	m, err = e.emu.WaitForEdits(e.ctx, chat, m.ID, 2)
	require.NoError(t, err)
	require.Empty(t, m.Edits[1].ReplyMarkup)
}

// A message that can no longer be edited (deleted; or a group message too
// old) gets its edit as a fresh message with the keyboard, and later edits
// go to that new message.
func TestEditLatestOfUneditableMessageSendsItAfresh(t *testing.T) {
	t.Parallel()
	for name, chat := range map[string]int64{"deleted": 82, "too old": -83} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOpts{})
			ids, err := e.n.Notify(e.ctx, chat, notifier.Message{Text: "board v0", Markup: kb1, Editable: true})
			require.NoError(t, err)
			e.start(e.config())
			old := e.waitMsgs(chat, 1)[0]
			if chat > 0 {
				require.True(t, e.emu.DeleteMessage(chat, old.ID))
			} else {
				require.True(t, e.emu.MakeUneditable(chat, old.ID))
			}
			_, _, err = e.n.EditLatest(e.ctx, chat, ids[0], notifier.Message{Text: "board v1", Markup: kb2})
			require.NoError(t, err)
			msgs := e.waitMsgs(chat, 2)
			require.Equal(t, "board v1", msgs[1].Text)
			require.Equal(t, kb2, msgs[1].ReplyMarkup)
			require.Eventually(t, func() bool { return e.sentID(ids[0]) == msgs[1].ID }, 5*time.Second, 5*time.Millisecond,
				"the board is now the new message")

			_, _, err = e.n.EditLatest(e.ctx, chat, ids[0], notifier.Message{Text: "board v2", Markup: kb2})
			require.NoError(t, err)
			m, err := e.emu.WaitForEdits(e.ctx, chat, msgs[1].ID, 1)
			require.NoError(t, err)
			require.Equal(t, "board v2", m.CurrentText())
			require.Empty(t, e.dead("reply"))
			e.requireMetric(1, "codemojex_worker_edits_sent_fresh_total", "", "")
		})
	}
}
