package app

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestBroadcastTo25Chats: 26 known chats, one of which blocked the bot:
// after the preview's Send, the other 25 get the broadcast exactly once,
// and the admin's chat has exactly ONE progress message, kept up to date by
// edits through the queue, ending with the final counts (its Stop button
// gone).
func TestBroadcastTo25Chats(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	chats := []int64{adminID}
	for i := range 25 {
		chats = append(chats, int64(10_000+i))
	}
	h.known(chats...)
	blocked := chats[len(chats)-1]
	h.emu.SetChatStatus(blocked, tgemu.ChatBlocked) // 403 from now on

	const text = "📣 Server maintenance at 22:00 UTC"
	pv, buttons := h.broadcastPreview(text)
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, "📣 Sending to 26 chats.", toast)
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
		n := testkit.CopiesIn(h.emu, c, text)
		want := 1
		if c == blocked {
			want = 0
		}
		require.Equal(t, want, n, "chat %d gets the broadcast exactly once", c)
		got += n
	}
	require.Equal(t, 25, got, "25 chats got the broadcast")
	progress := h.progressMsgs()
	require.Len(t, progress, 1, "ONE progress message, kept up to date by edits")
	require.Equal(t, final, progress[0].CurrentText())
	if len(progress[0].Edits) > 0 {
		require.NotEqual(t, final, progress[0].Text, "the final counts came by an edit")
		_, stop := keyboardOf(t, progress[0].ReplyMarkup)
		require.Contains(t, stop, "🛑 Stop", "the running broadcast had a Stop button")
	} else {
		// On a busy host all 26 copies can be delivered between their
		// enqueue and the progress message's (broadcast trackProgress
		// reads the progress then): it is sent once, already final, with
		// no Stop button (seen in a busy CI run).
		require.Equal(t, final, progress[0].Text, "sent once, with the final counts")
	}
	require.Empty(t, currentMarkup(progress[0]), "the finished one has none")
	for _, r := range h.emu.Requests() {
		if strings.EqualFold(r.Method, "editMessageText") {
			require.Equal(t, int64(adminID), r.ChatID)
			require.Contains(t, []string{strconv.Itoa(progress[0].ID), strconv.Itoa(pv.ID)}, r.Params["message_id"])
		}
	}
}

// TestBroadcastReplayAfterCrash: a crash after the Send tap fanned out but
// before its update was journalled and finished and before the preview
// recorded the broadcast: handled again, the broadcast is not sent twice
// (its key is the preview id) and the admin still has ONE progress message
// (its key too).
func TestBroadcastReplayAfterCrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	r := h.start(nil)
	h.waitLeader(r)
	chats := []int64{adminID, 10_100, 10_101, 10_102}
	h.known(chats...)
	const text = "📣 once only"
	pv, buttons := h.broadcastPreview(text)
	u, _ := h.tapAdmin(pv.ID, buttons["✅ Send"])
	final := "✅ Broadcast done: 4 sent, 0 failed, 0 remaining of 4"
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	progressMsgs := h.progressMsgs
	require.NoError(t, h.emu.WaitUntil(wctx, func() bool {
		p := progressMsgs()
		return len(p) == 1 && p[0].CurrentText() == final
	}))
	a := r.app
	h.waitHandled(r, u)
	r.stop()
	// The crash: right after the broadcast started, before the journal
	// kept its id, the update not finished.
	h.rewind(a, u)
	pid := strings.Split(u.CallbackQuery.Data, "|")[1]
	require.NoError(t, h.c.Do(ctx, h.c.B().Hdel().Key(broadcast.NewKeys(h.tag).Preview(pid)).Field("bc").Build()).Error())

	r2 := h.start(nil)
	h.waitHandledAgain(r2, u)
	// Handled again: whatever the replay enqueued is enqueued. Wait (no
	// fixed sleep) until no queue holds a message and every progress
	// message shows the final text: nothing more can be sent after that.
	require.Eventually(t, func() bool {
		for _, q := range tgjob.Queues() {
			st, err := r2.app.Store().Inspector().Stats(ctx, q, 0)
			if err != nil || st.Pending+st.InFlight+st.Delayed > 0 {
				return false
			}
		}
		for _, m := range progressMsgs() {
			if m.CurrentText() != final {
				return false
			}
		}
		return true
	}, wait, 20*time.Millisecond, "the replay settles")
	requireEachOnce(t, h.emu, chats, text)
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
	h, r := newTelegramLimitsHarness(t)
	ctx := context.Background()
	adminUser := user(adminID, "Admin")
	const chatsN = 2000
	// 1,999 known chats; the admin's own chat is the 2,000th (it becomes
	// known with the /broadcast).
	h.addKnownChats(r, 20_000, chatsN-1)
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
	pv, buttons := h.broadcastPreview(text)
	require.Contains(t, pv.Text, "It will reach 2000 chats, in about 1 min 7 s at the current rate of 30 messages/s.")
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, "📣 Sending to 2000 chats.", toast)
	id := h.trackedID("")
	require.Eventually(t, func() bool { n, _ := copies(); return n >= 90 }, wait, 20*time.Millisecond)

	before := len(h.emu.Messages(adminID))
	h.say(0, adminUser, "/broadcast stop "+id)
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
	last, err := r.app.audit.Last(ctx, 1)
	require.NoError(t, err)
	require.Len(t, last, 1)
	m := stopReplyRE.FindStringSubmatch(stopReply)
	require.NotNil(t, m, stopReply)
	sentBefore, _ := strconv.Atoi(m[1])
	inFlight, _ := strconv.Atoi(m[3])
	require.Equal(t, [2]int{p.StopSent, p.StopInFlight}, [2]int{sentBefore, inFlight}, "the reply says what the stop recorded")
	require.LessOrEqual(t, p.Sent-sentBefore, inFlight, "what was delivered after the stop was in flight at it")
	require.Equal(t, admin.AuditEntry{ID: last[0].ID, At: last[0].At, Who: admin.Who(adminID), Action: broadcast.ActionStopped,
		Detail: fmt.Sprintf("%s: %d sent before the stop, %s cancelled, %d in flight at the stop", id, sentBefore, m[2], inFlight)}, last[0], "the stop is audited")
	// The progress message says the same.
	final := fmt.Sprintf("🛑 Broadcast stopped: %s, 0 failed, %d cancelled of %d", settledSent(p), p.Cancelled, chatsN)
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

// stopReplyRE reads a stop's reply: the copies sent before the stop, those
// cancelled and, when there were any, those in flight at it.
var stopReplyRE = regexp.MustCompile(`^🛑 Broadcast bc_\w+ stopped: (\d+) sent before the stop, (\d+) cancelled(?:, (\d+) in flight at the stop \(each counted sent or cancelled as it settles\))?\.$`)

// settledSent is how the final progress text of stopped broadcast p (its
// copies in flight at the stop settled) counts those sent: "N sent before
// the stop", or "N sent (M of them in flight at the stop)" when M of them
// were delivered after it.
func settledSent(p notifier.Progress) string {
	if after := p.Sent - p.StopSent; after > 0 {
		return fmt.Sprintf("%d sent (%d of them in flight at the stop)", p.Sent, after)
	}
	return fmt.Sprintf("%d sent before the stop", p.Sent)
}

// broadcastPreview sends /broadcast text as the admin, waits for its
// preview and returns it with its buttons' callback data by label.
func (h *harness) broadcastPreview(text string) (tgemu.Message, map[string]string) {
	h.t.Helper()
	before := len(h.emu.Messages(adminID))
	h.say(0, user(adminID, "Admin"), "/broadcast "+text)
	var pv tgemu.Message
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(h.t, h.emu.WaitUntil(ctx, func() bool {
		for _, m := range h.emu.Messages(adminID)[before:] {
			if strings.HasPrefix(m.Text, "📣 Broadcast preview.") {
				pv = m
				return true
			}
		}
		return false
	}), "the preview arrives")
	_, data := keyboardOf(h.t, pv.ReplyMarkup)
	return pv, data
}

// tapAdmin presses the button with callback data d on message id of the
// admin's private chat and returns the tap's update and its toast.
func (h *harness) tapAdmin(id int, d string) (models.Update, string) {
	h.t.Helper()
	u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: id, From: user(adminID, "Admin"), Data: d})
	require.NoError(h.t, err)
	return u, h.answerOf(u.CallbackQuery.ID)
}

// trackedID waits until a broadcast other than except ("": none) is
// tracked (its progress message kept up to date) and returns its id.
func (h *harness) trackedID(except string) string {
	h.t.Helper()
	var id string
	require.Eventually(h.t, func() bool {
		all, err := h.tracked(h.t.Context())
		for k := range all {
			if k != except {
				id = k
			}
		}
		return err == nil && id != ""
	}, wait, 10*time.Millisecond)
	return id
}

// scheduleLater previews "/broadcast in 1h 🕘 later" as the admin, taps
// ✅ Send and waits until the broadcast is tracked (its id: the tracked one
// other than except) and its progress message, which says when it starts,
// was sent, so the admin's next answer is the next message. It returns the
// id and the Send tap's toast.
func (h *harness) scheduleLater(except string) (string, string) {
	h.t.Helper()
	pv, buttons := h.broadcastPreview("in 1h 🕘 later")
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	id := h.trackedID(except)
	require.Eventually(h.t, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if strings.HasPrefix(m.Text, "📣 Broadcast: ") && strings.Contains(m.Text, "🕘 Starts at ") {
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond)
	return id, toast
}

// copiesOf counts the messages of every chat whose text is text (a
// broadcast's copies).
func (h *harness) copiesOf(text string) int {
	n := 0
	for _, m := range h.emu.AllMessages() {
		if m.Text == text {
			n++
		}
	}
	return n
}

// progressMsgs are the broadcast progress messages in the admin's chat.
func (h *harness) progressMsgs() []tgemu.Message {
	var out []tgemu.Message
	for _, m := range h.emu.Messages(adminID) {
		// A broadcast that finishes before its progress message is first
		// sent starts with the final text (done, or stopped).
		if strings.HasPrefix(m.Text, "📣 Broadcast:") || strings.HasPrefix(m.Text, "✅ Broadcast done:") || strings.HasPrefix(m.Text, "🛑 Broadcast stopped:") {
			out = append(out, m)
		}
	}
	return out
}

// TestBroadcastStopButton: the progress message of a running broadcast (300
// chats at Telegram's 30 messages/s) carries a Stop button; a tap stops it
// (the toast says how many were sent and cancelled), the progress message
// ends with the stop's counts and loses the button, sent + cancelled = 300,
// no chat receives a copy afterwards, and a second tap changes nothing.
func TestBroadcastStopButton(t *testing.T) {
	t.Parallel()
	h, r := newTelegramLimitsHarness(t)
	ctx := context.Background()
	const chatsN = 300
	h.addKnownChats(r, 30_000, chatsN-1)
	const text = "📣 stopped by its button"
	sent := func() int { return h.copiesOf(text) }
	pv, buttons := h.broadcastPreview(text)
	h.tapAdmin(pv.ID, buttons["✅ Send"])
	var progress tgemu.Message
	var stop map[string]string
	ctxW, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	require.NoError(t, h.emu.WaitUntil(ctxW, func() bool {
		p := h.progressMsgs()
		if len(p) != 1 {
			return false
		}
		progress = p[0]
		_, stop = keyboardOf(t, currentMarkup(progress))
		return stop["🛑 Stop"] != "" && sent() >= 30
	}), "the progress message with its Stop button, 30 copies sent")
	_, toast := h.tapAdmin(progress.ID, stop["🛑 Stop"])
	m := regexp.MustCompile(`^🛑 Broadcast (bc_\w+) stopped: \d+ sent before the stop, \d+ cancelled(, \d+ in flight at the stop|\.$)`).FindStringSubmatch(toast)
	require.NotNil(t, m, toast)
	// The id from the toast: the app stops tracking the broadcast once it
	// is done, which may already be the case.
	id := m[1]
	var p notifier.Progress
	var err error
	require.Eventually(t, func() bool {
		p, err = r.app.Notifier().Progress(ctx, id)
		return err == nil && p.Done()
	}, wait, 20*time.Millisecond)
	final := fmt.Sprintf("🛑 Broadcast stopped: %s, 0 failed, %d cancelled of %d", settledSent(p), p.Cancelled, chatsN)
	require.NoError(t, h.emu.WaitUntil(ctxW, func() bool {
		m := h.progressMsgs()[0]
		return m.CurrentText() == final && currentMarkup(m) == ""
	}), "the progress message ends with the stop's counts, without its button")
	time.Sleep(time.Second)
	require.Equal(t, chatsN, p.Sent+p.Cancelled)
	require.Equal(t, p.Sent, sent(), "no copy after the stop beyond those in flight")
	_, toast = h.tapAdmin(progress.ID, stop["🛑 Stop"])
	require.True(t, strings.HasPrefix(toast, "Broadcast "+id+" was already stopped."), toast)
	p2, err := r.app.Notifier().Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, p, p2, "a second tap changes nothing")
}

// TestBroadcastPreviewThenSendOrCancel: /broadcast answers with a preview
// (the text as the chats will see it, how many chats, the estimated time at
// the global rate) and Send / Cancel; nobody receives anything until Send.
// Cancel: nobody ever receives it, and a later Send changes nothing. Send
// tapped twice in a row: one broadcast, every chat receives the text once,
// one progress message. A tap 10 minutes after the preview (the app's
// clock, moved by the test): a toast, nothing sent.
func TestBroadcastPreviewThenSendOrCancel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var skew atomic.Int64
	r := h.start(nil, WithClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }))
	h.waitLeader(r)
	ctx := context.Background()
	chats := []int64{adminID, 10_200, 10_201, 10_202}
	h.known(chats...)
	received := func(text string) map[int64]int {
		out := map[int64]int{}
		for _, c := range chats {
			for _, m := range h.emu.Messages(c) {
				if m.Text == text {
					out[c]++
				}
			}
		}
		return out
	}
	quiet := func(text string) {
		t.Helper()
		time.Sleep(400 * time.Millisecond)
		require.Empty(t, received(text), "nobody received %q", text)
	}

	// Cancel.
	const cancelled = "📣 a typo nobody should see"
	pv, buttons := h.broadcastPreview(cancelled)
	require.Equal(t, "📣 Broadcast preview. The chats will see:\n\n"+cancelled+
		"\n\nIt will reach 4 chats, in about 1 s at the current rate of 1000 messages/s. Send or Cancel within 10 minutes.", pv.Text)
	rows, _ := keyboardOf(t, pv.ReplyMarkup)
	require.Equal(t, [][]string{{"✅ Send", "❌ Cancel"}}, rows)
	quiet(cancelled)
	_, toast := h.tapAdmin(pv.ID, buttons["❌ Cancel"])
	require.Equal(t, broadcast.ToastCancelled, toast)
	_, toast = h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, broadcast.ToastWasCancelled, toast, "Send after Cancel changes nothing")
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	require.NoError(t, h.emu.WaitUntil(wctx, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if m.ID == pv.ID {
				return m.CurrentText() == "❌ Broadcast cancelled: nobody received it." && currentMarkup(m) == ""
			}
		}
		return false
	}), "the preview says it was cancelled and loses its buttons")
	quiet(cancelled)

	// Send, tapped twice in a row.
	const text = "📣 tapped twice, sent once"
	pv, buttons = h.broadcastPreview(text)
	quiet(text)
	q1, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: pv.ID, From: user(adminID, "Admin"), Data: buttons["✅ Send"]})
	require.NoError(t, err)
	q2, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: pv.ID, From: user(adminID, "Admin"), Data: buttons["✅ Send"]})
	require.NoError(t, err)
	require.Equal(t, "📣 Sending to 4 chats.", h.answerOf(q1.CallbackQuery.ID))
	require.Regexp(t, `^Already sent \(broadcast bc_\w+\)\.$`, h.answerOf(q2.CallbackQuery.ID))
	// A wait of its own: the cancel part above spent part of wctx's.
	dctx, dcancel := context.WithTimeout(ctx, wait)
	defer dcancel()
	require.NoError(t, h.emu.WaitUntil(dctx, func() bool {
		for _, m := range h.progressMsgs() {
			if m.CurrentText() == "✅ Broadcast done: 4 sent, 0 failed, 0 remaining of 4" {
				return true
			}
		}
		return false
	}))
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, map[int64]int{adminID: 1, 10_200: 1, 10_201: 1, 10_202: 1}, received(text), "every chat received it once")
	require.Len(t, h.progressMsgs(), 1, "one broadcast, one progress message")
	es, err := r.app.audit.Last(ctx, admin.AuditShown)
	require.NoError(t, err)
	require.Len(t, es, 1, "one broadcast sent, audited once")
	require.Equal(t, broadcast.ActionSent, es[0].Action)

	// A tap after the preview's 10 minutes.
	const late = "📣 too late"
	pv, buttons = h.broadcastPreview(late)
	skew.Store(int64(broadcast.PreviewLifetime + time.Second))
	_, toast = h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, broadcast.ToastPreviewLate, toast)
	skew.Store(0)
	_, toast = h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, broadcast.ToastPreviewLate, toast, "expired for good")
	quiet(late)
	require.Len(t, h.progressMsgs(), 1, "no other broadcast started")
}

// TestBroadcastStopWithoutABroadcastsIDIsATextToBroadcast: "stop test"
// or "stop" with a word not starting bc_ are texts,
// answered with the preview of exactly that text (whose Send/Cancel
// protects against a mistyped stop); "stop" with an id of the right shape
// that no broadcast has is answered "No broadcast <id>" (issue 27: it was
// previewed as a text), "Stop" or "STOP" as well; nothing is stopped or audited. A known broadcast's
// id still stops it.
func TestBroadcastStopWithoutABroadcastsIDIsATextToBroadcast(t *testing.T) {
	t.Parallel()
	h, r, admin := startedAdmin(t)
	for _, text := range []string{"stop test", "stop  test", "stop bcx_1"} {
		pv, buttons := h.broadcastPreview(text)
		require.Equal(t, broadcast.PreviewText(strings.TrimSpace(text), 1, 1000), pv.Text, "/broadcast %s is previewed as a text", text)
		require.Contains(t, buttons, "✅ Send", "the preview of %q can be sent", text)
	}
	// Shaped like an id but unknown: answered as such, nothing previewed;
	// "Stop" as a phone keyboard capitalizes it is a stop too (it was
	// previewed as a text to every chat, one tap from being sent).
	for _, stop := range []string{"stop", "Stop", "STOP"} {
		require.Equal(t, "❌ No broadcast bc_01ARZ3NDEKTSV4RRFFQ69G5FAV (unknown, or finished more than a day ago).",
			h.ask(0, admin, "/broadcast "+stop+" bc_01ARZ3NDEKTSV4RRFFQ69G5FAV"), stop)
	}
	// A word starting bc_ (any case) is meant as an id: a lower-case one
	// is read upper-cased (a malformed one: TestAMalformedBroadcastIDIsAnsweredAsTyped).
	require.Equal(t, "❌ No broadcast bc_01ARZ3NDEKTSV4RRFFQ69G5FAV (unknown, or finished more than a day ago).",
		h.ask(0, admin, "/broadcast stop bc_01arz3ndektsv4rrffq69g5fav"), "a lower-case id")
	es, err := r.app.audit.Last(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, es, "nothing was stopped or sent")

	// The id of a known broadcast stops it.
	ctx := context.Background()
	// (To another chat than the admin's: its copy must not be taken for the answer.)
	id, err := r.app.Notifier().Broadcast(ctx, []int64{4545}, notifier.Message{Text: "x"})
	require.NoError(t, err)
	_, err = r.app.Notifier().StopBroadcast(ctx, id)
	require.NoError(t, err)
	// Stopped, not audited (as the tracker finishes a stop cut short):
	// the first /broadcast stop audits it and answers as the stop, the
	// next says it was stopped already.
	require.True(t, strings.HasPrefix(h.ask(0, admin, "/broadcast stop "+id), "🛑 Broadcast "+id+" stopped: "),
		"/broadcast stop <a known id> answers as a stop")
	require.True(t, strings.HasPrefix(h.ask(0, admin, "/broadcast stop "+id), "Broadcast "+id+" was already stopped."),
		"/broadcast stop <a known id> answers as a stop")
	es, err = r.app.audit.Last(ctx, 10)
	require.NoError(t, err)
	require.Len(t, es, 1, "the stop audited once")
	require.Equal(t, broadcast.ActionStopped, es[0].Action)
}

// "/broadcast stop" with a word that starts bc_ (any case) but is not a
// broadcast id is answered as not an id, quoting the word as the admin
// typed it (it was quoted as read for the lookup, its part after bc_
// upper-cased: "bc_NONSENSE"), never previewed as the text "stop bc_…";
// nothing is stopped, sent or audited.
func TestAMalformedBroadcastIDIsAnsweredAsTyped(t *testing.T) {
	t.Parallel()
	h, r, admin := startedAdmin(t)
	for _, typed := range []string{"bc_nonsense", "bc_not-an-id", "bc_123", "BC_123", "Bc_01arz3ndektsv4rrffq69g5fa"} {
		t.Run(typed, func(t *testing.T) {
			before := len(h.emu.Messages(adminID))
			require.Equal(t, `❌ "`+typed+`" is not a broadcast id (like bc_01H…). Usage: /broadcast stop <id>`,
				h.ask(0, admin, "/broadcast stop "+typed))
			msgs := h.emu.Messages(adminID)
			require.Len(t, msgs, before+1, "one answer")
			require.Empty(t, msgs[before].ReplyMarkup, "no Send button: not previewed")
		})
	}
	es, err := r.app.audit.Last(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, es, "nothing was stopped or sent")
}

// "/broadcast stop <id>" with words after the id (a running broadcast's,
// or any word starting bc_) is refused, quoting the words, and never
// previewed as the text "stop bc_… please" one tap from every chat; the
// broadcast is not stopped, nothing is audited.
func TestABroadcastStopWithWordsAfterItsIDIsRefusedNotPreviewed(t *testing.T) {
	t.Parallel()
	h, r, admin := startedAdmin(t)
	ctx := context.Background()
	id, err := r.app.Notifier().Broadcast(ctx, []int64{4646}, notifier.Message{Text: "x"})
	require.NoError(t, err)
	for _, tc := range []struct{ typed, want string }{
		{typed: "stop " + id + " please", want: `❌ /broadcast stop takes the broadcast's id alone: "please" came after ` + id +
			`. Nothing was stopped or previewed. Usage: /broadcast stop <id>`},
		{typed: "Stop " + strings.ToLower(id) + " now!! " + strings.Repeat("x", 50), want: `❌ /broadcast stop takes the broadcast's id alone: "now!! ` +
			strings.Repeat("x", 34) + `…" came after ` + strings.ToLower(id) + `. Nothing was stopped or previewed. Usage: /broadcast stop <id>`},
		{typed: "stop bc_nonsense too", want: `❌ /broadcast stop takes the broadcast's id alone: "too" came after bc_nonsense. Nothing was stopped or previewed. Usage: /broadcast stop <id>`},
	} {
		before := len(h.emu.Messages(adminID))
		require.Equal(t, tc.want, h.ask(0, admin, "/broadcast "+tc.typed), tc.typed)
		msgs := h.emu.Messages(adminID)
		require.Len(t, msgs, before+1, "one answer to %q", tc.typed)
		require.Empty(t, msgs[before].ReplyMarkup, "no Send button: not previewed")
	}
	p, err := r.app.Notifier().Progress(ctx, id)
	require.NoError(t, err)
	require.False(t, p.Stopped, "not stopped")
	es, err := r.app.audit.Last(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, es, "nothing was stopped or sent")
	// A stop of words that are not an id stays a text to broadcast.
	pv, _ := h.broadcastPreview("stop the music")
	require.Contains(t, pv.Text, "stop the music")
}

// A lone "/broadcast stop" (in any case, as a phone keyboard capitalizes
// it) is answered with how to stop a broadcast, not previewed as the text
// "stop" one tap from being sent to every chat: no preview, no button,
// nothing audited.
func TestBroadcastStopWithoutAnIDAnswersHowToStopNotAPreview(t *testing.T) {
	t.Parallel()
	h, r, admin := startedAdmin(t)
	for _, text := range []string{"/broadcast stop", "/broadcast Stop", "/broadcast  STOP "} {
		before := len(h.emu.Messages(adminID))
		require.Equal(t, "❌ Which broadcast? Usage: /broadcast stop <id>; /broadcasts lists the running and scheduled ones with their ids. Nothing was stopped.",
			h.ask(0, admin, text), text)
		msgs := h.emu.Messages(adminID)
		require.Len(t, msgs, before+1, "one answer to %q", text)
		require.Empty(t, msgs[before].ReplyMarkup, "no Send button under the answer to %q", text)
	}
	es, err := r.app.audit.Last(context.Background(), 10)
	require.NoError(t, err)
	require.Empty(t, es, "nothing was sent or stopped")
}

// A plan word given twice ("/broadcast in 1m in 2m hi", "over" twice
// likewise) is refused with what was given, as other argument mistakes
// are: no preview (it previewed the text "in 2m hi", one tap from every
// chat), no button, no preview stored, nothing sent or audited.
func TestARepeatedPlanWordIsRefusedNotPreviewedAsTheText(t *testing.T) {
	t.Parallel()
	h, r, admin := startedAdmin(t)
	h.addKnownChats(r, 30_000, 9)
	const usage = ". Usage: /broadcast [in <duration>] [over <duration>] <text>, e.g. /broadcast in 2h over 8h Big news"
	for _, tc := range []struct{ args, want string }{
		{"in 1m in 2m hi", `❌ "in" twice (1m, then 2m): a broadcast has one start; a text that starts with the word "in" writes it "In"` + usage},
		{"over 1h in 5m over 2h hi", `❌ "over" twice (1h, then 2h): a broadcast has one spread; a text that starts with the word "over" writes it "Over"` + usage},
	} {
		before := len(h.emu.Messages(adminID))
		require.Equal(t, tc.want, h.ask(0, admin, "/broadcast "+tc.args), tc.args)
		msgs := h.emu.Messages(adminID)
		require.Len(t, msgs, before+1, "one answer to %q", tc.args)
		require.Empty(t, msgs[before].ReplyMarkup, "no Send button under the answer to %q", tc.args)
	}
	ctx := t.Context()
	previews, err := h.c.Do(ctx, h.c.B().Keys().Pattern(broadcast.NewKeys(h.tag).Preview("*")).Build()).AsStrSlice()
	require.NoError(t, err)
	require.Empty(t, previews, "no preview stored")
	es, err := r.app.audit.Last(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, es, "nothing was sent")
}

// A broadcast scheduled from Telegram ("/broadcast in 1h <text>"; a
// malformed schedule, "in abc hi", is refused, not previewed as text; the
// preview of "in 1h over 2h" says when it starts and at what pace): Send
// schedules it (the preview edited to say so); nothing of it reaches any
// chat before its start, even while another broadcast, sent at once,
// reaches every chat; /broadcasts lists it with its start;
// /broadcast stop <id> stops it with every copy cancelled; then
// /broadcasts lists none.
func TestScheduledBroadcastWaitsIsListedAndStops(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	adminUser := user(adminID, "Admin")
	require.Equal(t, "No broadcast is running or scheduled.", h.ask(0, adminUser, "/broadcasts"))
	require.Equal(t, `❌ /broadcasts takes no argument (got "now"): send /broadcasts alone to list the running and scheduled broadcasts.`,
		h.ask(0, adminUser, "/broadcasts  now"), "an argument is refused, not ignored")
	require.Equal(t, `❌ "in" abc: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In". `+
		"Usage: /broadcast [in <duration>] [over <duration>] <text>, e.g. /broadcast in 2h over 8h Big news",
		h.ask(0, adminUser, "/broadcast in abc hi"), "a malformed schedule is refused, not previewed as the text \"in abc hi\"")
	h.addKnownChats(r, 30_000, 99) // and the admin's: 100 chats
	pv, buttons := h.broadcastPreview("in 1h over 2h 🕘 spread")
	require.Contains(t, pv.Text, "The chats will see:\n\n🕘 spread\n\n")
	require.Regexp(t, `🕘 Starts at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 1 h\)\.\n⏳ Spread over 2 h: about one message every 1 min 12 s\.$`, pv.Text)
	_, toast := h.tapAdmin(pv.ID, buttons["❌ Cancel"])
	require.Equal(t, broadcast.ToastCancelled, toast)

	id, toast := h.scheduleLater("")
	require.Regexp(t, `^🕘 Scheduled for \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$`, toast)
	list := h.ask(0, adminUser, "/broadcasts")
	require.Regexp(t, `^📣 Broadcasts:\n• `+id+`: 📣 Broadcast: 0 sent, 0 failed, 100 remaining of 100, starts at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\nTo stop a running or scheduled one: /broadcast stop <id>$`, list)
	p, err := r.app.Notifier().Progress(t.Context(), id)
	require.NoError(t, err)
	require.True(t, p.Scheduled(time.Now()))
	// Scheduled is not running: a running broadcast silences the bulk
	// budget's saturation alert (alerts.yml), a scheduled one must not.
	code, body := h.get(r, "/metrics")
	require.Equal(t, 200, code)
	for _, line := range []string{"codemojex_broadcasts_running 0", "codemojex_broadcasts_scheduled 1"} {
		require.Contains(t, body, "\n"+line+"\n", "/metrics before its start")
	}

	// Another broadcast, at once, reaches every chat meanwhile: the
	// fillers ran all along.
	pv, buttons = h.broadcastPreview("📣 now")
	_, toast = h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, "📣 Sending to 100 chats.", toast)
	count := h.copiesOf
	require.Eventually(t, func() bool { return count("📣 now") == 100 }, wait, 20*time.Millisecond)
	require.Zero(t, count("🕘 later"), "nothing sent before its start")

	stop := h.ask(0, adminUser, "/broadcast stop "+id)
	require.Equal(t, "🛑 Broadcast "+id+" stopped: 0 sent before the stop, 100 cancelled.", stop)
	require.Eventually(t, func() bool {
		return h.ask(0, adminUser, "/broadcasts") == "No broadcast is running or scheduled."
	}, wait, 100*time.Millisecond, "the broadcasts leave the list once their progress messages are final")
	require.Zero(t, count("🕘 later"))
}

// A scheduled broadcast's start is shown to the second it starts in, the
// same everywhere: the preview ("🕘 Starts at … (in 1 h)"), the Send
// toast, the progress message and /broadcasts all write the start the
// broadcast keeps (notifier.Progress.At) to the second, not truncated to
// the minute (13:13 for 13:13:37, a time before the start).
func TestAScheduledStartIsShownToTheSecondItStartsIn(t *testing.T) {
	t.Parallel()
	h, r, admin := startedAdmin(t)
	h.addKnownChats(r, 30_000, 9)
	pv, buttons := h.broadcastPreview("in 1h 🕘 to the second")
	m := regexp.MustCompile(`🕘 Starts at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC \(in 1 h\)\.`).FindStringSubmatch(pv.Text)
	require.NotNil(t, m, pv.Text)
	shown, err := time.Parse(time.DateTime, m[1])
	require.NoError(t, err)
	at := m[1] + " UTC"
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, "🕘 Scheduled for "+at+".", toast)
	id := h.trackedID("")
	p, err := r.app.Notifier().Progress(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, p.At.UTC().Truncate(time.Second), shown, "the second shown is the one it starts in (%s)", p.At.UTC().Format(time.StampMilli))
	require.Eventually(t, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if strings.HasPrefix(m.Text, "📣 Broadcast: ") && strings.Contains(m.Text, "\n🕘 Starts at "+at+"\n") {
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond, "the progress message says the same start")
	require.Contains(t, h.ask(0, admin, "/broadcasts"), "• "+id+": 📣 Broadcast: 0 sent, 0 failed, 10 remaining of 10, starts at "+at+"\n")
	require.True(t, strings.HasPrefix(h.ask(0, admin, "/broadcast stop "+id), "🛑 Broadcast "+id+" stopped: "))
}

// /broadcasts lists a stopped broadcast whose copy in flight at the stop
// has not settled (its send held by Telegram) as stopped, as its progress
// message shows it, without the stop hint, and without the pace of the
// spread it no longer is (it was listed above "To stop one: /broadcast
// stop <id>", with its pace); the hint comes back with a broadcast that
// can be stopped (a scheduled one), which alone shows its start.
func TestAStoppedBroadcastIsListedAsStoppedWithoutTheStopHint(t *testing.T) {
	t.Parallel()
	h, r, admin := startedAdmin(t)
	ctx := t.Context()
	h.addKnownChats(r, 30_000, 4) // and the admin's: 5 chats
	for chat := range int64(4) {
		h.emu.InjectFault(tgemu.Delay(time.Minute).For("sendMessage").ForChat(30_000 + chat))
	}
	// Spread over 1 min: the first copy at once, the next 12 s later;
	// any copy but the admin's is held.
	pv, buttons := h.broadcastPreview("over 1m 📣 one held")
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, "📣 Sending to 5 chats.", toast)
	id := h.trackedID("")
	var since time.Time // when one copy was first seen in flight (zero: none now)
	require.Eventually(t, func() bool {
		st, err := r.app.Store().Inspector().Stats(ctx, tgjob.QueueNotify, 1)
		switch {
		case err != nil || st.InFlight != 1:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		}
		// Still in flight 500 ms on: a held copy, not the admin's on its
		// way (the emulator answers that at once).
		return !since.IsZero() && time.Since(since) >= 500*time.Millisecond
	}, 20*time.Second, 10*time.Millisecond, "a held copy is in flight")
	require.Eventually(t, func() bool { // its progress message first, so the next answer is the stop's
		return len(h.progressMsgs()) == 1
	}, wait, 10*time.Millisecond)
	stop := h.ask(0, admin, "/broadcast stop "+id)
	p, err := r.app.Notifier().Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, p.StopInFlight, stop)
	require.Equal(t, fmt.Sprintf("🛑 Broadcast %s stopped: %d sent before the stop, %d cancelled, 1 in flight at the stop (each counted sent or cancelled as it settles).", id, p.StopSent, p.Cancelled), stop)
	stopped := fmt.Sprintf("• %s: 🛑 Broadcast stopped: %d sent before the stop, 0 failed, %d cancelled of 5, 1 in flight", id, p.StopSent, p.Cancelled)
	require.Equal(t, "📣 Broadcasts:\n"+stopped, h.ask(0, admin, "/broadcasts"), "stopped: no stop hint, no pace")

	later, toast := h.scheduleLater(id)
	require.True(t, strings.HasPrefix(toast, "🕘 Scheduled for "), toast)
	lines := map[string]string{
		id:    stopped,
		later: "• " + later + ": 📣 Broadcast: 0 sent, 0 failed, 5 remaining of 5, starts at " + strings.TrimSuffix(strings.TrimPrefix(toast, "🕘 Scheduled for "), "."),
	}
	ids := []string{id, later}
	slices.Sort(ids)
	require.Equal(t, "📣 Broadcasts:\n"+lines[ids[0]]+"\n"+lines[ids[1]]+"\nTo stop a running or scheduled one: /broadcast stop <id>",
		h.ask(0, admin, "/broadcasts"), "the hint with one that can be stopped; the stopped one still as it was")
}

// A text too long for one message (ending in a space, kept as typed)
// goes to each chat in two parts, and is still counted in chats everywhere, as the preview counts them: the
// preview, the Send toast, the audit and the final progress message all
// say 6 chats (not 12 messages); each chat gets both parts, in order.
func TestSplitBroadcastIsCountedInChats(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	h.addKnownChats(r, 40_000, 5)         // and the admin's: 6 chats
	text := strings.Repeat("long ", 1000) // 5,000 characters: two parts
	h.say(0, user(adminID, "Admin"), "/broadcast "+text)
	var pv tgemu.Message // the preview quotes the text: its last part has the count and the buttons
	require.Eventually(t, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if strings.Contains(m.Text, "It will reach 6 chats") {
				pv = m
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond)
	_, buttons := keyboardOf(t, pv.ReplyMarkup)
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, "📣 Sending to 6 chats.", toast)
	final := "✅ Broadcast done: 6 sent, 0 failed, 0 remaining of 6"
	require.Eventually(t, func() bool {
		for _, m := range h.progressMsgs() {
			if m.CurrentText() == final {
				return true
			}
		}
		return false
	}, wait, 20*time.Millisecond, "the final progress counts chats")
	for c := int64(40_000); c < 40_005; c++ {
		var got []string
		for _, m := range h.emu.Messages(c) {
			got = append(got, m.Text)
		}
		require.Len(t, got, 2, "chat %d: both parts", c)
		require.Equal(t, strings.TrimSpace(text), strings.TrimSpace(got[0]+got[1]), "chat %d: in order", c)
	}
	last, err := r.app.audit.Last(t.Context(), 1)
	require.NoError(t, err)
	require.Regexp(t, `^bc_\w+ to 6 chats$`, last[0].Detail)
}

// TestProgressEditsPastTheReplyWindowKeepToTheBulkBudget: the emulator
// counts a message to the admin's chat as bulk once a second has run from
// the admin's last update (tgemu.Limits.ReplyWindow, one reading of
// Telegram's unpublished rule); a broadcast to 5,000 chats fills the bulk
// budget for about 5 s while its progress message is edited every 200 ms.
// Every edit after that second must be on the bulk budget the copies fill,
// not on the reply budget: the emulator answers no 429 (newHarnessEmu's
// end check), every chat gets its copy, and the progress message was
// edited while copies were still going out (else the check proves
// nothing).
func TestProgressEditsPastTheReplyWindowKeepToTheBulkBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 5,000 copies")
	}
	t.Parallel()
	lim := harnessLimits()
	lim.ReplyWindow = time.Second
	h := newHarnessEmu(t, []tgemu.Option{tgemu.WithLimits(lim)})
	r := h.start(nil)
	h.waitLeader(r)
	const chatsN = 5000
	h.addKnownChats(r, 500_000, chatsN-1)
	const text = "📣 past the reply window"
	id := h.sendBroadcast(text)
	h.waitBroadcast(r, id, "every copy settled", notifier.Progress.Done)
	require.Len(t, h.copiesPerChat(text), chatsN, "every chat received the copy")

	var firstCopy, lastCopy time.Time // the admin tapped Send before the first
	for _, m := range h.emu.AllMessages() {
		if m.Text == text {
			if firstCopy.IsZero() {
				firstCopy = m.Time
			}
			lastCopy = m.Time
		}
	}
	editsDuring := 0
	for _, q := range h.emu.Requests() {
		if strings.EqualFold(q.Method, "editMessageText") && q.ChatID == adminID && q.HTTPStatus == 200 &&
			q.Time.After(firstCopy.Add(lim.ReplyWindow)) && q.Time.Before(lastCopy) {
			editsDuring++
		}
	}
	t.Logf("copies from %s to %s; %d progress edits in between, past the reply window", firstCopy.Format("15:04:05.000"), lastCopy.Format("15:04:05.000"), editsDuring)
	require.Positive(t, editsDuring, "progress edits went out while the copies filled the bulk budget, over a second after the admin's tap")
}
