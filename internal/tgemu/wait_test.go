package tgemu_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

func TestWaitForMessages(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), testkit.Unlimited("the wait helpers, not the limits (limits_test.go)"))
	b := newBot(t, emu)

	got := make(chan []tgemu.Message, 1)
	go func() {
		msgs, err := emu.WaitForMessages(ctx, 10, 3)
		require.NoError(t, err)
		got <- msgs
	}()
	for _, text := range []string{"a", "b", "c"} {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 10, Text: text})
		require.NoError(t, err)
	}
	msgs := <-got
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		require.Equal(t, i+1, m.ID)
		require.Equal(t, int64(10), m.ChatID)
		require.False(t, m.Time.IsZero())
	}
	require.Equal(t, []string{"a", "b", "c"}, []string{msgs[0].Text, msgs[1].Text, msgs[2].Text})

	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	partial, err := emu.WaitForMessages(tctx, 10, 4)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "chat 10 got 3 of 4 messages")
	require.Len(t, partial, 3)
}

func TestFanOutToManyChats(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), testkit.Unlimited("the wait helpers, not the limits (limits_test.go)"))
	b := newBot(t, emu)
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			chatID := int64(i + 1)
			if i%2 == 1 {
				chatID = -chatID
			}
			_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chatID, Text: "broadcast"})
			require.NoError(t, err)
		})
	}
	all, err := emu.WaitForTotalMessages(ctx, n)
	require.NoError(t, err)
	wg.Wait()
	require.Len(t, all, n)
	for i := 1; i < len(all); i++ {
		require.False(t, all[i].Time.Before(all[i-1].Time), "ordered by time")
	}
	require.Len(t, emu.Chats(), n)
	require.Equal(t, n, emu.Stats().Sent)
	require.Len(t, emu.Requests(), n)

	emu.SetAllowAnyChat(false)
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 100000, Text: "x"})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
}
