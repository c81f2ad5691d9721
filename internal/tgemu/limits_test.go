package tgemu_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

func TestDefaultLimits(t *testing.T) {
	require.Equal(t, tgemu.Limits{
		Global:  tgemu.Rate{Messages: 30, Per: time.Second},
		Paid:    tgemu.Rate{Messages: 1000, Per: time.Second},
		Private: tgemu.Rate{Messages: 1, Per: time.Second},
		Group:   tgemu.Rate{Messages: 20, Per: time.Minute},
	}, tgemu.DefaultLimits())
}

func TestLimits(t *testing.T) {
	type step = limitStep
	many := func(n int, first int64, retry int) []step {
		var s []step
		for i := range n {
			s = append(s, step{chatID: first + int64(i), retry: retry})
		}
		return s
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "31st message within 1s is 429 (global 30/s)",
			steps: append(append(many(30, 1000, -1), step{chatID: 2000, retry: 1}),
				step{advance: time.Second, chatID: 2000, retry: -1}),
		},
		{
			name: "global window slides",
			steps: append(append(append(many(15, 1000, -1), step{advance: 600 * time.Millisecond}),
				many(15, 2000, -1)...),
				step{chatID: 3000, retry: 1},                                   // 30 in the last second
				step{advance: 400 * time.Millisecond, chatID: 3000, retry: -1}, // first 15 expired
			),
		},
		{
			name: "2nd message to a private chat within 1s is 429 (1/s per chat)",
			steps: []step{
				{chatID: 5, retry: -1},
				{advance: 999 * time.Millisecond, chatID: 5, retry: 1},
				{chatID: 6, retry: -1},
				{advance: time.Millisecond, chatID: 5, retry: -1},
			},
		},
		{
			name: "21st message to a group within a minute is 429 (20/min per group)",
			steps: append(repeatChat(20, -1),
				step{advance: 30 * time.Second, chatID: -1, retry: 30},
				step{advance: 29500 * time.Millisecond, chatID: -1, retry: 1}, // rounded up
				step{chatID: -2, retry: -1},
				step{advance: 500 * time.Millisecond, chatID: -1, retry: -1},
			),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			clock := newFakeClock()
			emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now), tgemu.WithAllowAnyChat())
			b := newBot(t, emu)
			want429 := 0
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				if s.chatID == 0 {
					continue
				}
				require.Equal(t, s.retry, send(ctx, t, b, s.chatID), "step %d", i)
				if s.retry >= 0 {
					want429++
				}
			}
			st := emu.Stats()
			require.Equal(t, want429, st.TooManyRequests)
			require.LessOrEqual(t, st.MaxPerSecond, 30)
			require.LessOrEqual(t, emu.MaxAccepted(time.Second), 30)
			for id, n := range st.MaxPerSecondByChat {
				if id > 0 {
					require.Equal(t, 1, n, "chat %d", id)
				}
				require.LessOrEqual(t, emu.MaxAcceptedChat(id, time.Minute), 20)
			}
		})
	}
}

func TestLimitStatsAndReplyShape(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now))
	emu.AddChat(models.Chat{ID: 1})
	emu.AddChat(models.Chat{ID: -5})
	b := newBot(t, emu)
	require.Equal(t, -1, send(ctx, t, b, 1))
	require.Equal(t, 1, send(ctx, t, b, 1))
	require.Equal(t, 1, send(ctx, t, b, 1))
	for range 20 {
		require.Equal(t, -1, send(ctx, t, b, -5))
	}
	require.Equal(t, 60, send(ctx, t, b, -5))

	st := emu.Stats()
	require.Equal(t, 3, st.TooManyRequests)
	require.Equal(t, map[int64]int{1: 2, -5: 1}, st.TooManyRequestsByChat)
	require.Equal(t, 21, st.MaxPerSecond)
	require.Equal(t, map[int64]int{1: 1, -5: 20}, st.MaxPerSecondByChat)
	require.Equal(t, 21, st.Sent)
	require.Equal(t, 3, st.Rejected)

	last := emu.SendRequests()[len(emu.SendRequests())-1]
	require.Equal(t, 429, last.HTTPStatus)
	require.Equal(t, 429, last.ErrorCode)
	require.Equal(t, "Too Many Requests: retry after 60", last.Description)
	require.Equal(t, 60, last.RetryAfter)

	code, r := rawCall(ctx, t, emu, "sendMessage", map[string][]string{"chat_id": {"1"}, "text": {"x"}})
	require.Equal(t, 429, code)
	require.Equal(t, map[string]any{"retry_after": float64(1)}, r.Parameters)
}

// Sub-second waits round up to 1 s, the window frees on the emulator's
// clock (injected: no wall-clock window), and SetLimits(Limits{}) lifts
// every limit at once.
func TestLimitsSubSecondAndDisabled(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
		tgemu.WithLimits(tgemu.Limits{Private: tgemu.Rate{Messages: 2, Per: 400 * time.Millisecond}}))
	b := newBot(t, emu)
	require.Equal(t, -1, send(ctx, t, b, 1))
	require.Equal(t, -1, send(ctx, t, b, 1))
	require.Equal(t, 1, send(ctx, t, b, 1), "sub-second waits round up to 1 s")
	clock.Advance(399 * time.Millisecond)
	require.Equal(t, 1, send(ctx, t, b, 1), "the window is still full 1 ms before its end")
	clock.Advance(time.Millisecond)
	require.Equal(t, -1, send(ctx, t, b, 1))

	emu.SetLimits(tgemu.Limits{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { require.Equal(t, -1, send(ctx, t, b, int64(i%3+1))) })
	}
	wg.Wait()
	require.Equal(t, 2, emu.Stats().TooManyRequests)
	require.Equal(t, 53, emu.Stats().Sent)
	require.Greater(t, emu.MaxAccepted(time.Second), 30)
}

func TestConcurrentSendsStayWithinLimits(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock() // stands still: every send falls in one window
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now))
	b := newBot(t, emu)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, limited := 0, 0
	for i := range 60 {
		wg.Go(func() {
			r := send(ctx, t, b, int64(i+1))
			mu.Lock()
			defer mu.Unlock()
			if r < 0 {
				accepted++
			} else {
				limited++
			}
		})
	}
	wg.Wait()
	st := emu.Stats()
	require.Equal(t, accepted, st.Sent)
	require.Equal(t, limited, st.TooManyRequests)
	require.LessOrEqual(t, st.MaxPerSecond, 30)
	require.GreaterOrEqual(t, accepted, 30, "at least one full window was accepted")
	require.Equal(t, 30, accepted, "one window, exactly the global limit")
}

// With Limits.Reply set, a reply (reply_parameters) counts against the
// reply budget and anything else against Global: with Global spent, replies
// still go through up to Reply, and the reverse.
func TestReplyBudgetIsApartFromGlobal(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
		tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 3, Per: time.Second}, Reply: tgemu.Rate{Messages: 5, Per: time.Second},
			Replies: tgemu.RepliesApart}))
	b := newBot(t, emu)
	reply := func(chat int64) error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "r",
			ReplyParameters: &models.ReplyParameters{MessageID: 1, AllowSendingWithoutReply: true}})
		return err
	}
	for c := int64(1); c <= 3; c++ {
		require.Equal(t, -1, send(ctx, t, b, c), "bulk %d", c)
	}
	require.Equal(t, 1, send(ctx, t, b, 4), "the fourth bulk message is over Global")
	for c := int64(11); c <= 15; c++ {
		require.NoError(t, reply(c), "reply %d while Global is spent", c)
	}
	var tm *bot.TooManyRequestsError
	require.ErrorAs(t, reply(16), &tm, "the sixth reply is over Reply")
	clock.Advance(time.Second)
	require.Equal(t, -1, send(ctx, t, b, 5), "Global refilled")
	require.NoError(t, reply(17), "Reply refilled")
	require.Equal(t, 2, emu.Stats().TooManyRequests)

	// A message to a chat whose user just wrote is a reply too, without
	// reply_parameters; a minute later it is bulk again.
	clock.Advance(time.Second)
	for c := int64(21); c <= 23; c++ {
		require.Equal(t, -1, send(ctx, t, b, c), "bulk %d", c)
	}
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 30, Text: "/help"})
	require.NoError(t, err)
	require.Equal(t, -1, send(ctx, t, b, 30), "an answer to the chat that just wrote counts as a reply")
	require.Equal(t, 1, send(ctx, t, b, 31), "a chat that did not write: bulk, over Global")
	clock.Advance(tgemu.ReplyWindow)
	for c := int64(41); c <= 43; c++ {
		require.Equal(t, -1, send(ctx, t, b, c), "bulk %d", c)
	}
	require.Equal(t, 1, send(ctx, t, b, 30), "a minute after the user wrote: bulk again")
}

// Limits.ReplyWindow: a message to a chat whose user wrote counts as a
// reply until the window (a minute by default) has run from the user's
// update, and as bulk from then on.
func TestAChatsMessagesAreRepliesOnlyWithinTheReplyWindow(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration // Limits.ReplyWindow
		runs   time.Duration // the window that runs in fact
	}{
		{name: "default: a minute", runs: tgemu.ReplyWindow},
		{name: "set: 5s", window: 5 * time.Second, runs: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			clock := newFakeClock()
			emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
				tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 1, Per: 100 * time.Millisecond},
					Reply: tgemu.Rate{Messages: 100, Per: time.Second}, Replies: tgemu.RepliesApart, ReplyWindow: tt.window}))
			b := newBot(t, emu)
			_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 30, Text: "/help"})
			require.NoError(t, err)
			require.Equal(t, -1, send(ctx, t, b, 31), "bulk: the global window's one message")
			clock.Advance(tt.runs - time.Millisecond)
			require.Equal(t, -1, send(ctx, t, b, 32), "bulk again, the global window refilled")
			require.Equal(t, -1, send(ctx, t, b, 30), "a reply just inside the window: not held by the spent global window")
			clock.Advance(time.Millisecond)
			require.Equal(t, 1, send(ctx, t, b, 30), "once the window has run: bulk, over the spent global window")
		})
	}
}

// Limits.Replies: with Reply set, RepliesInGlobal (the zero value) counts a
// reply against Reply and Global both, RepliesApart against Reply only. A
// reply is a send with reply_parameters or to a chat whose user just wrote.
func TestRepliesCountInGlobalUnlessApart(t *testing.T) {
	tests := []struct {
		name    string
		rule    tgemu.ReplyRule
		replies []int // retry_after of replies 1..6 after 3 bulk sends fill Global (-1 accepted)
		bulk    int   // retry_after of a bulk send after those replies
		heard   int   // retry_after of a send to a chat whose user just wrote
	}{
		{name: "in global (zero value)", rule: tgemu.RepliesInGlobal, replies: []int{1, 1, 1, 1, 1, 1}, bulk: 1, heard: 1},
		{name: "apart", rule: tgemu.RepliesApart, replies: []int{-1, -1, -1, -1, -1, 1}, bulk: 1, heard: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			clock := newFakeClock()
			emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
				tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 3, Per: time.Second},
					Reply: tgemu.Rate{Messages: 5, Per: time.Second}, Replies: tc.rule}))
			b := newBot(t, emu)
			for c := int64(1); c <= 3; c++ {
				require.Equal(t, -1, send(ctx, t, b, c), "bulk %d", c)
			}
			for i, want := range tc.replies {
				require.Equal(t, want, sendReply(ctx, t, b, int64(11+i)), "reply %d while Global is full", i+1)
			}
			require.Equal(t, tc.bulk, send(ctx, t, b, 4), "bulk while Global is full")
			_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 30, Text: "/help"})
			require.NoError(t, err)
			require.Equal(t, tc.heard, send(ctx, t, b, 30), "the answer to a chat that just wrote")

			// A second later both windows are empty: replies fill Reply (5)
			// and, in Global, also take Global's room (3) from bulk.
			clock.Advance(time.Second)
			for c := int64(41); c <= 43; c++ {
				require.Equal(t, -1, sendReply(ctx, t, b, c), "reply %d", c)
			}
			wantBulk := -1
			if tc.rule == tgemu.RepliesInGlobal {
				wantBulk = 1
			}
			require.Equal(t, wantBulk, send(ctx, t, b, 50), "bulk after 3 replies filled Global, or did not")
		})
	}
	// Without a Reply window, the rule changes nothing: replies are bulk.
	for _, rule := range []tgemu.ReplyRule{tgemu.RepliesInGlobal, tgemu.RepliesApart} {
		ctx := testCtx(t)
		clock := newFakeClock()
		emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
			tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 2, Per: time.Second}, Replies: rule}))
		b := newBot(t, emu)
		require.Equal(t, -1, sendReply(ctx, t, b, 1))
		require.Equal(t, -1, send(ctx, t, b, 2))
		require.Equal(t, 1, sendReply(ctx, t, b, 3), "rule %d", rule)
	}
}

// Limits.RetryAfterCap: each 429 answered while the previous retry_after
// runs doubles it, up to the cap; a send after it ran out is judged afresh.
// Off (0), retry_after is the window's own wait and an early retry that
// finds room is accepted.
func TestRetryAfterGrowsForABotSendingIntoIt(t *testing.T) {
	type step struct {
		advance time.Duration
		retry   int // -1 accepted
	}
	tests := []struct {
		name  string
		cap   time.Duration
		steps []step
	}{
		{name: "growing, capped at 10 s", cap: 10 * time.Second, steps: []step{
			{0, -1}, {0, 1}, // the window is full: its own wait, 1 s
			{500 * time.Millisecond, 2}, // inside the 1 s penalty: doubled
			{time.Second, 4},            // inside the 2 s one
			{3 * time.Second, 8},
			{7 * time.Second, 10}, // capped
			{9 * time.Second, 10},
			{10 * time.Second, -1}, // waited it out: judged afresh (the window has room)
			{0, 1},                 // full again: back to its own wait
			{time.Second, -1},
		}},
		{name: "off: the window's own wait", steps: []step{
			{0, -1}, {0, 1},
			{500 * time.Millisecond, 1},
			{500 * time.Millisecond, -1}, // the window has room: accepted
			{0, 1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			clock := newFakeClock()
			emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
				tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 1, Per: time.Second}, RetryAfterCap: tc.cap}))
			b := newBot(t, emu)
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				require.Equal(t, s.retry, send(ctx, t, b, int64(i+1)), "step %d", i)
			}
		})
	}
	// The penalty is the refusing window's: with a chat's window refusing,
	// other chats are not held.
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
		tgemu.WithLimits(tgemu.Limits{Private: tgemu.Rate{Messages: 1, Per: time.Second}, RetryAfterCap: time.Minute}))
	b := newBot(t, emu)
	require.Equal(t, -1, send(ctx, t, b, 1))
	require.Equal(t, 1, send(ctx, t, b, 1))
	require.Equal(t, 2, send(ctx, t, b, 1))
	require.Equal(t, -1, send(ctx, t, b, 2), "another chat")
	clock.Advance(1500 * time.Millisecond)
	require.Equal(t, 4, send(ctx, t, b, 1), "room in the window, but inside the 2 s penalty")
}

// ScaledLimits holds paid broadcasts to Telegram's 1,000 messages/s
// (Limits.Paid), whatever the free global rate.
func TestScaledLimitsCapPaidSends(t *testing.T) {
	l := tgemu.ScaledLimits(30, 1, 20)
	require.Equal(t, tgemu.Rate{Messages: 1000, Per: time.Second}, l.Paid)
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now), tgemu.WithLimits(l))
	b := newBot(t, emu)
	for c := int64(1); c <= 1000; c++ {
		require.Equal(t, -1, sendPaid(ctx, t, b, c), "paid %d", c)
	}
	require.Equal(t, 1, sendPaid(ctx, t, b, 1001), "the 1,001st paid send within 1 s")
	require.Equal(t, -1, send(ctx, t, b, 2001), "free sends have a window of their own")
	clock.Advance(time.Second)
	require.Equal(t, -1, sendPaid(ctx, t, b, 1001))
	require.Equal(t, 1001, emu.PaidSent())
}

// sendReply is send with reply_parameters.
func sendReply(ctx context.Context, t *testing.T, b *bot.Bot, chatID int64) int {
	t.Helper()
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chatID, Text: "r",
		ReplyParameters: &models.ReplyParameters{MessageID: 1, AllowSendingWithoutReply: true}})
	return retryOf(t, err)
}

// sendPaid is send with allow_paid_broadcast.
func sendPaid(ctx context.Context, t *testing.T, b *bot.Bot, chatID int64) int {
	t.Helper()
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chatID, Text: "p", AllowPaidBroadcast: true})
	return retryOf(t, err)
}

// The sent-time statistics count edits as the limiter does: a message and
// two edits of it in one second are 3 sends in that second (MaxAccepted,
// MaxAcceptedChat, Stats.MaxPerSecond), 1 message sent, 2 edits.
func TestSentTimeStatisticsCountEdits(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now), testkit.Unlimited("counts sends, refuses none"))
	require.Equal(t, tgemu.Limits{}, emu.Limits())
	b := newBot(t, emu)
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(1), Text: "m"})
	require.NoError(t, err)
	for i, text := range []string{"a", "b"} {
		clock.Advance(100 * time.Millisecond)
		_, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(1), MessageID: m.ID, Text: text})
		require.NoError(t, err, "edit %d", i)
	}
	require.Equal(t, 3, emu.MaxAccepted(time.Second))
	require.Equal(t, 3, emu.MaxAcceptedChat(1, time.Second))
	st := emu.Stats()
	require.Equal(t, 3, st.MaxPerSecond)
	require.Equal(t, map[int64]int{1: 3}, st.MaxPerSecondByChat)
	require.Equal(t, 1, st.Sent)
	require.Equal(t, 2, st.Edits)
}

// A send overtaken on its way to the flood limiter (its handler preempted
// after it read the clock: a CPU-starved host) is recorded when the
// limiter takes it, so the windows hold the accepted sends' times in the
// order they were taken and every 429 is called for by those times. At 2
// a second: X reads the clock at 0 s and is held; Y, at 0.020 s, is taken
// first; then X. Recorded at 0 s behind Y's 0.020 s, X was never dropped
// from the window before Y (it drops the oldest-taken first) and Z, at
// 1.005 s, was answered 429 with one send in the second before it (Y):
// the 429 with 49 sends in the second before it at a limit of 50 of a busy
// CI run of internal/failuretest's WorkerKilledMidBurst. Recorded when
// taken (0.020 s), X and Y hold Z's second; at 1.025 s both have left it.
func TestAnOvertakenSendIsRecordedWhenTheLimiterTakesIt(t *testing.T) {
	ctx := testCtx(t)
	clock := &heldClock{fakeClock: newFakeClock(), reached: make(chan struct{}), release: make(chan struct{})}
	const limit = 2
	emu := testkit.NewEmulator(t, tgemu.WithClock(clock.Now), tgemu.WithAllowAnyChat(),
		tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: limit, Per: time.Second}, Private: tgemu.Rate{Messages: 100, Per: time.Second}}))
	b := newBot(t, emu)
	const chat = 7

	// X's handler reads the clock for its record, its fault, then its
	// processing: held after that third reading.
	clock.holdCall(3)
	x := make(chan error, 1)
	go func() { x <- sendErr(ctx, b, chat) }()
	select {
	case <-clock.reached:
	case <-ctx.Done():
		t.Fatal("X never reached the held clock reading")
	}
	clock.Advance(20 * time.Millisecond)
	require.Equal(t, -1, send(ctx, t, b, chat), "Y, taken while X is held")
	close(clock.release)
	require.NoError(t, <-x, "X")

	clock.Advance(985 * time.Millisecond) // 1.005 s
	require.Equal(t, 1, send(ctx, t, b, chat), "Z: X and Y, both taken at 0.020 s, hold its second")
	clock.Advance(20 * time.Millisecond) // 1.025 s
	require.Equal(t, -1, send(ctx, t, b, chat), "W: X and Y have left its second")

	for _, th := range tgemu.Throttles(emu.SendRequests()) {
		require.GreaterOrEqual(t, th.Global, limit, "a 429 at %v with %d sends in the second before it", th.Time, th.Global)
	}
	msgs := emu.Messages(chat)
	require.Len(t, msgs, 3)
	for i := 1; i < len(msgs); i++ {
		require.False(t, msgs[i].Time.Before(msgs[i-1].Time), "message %d recorded before message %d: %v", msgs[i].ID, msgs[i-1].ID, msgs)
	}
}

// heldClock is a fakeClock that, once told to (holdCall), holds its n-th
// call from then on: the call reads the time, reports it on reached and
// waits for release (at most 5 s) before returning that reading, as a
// goroutine preempted right after reading the clock would.
type heldClock struct {
	*fakeClock
	mu      sync.Mutex
	left    int // calls until the held one; 0: none held
	reached chan struct{}
	release chan struct{}
}

func (c *heldClock) holdCall(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.left = n
}

func (c *heldClock) Now() time.Time {
	now := c.fakeClock.Now()
	c.mu.Lock()
	hold := false
	if c.left > 0 {
		c.left--
		hold = c.left == 0
	}
	c.mu.Unlock()
	if hold {
		close(c.reached)
		select {
		case <-c.release:
		case <-time.After(5 * time.Second):
		}
	}
	return now
}
