package app

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// floodWindow is the window of the flood tests (FLOOD_WINDOW): short, so a
// test sees a window end; the counts are the defaults.
const floodWindow = 3 * time.Second

// countTexts counts chat's messages: the notices and the rest.
func (h *harness) countTexts(chat int64) (notices, others int) {
	for _, m := range h.emu.Messages(chat) {
		if m.CurrentText() == flood.NoticeText {
			notices++
		} else {
			others++
		}
	}
	return notices, others
}

// metric returns the value of the /metrics line starting with series.
func (h *harness) metric(r *running, series string) string {
	h.t.Helper()
	code, body := h.get(r, "/metrics")
	require.Equal(h.t, 200, code)
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

// droppedTotal is the sum of r's codemojex_flood_dropped_total over the
// reasons.
func (h *harness) droppedTotal(r *running) int {
	h.t.Helper()
	total := 0
	for _, reason := range flood.Reasons() {
		var n int
		_, err := fmt.Sscan(h.metric(r, fmt.Sprintf(`codemojex_flood_dropped_total{reason=%q}`, reason)), &n)
		require.NoError(h.t, err)
		total += n
	}
	return total
}

// Floods are dropped at intake, in private and in groups, by one user or by
// 50 accounts together: the chat gets the replies of the updates within
// the limit and one notice per window, the drops are counted by reason in
// /metrics and the chat is listed by /lanes; a quiet chat is answered
// meanwhile; and once the window has ended, the flooder's next command is
// answered at once.
func TestFloodsAreDroppedAndTheFloodersNextCommandIsAnswered(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		chat    int64
		senders int // accounts flooding, each sending per updates
		per     int
		kept    int // updates handled: replies
		reason  flood.Reason
	}{
		{name: "one user floods a private chat", chat: 801, senders: 1, per: 300, kept: flood.DefaultUserMessages, reason: flood.UserMessages},
		{name: "one user floods a group", chat: -100801, senders: 1, per: 300, kept: flood.DefaultUserMessages, reason: flood.UserMessages},
		{name: "50 accounts raid a group", chat: -100802, senders: 50, per: 6, kept: flood.DefaultChatMessages, reason: flood.ChatMessages},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, "FLOOD_WINDOW="+floodWindow.String())
			r := h.start(nil)
			h.waitLeader(r)
			quiet := user(890, "Quiet")
			sender := func(i int) models.User {
				if tc.chat > 0 {
					return user(tc.chat, "Flooder")
				}
				return user(int64(8000+i), fmt.Sprint("Raider ", i))
			}
			start := time.Now()
			for n := range tc.per {
				for i := range tc.senders {
					h.say(tc.chat, sender(i), "/help")
				}
				if n == tc.per/2 {
					require.Contains(t, h.ask(0, quiet, "/start"), "Welcome", "a quiet chat is answered during the flood")
				}
			}
			total := tc.senders * tc.per
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			// Every update confirmed by the poller is recorded or dropped.
			require.NoError(t, h.emu.WaitUntil(ctx, func() bool { return len(h.emu.PendingUpdates()) == 0 }))
			elapsed := time.Since(start)
			// The chat is listed until a window after its last drop: the
			// server's score, on the app's clock. Each listing check is
			// judged against it, on the clock read before and after the
			// check: listed if it ended before, unlisted if it began after
			// (either across), so a loaded machine changes which answer is
			// right, not whether the check holds. They run right after the
			// flood (before the counts: a /metrics scrape takes up to 0.5 s
			// under load), the cheapest first, which must run within the
			// window.
			untilMS, err := h.c.Do(ctx, h.c.B().Zscore().Key(r.app.floods.Limiter().LimitedKey()).Member(fmt.Sprint(tc.chat)).Build()).AsInt64()
			require.NoError(t, err, "the chat is listed right after the flood (its listing ends a window after its last drop)")
			until := time.UnixMilli(untilMS)
			listed := func(what string, check func() bool) {
				t.Helper()
				before := time.Now()
				got := check()
				after := time.Now()
				t.Logf("%s checked from %v to %v before the listing's end", what, until.Sub(before).Round(time.Millisecond), until.Sub(after).Round(time.Millisecond))
				switch {
				case after.Before(until):
					require.True(t, got, "%s: listed (checked %v before the listing's end)", what, until.Sub(after))
				case !before.Before(until):
					require.False(t, got, "%s: no longer listed (checked %v after the listing's end)", what, before.Sub(until))
				}
			}
			require.Less(t, time.Now(), until, "the first listing check runs within a window of the last drop")
			listed("metric", func() bool {
				v := h.metric(r, "codemojex_flood_limited_chats")
				require.Contains(t, []string{"0", "1"}, v)
				return v == "1"
			})
			listed("LimitedChats", func() bool {
				ls, err := r.app.Admin().LimitedChats(context.Background(), 0)
				require.NoError(t, err)
				if len(ls) == 0 {
					return false
				}
				require.Len(t, ls, 1)
				require.Equal(t, tc.chat, ls[0].Chat)
				require.True(t, until.Equal(ls[0].Until), "listed until %v, not %v", until, ls[0].Until)
				return true
			})
			listed("/lanes", func() bool {
				return strings.Contains(h.ask(0, user(adminID, "Admin"), "/lanes"), fmt.Sprintf("• chat %d limited, listed until", tc.chat))
			})
			var dropped int
			_, err = fmt.Sscan(h.metric(r, fmt.Sprintf(`codemojex_flood_dropped_total{reason=%q}`, tc.reason)), &dropped)
			require.NoError(t, err)
			kept := total - dropped
			droppedBefore := h.droppedTotal(r)
			require.Equal(t, dropped, droppedBefore, "every drop of the flood by %s", tc.reason)
			// The budget: the limit at once, then limit per window.
			refill := int(elapsed*time.Duration(tc.kept)/floodWindow) + 1
			t.Logf("%d updates in %v: %d handled, %d dropped", total, elapsed.Round(time.Millisecond), kept, dropped)
			require.GreaterOrEqual(t, kept, tc.kept)
			require.LessOrEqual(t, kept, tc.kept+refill)
			require.NoError(t, h.emu.WaitUntil(ctx, func() bool {
				n, o := h.countTexts(tc.chat)
				return n >= 1 && o >= kept
			}))
			// One notice per window: the flood's updates were recorded
			// within elapsed, which spans 1 + elapsed/window windows at most
			// (one, unless a loaded machine stretched the flood past 3 s).
			notices, others := h.countTexts(tc.chat)
			require.Equal(t, kept, others, "one reply per update within the limit")
			require.GreaterOrEqual(t, notices, 1, "a notice")
			require.LessOrEqual(t, notices, 1+int(elapsed/floodWindow), "one notice per window")
			require.Equal(t, "0", h.metric(r, "codemojex_update_queue_depth"), "nothing dropped waits on the update queue")

			// A window after the flood (its last update was recorded by
			// start + elapsed, so its budgets are full again and its
			// listing has ended), the flooder's next command is recorded,
			// not dropped, and answered, and no second notice came.
			time.Sleep(time.Until(start.Add(elapsed + floodWindow)))
			ls, err := r.app.Admin().LimitedChats(context.Background(), 0)
			require.NoError(t, err)
			require.Empty(t, ls, "the listing ends a window after the last drop")
			require.Contains(t, h.ask(tc.chat, sender(0), "/start"), "Welcome")
			require.Equal(t, droppedBefore, h.droppedTotal(r), "the command after the window is not dropped")
			after, _ := h.countTexts(tc.chat)
			require.Equal(t, notices, after, "no notice for the command after the window")
		})
	}
}

// A tap over the limit is still answered, with a toast, so the client's
// spinner stops; it changes nothing on the board.
func TestDroppedTapIsAnsweredWithAToast(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "FLOOD_USER_TAPS=3", "FLOOD_WINDOW=1m")
	r := h.startWithSecret(0, 1, 2, 3)
	ann := user(811, "Ann")
	h.ask(0, ann, "/play")
	b, _ := h.board(ann.ID)
	_, data := keyboardOf(t, b.ReplyMarkup)
	var ids []string
	for range 8 {
		u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: ann.ID, MessageID: b.ID, From: ann, Data: data["🍎"]})
		require.NoError(t, err)
		ids = append(ids, u.CallbackQuery.ID)
	}
	toasts := 0
	for _, id := range ids {
		if h.answerOf(id) == flood.ToastText {
			toasts++
		}
	}
	require.Equal(t, 5, toasts, "8 taps, 3 within the limit: 5 toasts")
	require.Equal(t, "5", h.metric(r, `codemojex_flood_dropped_total{reason="user_taps"}`))
	h.waitBoard(ann.ID, boardRules+"\n\n✏️ 🍎 🍎 🍎 _\n10 of 10 attempts left.")
	notices, _ := h.countTexts(ann.ID)
	require.Zero(t, notices, "a tap's notice is its toast")
}

// Normal play under the default limits is never limited: a private game
// played by taps as fast as the emulator answers (4 fruit taps and ✅ per
// round), a group board tapped by three players with typed guesses
// between, and an admin's burst of commands.
func TestNormalPlayIsNeverLimited(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.startWithSecret(0, 1, 2, 3)
	ann := user(821, "Ann")
	h.ask(0, ann, "/play")
	for range 3 {
		for _, s := range []string{"🍎", "🍎", "🍌", "🍌"} {
			require.Empty(t, h.tap(ann.ID, ann, s))
		}
		require.NotEqual(t, flood.ToastText, h.tap(ann.ID, ann, "✅"))
	}
	const group = int64(-100821)
	players := []models.User{user(822, "Bo"), user(823, "Cy"), user(824, "Di")}
	h.ask(group, players[0], "/play")
	for _, p := range players {
		for _, s := range []string{"🍎", "🍌", "🍌", "🍎"} {
			require.Empty(t, h.tap(group, p, s))
		}
		require.NotEqual(t, flood.ToastText, h.tap(group, p, "✅"))
		require.Contains(t, h.ask(group, p, "/guess 🍋🍋🍋🍋"), "attempt")
	}
	admin := user(adminID, "Admin")
	for range 2 * flood.DefaultUserMessages {
		h.say(0, admin, "/lanes")
	}
	h.texts(adminID, 2*flood.DefaultUserMessages)
	for _, reason := range flood.Reasons() {
		require.Equal(t, "0", h.metric(r, fmt.Sprintf(`codemojex_flood_dropped_total{reason=%q}`, reason)))
	}
	for _, chat := range []int64{ann.ID, group, adminID} {
		notices, _ := h.countTexts(chat)
		require.Zero(t, notices)
	}
}

// A delivered reply that is never edited leaves no per-message key (no
// message-id record, no idempotency key once its update is handled); a
// game board, edited later, keeps its message id. The figures of a chat
// at rest are logged (bytes of every key of the namespace per chat).
func TestDeliveredMessagesLeaveOnlyWhatIsEditedLater(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.startWithSecret(0, 1, 2, 3)
	ctx := context.Background()
	const chats = 50
	for c := range chats {
		h.say(0, user(int64(30_000+c), "P"), "/start")
	}
	for c := range chats {
		h.texts(int64(30_000+c), 1)
	}
	keysOf := func(pattern string) []string {
		ks, err := valkeytest.Keys(ctx, h.c, "{"+h.tag+"}:"+pattern)
		require.NoError(t, err)
		return ks
	}
	require.Eventually(t, func() bool { return h.metric(r, `codemojex_worker_sent_total{queue="reply"}`) == fmt.Sprint(chats) },
		wait, 10*time.Millisecond)
	require.Eventually(t, func() bool { return len(keysOf("n:once:m:*")) == 0 }, wait, 10*time.Millisecond,
		"idempotency keys of handled updates: %v", keysOf("n:once:m:*"))
	require.Empty(t, keysOf("n:msg:*"), "no message id kept for a message never edited")
	var bytes int64
	all := keysOf("*")
	for _, k := range all {
		bytes += h.keyBytes(k)
	}
	t.Logf("%d chats after one /start each, delivered: %d keys, %d bytes (%d bytes/chat)", chats, len(all), bytes, bytes/chats)

	ann := user(30_999, "Ann")
	h.ask(0, ann, "/play")
	require.Eventually(t, func() bool { return len(keysOf("n:msg:*")) == 1 }, wait, 10*time.Millisecond, "the board's message id is kept")
}

// A chat's full reply lane (REPLY_LANE_DEPTH) holds back that chat's
// further updates (each refusal counted; they wait, no attempt used) while
// every other chat's replies still go out; once the lane drains they are
// handled and answered: none of the six dropped.
func TestAFullReplyLaneHoldsBackThatChatsUpdatesOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "REPLY_LANE_DEPTH=3", "FLOOD_USER_MESSAGES=0")
	r := h.start(nil)
	h.waitLeader(r)
	ctx := context.Background()
	require.NoError(t, r.app.Store().Inspector().Pause(ctx, -1)) // replies wait on their lanes
	busy, calm := user(840, "Busy"), user(841, "Calm")
	for range 6 {
		h.say(0, busy, "/help")
	}
	h.say(0, calm, "/start")
	require.Eventually(t, func() bool {
		return h.metric(r, `codemojex_updates_handled_total{result="lane_full"}`) != "" && h.metric(r, "codemojex_replies_refused_total") != "0"
	}, wait, 10*time.Millisecond, "the busy chat's fourth update waits")
	require.Eventually(t, func() bool { return h.metric(r, `codemojex_updates_handled_total{result="ok"}`) == "4" }, wait, 10*time.Millisecond,
		"three of the busy chat's and the calm chat's")
	require.NoError(t, r.app.Store().Inspector().Resume(ctx))
	require.Contains(t, h.texts(calm.ID, 1)[0], "Welcome")
	require.Len(t, h.texts(busy.ID, 6), 6, "the held-back updates answered once the lane drained")
	require.Equal(t, "7", h.metric(r, `codemojex_updates_handled_total{result="ok"}`))
	h.quiet(busy.ID, 300*time.Millisecond)
}

// The limits live in Valkey: a process that takes over the intake (the
// first one stopped, as in a restart or a failover) finds the flooder's
// budget and the chat's notice where the first left them.
func TestLimitsAreSharedByProcessesAndSurviveARestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "FLOOD_WINDOW=10m") // one message more per minute: none within the test
	r1 := h.start(nil)
	h.waitLeader(r1)
	flooder := user(851, "Flooder")
	for range flood.DefaultUserMessages + 5 {
		h.say(0, flooder, "/help")
	}
	require.Eventually(t, func() bool { return h.metric(r1, `codemojex_flood_dropped_total{reason="user_messages"}`) == "5" }, wait, 10*time.Millisecond)
	h.texts(flooder.ID, flood.DefaultUserMessages+1) // the replies and the notice
	r1.stop()

	r2 := h.start(nil)
	h.waitLeader(r2)
	for range 5 {
		h.say(0, flooder, "/help")
	}
	require.Eventually(t, func() bool { return h.metric(r2, `codemojex_flood_dropped_total{reason="user_messages"}`) == "5" }, wait, 10*time.Millisecond,
		"the second process drops what the first one's budget no longer allows")
	h.quiet(flooder.ID, 300*time.Millisecond)
	notices, others := h.countTexts(flooder.ID)
	require.Equal(t, []int{1, flood.DefaultUserMessages}, []int{notices, others}, "no second notice within the window")
	require.Contains(t, h.ask(0, user(852, "Other"), "/start"), "Welcome", "another user is not limited")
}

// A group's conversation that piled up while the bot could not fetch it
// (Telegram or Valkey down, the poller backing off) and comes in one
// getUpdates batch is judged by its messages' dates, as it was sent: 90
// messages of three members dated over a minute (1.5 a second, under every
// limit) are all handled and answered, with no notice; the same 90 dated
// within 10 s are a flood by their dates and are limited (the group's 30
// at once and 3/s, each member's 10 and 1/s), with one notice.
func TestABacklogIsJudgedAsItWasSent(t *testing.T) {
	t.Parallel()
	const n = 90
	cases := []struct {
		name    string
		group   int64
		span    time.Duration
		limited bool
	}{
		{name: "a minute's conversation", group: -100851, span: time.Minute},
		{name: "the same messages within 10 s", group: -100852, span: 10 * time.Second, limited: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var shift atomic.Int64 // the emulator's clock: time.Now() + shift (ns)
			h := newHarnessEmu(t, []tgemu.Option{tgemu.WithClock(func() time.Time { return time.Now().Add(time.Duration(shift.Load())) })})
			members := []models.User{user(tc.group*-10+1, "Ann"), user(tc.group*-10+2, "Bo"), user(tc.group*-10+3, "Cy")}
			for i := range n { // sent while no bot polls: the first getUpdates fetches all 90
				shift.Store(int64(-tc.span + tc.span*time.Duration(i)/n))
				h.say(tc.group, members[i%len(members)], "/help")
			}
			shift.Store(0)
			r := h.start(nil)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			require.NoError(t, h.emu.WaitUntil(ctx, func() bool { return len(h.emu.PendingUpdates()) == 0 }))
			dropped := h.droppedTotal(r)
			var handled int
			require.Eventually(t, func() bool {
				_, err := fmt.Sscan(h.metric(r, `codemojex_updates_handled_total{result="ok"}`), &handled)
				return err == nil && handled+dropped == n
			}, wait, 20*time.Millisecond, "every update handled or dropped")
			require.NoError(t, h.emu.WaitUntil(ctx, func() bool {
				_, o := h.countTexts(tc.group)
				return o >= handled
			}))
			notices, others := h.countTexts(tc.group)
			t.Logf("%d messages dated over %v, fetched at once: %d handled, %d dropped, %d notices", n, tc.span, handled, dropped, notices)
			require.Equal(t, handled, others, "one reply per handled update")
			if !tc.limited {
				require.Zero(t, dropped, "a conversation over a minute is not a flood")
				require.Zero(t, notices)
				return
			}
			require.GreaterOrEqual(t, handled, flood.DefaultChatMessages)
			require.LessOrEqual(t, handled, 60)
			require.Equal(t, 1, notices)
		})
	}
}
