package tgemu_test

import (
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

func TestLimitsRealClockAndDisabled(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(),
		tgemu.WithLimits(tgemu.Limits{Private: tgemu.Rate{Messages: 2, Per: 400 * time.Millisecond}}))
	b := newBot(t, emu)
	require.Equal(t, -1, send(ctx, t, b, 1))
	require.Equal(t, -1, send(ctx, t, b, 1))
	require.Equal(t, 1, send(ctx, t, b, 1), "sub-second waits round up to 1 s")
	time.Sleep(450 * time.Millisecond)
	require.Equal(t, -1, send(ctx, t, b, 1))

	emu.SetLimits(tgemu.Limits{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { require.Equal(t, -1, send(ctx, t, b, int64(i%3+1))) })
	}
	wg.Wait()
	require.Equal(t, 1, emu.Stats().TooManyRequests)
	require.Equal(t, 53, emu.Stats().Sent)
	require.Greater(t, emu.MaxAccepted(time.Second), 30)
}

func TestConcurrentSendsStayWithinLimits(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat())
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
}

// With Limits.Reply set, a reply (reply_parameters) counts against the
// reply budget and anything else against Global: with Global spent, replies
// still go through up to Reply, and the reverse.
func TestReplyBudgetIsApartFromGlobal(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
		tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 3, Per: time.Second}, Reply: tgemu.Rate{Messages: 5, Per: time.Second}}))
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
