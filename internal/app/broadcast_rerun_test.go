package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestASendTapHandledAgainAfterACrashKeepsItsProgressMessageUpToDate: the
// process handling a broadcast's ✅ Send tap dies (SIGKILL) after the
// broadcast started (the update's journal and the preview hold its id) and
// its progress message was enqueued and sent, but before that message was
// tracked (CI: TestFailures/BroadcastStarterAndSenderKilled, the progress
// message at "22 sent" for good). The tap handled again tracks that one
// message, so it ends with the final counts: whether the broadcast still
// runs when the tap is handled again, or finished meanwhile (its copies
// sent by a worker while no handler ran, the message still showing its
// first text). The crash's state is made from a whole first run: the app
// is stopped with the bulk queue paused (the copies and the progress edits
// held, the progress message itself sent on the reply queue), the update
// is put back unhandled with its journal, and the tracking is removed.
func TestASendTapHandledAgainAfterACrashKeepsItsProgressMessageUpToDate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// finishedMeanwhile: a worker-only process sends every copy
		// between the crash and the tap's handling again.
		finishedMeanwhile bool
	}{
		{"broadcast running when the tap is handled again", false},
		{"broadcast finished before the tap is handled again", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ctx := context.Background()
			r := h.start(nil)
			h.waitLeader(r)
			chats := []int64{adminID, 10_200, 10_201, 10_202}
			h.known(chats...)
			in := r.app.Store().Inspector()
			_, err := in.PauseQueue(ctx, tgjob.QueueNotify, "test: the copies wait")
			require.NoError(t, err)
			const text = "📣 tracked after a crash"
			pv, buttons := h.broadcastPreview(text)
			u, _ := h.tapAdmin(pv.ID, buttons["✅ Send"])
			h.waitHandled(r, u)
			require.Eventually(t, func() bool { return len(h.progressMsgs()) == 1 }, wait, 10*time.Millisecond, "the progress message is sent")
			a := r.app
			r.stop()

			// The crash's state: the update unhandled, its journal holding
			// the broadcast id, the preview too, the progress message sent
			// but not tracked.
			pid := strings.Split(u.CallbackQuery.Data, "|")[1]
			keys := broadcast.NewKeys(h.tag)
			id, err := h.c.Do(ctx, h.c.B().Hget().Key(keys.Preview(pid)).Field("bc").Build()).ToString()
			require.NoError(t, err)
			h.rewind(a, u)
			require.NoError(t, a.inbox.SaveJournal(ctx, u.ID, "bc", id))
			require.NoError(t, h.c.Do(ctx, h.c.B().Hdel().Key(keys.Tracked()).Field(id).Build()).Error())
			first := h.progressMsgs()[0].CurrentText()
			require.True(t, strings.HasPrefix(first, "📣 Broadcast: 0 sent"), first)

			if tc.finishedMeanwhile {
				w := h.start([]string{"BOT_ROLE=worker"})
				_, err = in.ResumeQueue(ctx, tgjob.QueueNotify)
				require.NoError(t, err)
				require.Eventually(t, func() bool {
					p, err := w.app.notifier.Progress(ctx, id)
					st, serr := in.Stats(ctx, tgjob.QueueNotify, 0)
					return err == nil && serr == nil && p.Done() && st.Pending+st.InFlight+st.Delayed == 0
				}, wait, 10*time.Millisecond, "the copies are sent while no handler runs")
				w.stop()
				require.False(t, strings.HasPrefix(h.progressMsgs()[0].CurrentText(), "✅ Broadcast done:"), "nobody tracked it: not final yet")
			}
			r2 := h.start(nil)
			h.waitHandledAgain(r2, u)
			if !tc.finishedMeanwhile {
				_, err = in.ResumeQueue(ctx, tgjob.QueueNotify)
				require.NoError(t, err)
			}
			final := "✅ Broadcast done: 4 sent, 0 failed, 0 remaining of 4"
			require.Eventually(t, func() bool {
				p := h.progressMsgs()
				return len(p) == 1 && p[0].CurrentText() == final
			}, wait, 20*time.Millisecond, "the progress message ends with the final counts (it showed %q)", first)
			require.Eventually(t, func() bool {
				tr, err := h.tracked(ctx)
				return err == nil && len(tr) == 0
			}, wait, 20*time.Millisecond, "untracked once final")
			require.Len(t, h.progressMsgs(), 1, "still ONE progress message")
			requireEachOnce(t, h.emu, chats, text)
		})
	}
}
