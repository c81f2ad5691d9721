package app

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// Taps are answered within a second while a 10,000-chat broadcast is being
// sent at Telegram's global limit: answerCallbackQuery does not go through
// the lanes (no message budget throttles it), so the broadcast's backlog
// does not delay it. Latency is tap (update queued at the emulator) to
// answer accepted; p50 and p99 are logged.
func TestTapAnswersStayFastDuringBroadcastAtGlobalLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a broadcast for about 10 s")
	}
	h := newHarness(t, telegramLimitsEnv...)
	h.emu.SetLimits(telegramLimits())
	h.emu.SetAllowAnyChat(true)
	r := h.startWithSecret(0, 1, 2, 3)
	ctx := context.Background()
	const audience = 10_000
	adds := make(valkey.Commands, 0, 1000)
	for i := range audience {
		adds = append(adds, r.app.audience.AddCmd(int64(2_000_000+i)))
		if len(adds) == cap(adds) {
			for _, res := range h.c.DoMulti(ctx, adds...) {
				require.NoError(t, res.Error())
			}
			adds = adds[:0]
		}
	}
	player := user(751, "Pat")
	h.ask(0, player, "/play")
	pv, buttons := h.broadcastPreview("📣 Maintenance at 22:00 UTC")
	h.tapAdmin(pv.ID, buttons["✅ Send"])
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	require.NoError(t, h.emu.WaitUntil(waitCtx, func() bool { return h.emu.Stats().Sent > 100 }), "the broadcast is being sent")

	t0, sent0 := time.Now(), h.emu.Stats().Sent
	labels := []string{"🍎", "🍌", "⌫", "⌫"}
	var ids []string
	for i := range 40 {
		b, _ := h.board(player.ID)
		_, data := keyboardOf(t, currentMarkup(b))
		u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: player.ID, MessageID: b.ID, From: player, Data: data[labels[i%4]]})
		require.NoError(t, err)
		ids = append(ids, u.CallbackQuery.ID)
		h.answerOf(u.CallbackQuery.ID)
		time.Sleep(150 * time.Millisecond)
	}
	elapsed, sent := time.Since(t0), h.emu.Stats().Sent-sent0
	rate := float64(sent) / elapsed.Seconds()
	var lat []time.Duration
	for _, a := range h.emu.CallbackAnswers() {
		if slices.Contains(ids, a.QueryID) {
			lat = append(lat, a.Time.Sub(a.TapTime))
		}
	}
	require.Len(t, lat, len(ids), "every tap answered once")
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[(len(lat)*99+99)/100-1]
	t.Logf("tap to answer during the broadcast: p50 %v, p99 %v, max %v (%d taps); broadcast sent %.1f msg/s meanwhile (limit 30)",
		p50, p99, lat[len(lat)-1], len(lat), rate)
	require.Greater(t, rate, 20.0, "the broadcast runs at the global limit during the taps")
	require.Zero(t, h.emu.Stats().TooManyRequests, "the limits held (edits included): no 429")
	require.Less(t, p99, time.Second, "answerCallbackQuery p99 under 1 s")
}
