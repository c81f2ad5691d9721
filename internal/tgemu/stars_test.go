package tgemu_test

import (
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// Paid sends (allow_paid_broadcast) have their own window, apart from the
// global one, are charged 0.1 Star each, and are refused with
// CannotPayDescription once the balance cannot cover one more; free sends
// are never charged nor refused for the balance.
func TestPaidBroadcastWindowAndStars(t *testing.T) {
	ctx := testCtx(t)
	clock := newFakeClock()
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat(), tgemu.WithClock(clock.Now),
		tgemu.WithLimits(tgemu.Limits{Global: tgemu.Rate{Messages: 2, Per: time.Second}, Paid: tgemu.Rate{Messages: 5, Per: time.Second}}))
	b := newBot(t, emu)
	paid := func(chat int64) error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "p", AllowPaidBroadcast: true})
		return err
	}
	require.Equal(t, int64(-1), emu.StarBalance(), "unlimited by default")
	for c := int64(1); c <= 2; c++ {
		require.Equal(t, -1, send(ctx, t, b, c), "free %d", c)
	}
	require.Equal(t, 1, send(ctx, t, b, 3), "the third free send is over Global")
	for c := int64(11); c <= 15; c++ {
		require.NoError(t, paid(c), "paid %d while Global is spent", c)
	}
	var tm *bot.TooManyRequestsError
	require.ErrorAs(t, paid(16), &tm, "the sixth paid send is over Paid")
	require.Equal(t, 5, emu.PaidSent())
	require.Equal(t, int64(-1), emu.StarBalance(), "an unlimited balance stays unlimited")

	clock.Advance(time.Second)
	emu.SetStarBalance(3) // 0.3 Star: three paid messages
	for c := int64(21); c <= 23; c++ {
		require.NoError(t, paid(c), "paid %d within the balance", c)
	}
	require.Equal(t, int64(0), emu.StarBalance())
	err := paid(24)
	require.Error(t, err)
	require.Contains(t, err.Error(), tgemu.CannotPayDescription)
	require.Equal(t, -1, send(ctx, t, b, 25), "a free send needs no Stars")
	require.Equal(t, 8, emu.PaidSent(), "the refused send is not counted")

	var withParam, without int
	for _, r := range emu.SendRequests() {
		if r.Params["allow_paid_broadcast"] == "true" {
			withParam++
		} else {
			without++
		}
	}
	require.Equal(t, 10, withParam, "8 accepted + 2 refused paid requests recorded with the parameter")
	require.Equal(t, 4, without)
	for _, m := range emu.Messages(21) {
		require.True(t, m.Paid)
	}
	for _, m := range emu.Messages(1) {
		require.False(t, m.Paid)
	}
}
