package app

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/notifier"
)

// TestAPaidStopCutShortAddsUpWhenItsTapIsHandledAgain: a paid broadcast
// halts (the bot cannot pay), the admin taps 🛑 Stop, and its handling is
// cut short inside notifier.StopBroadcast (chaos seed 7: its deadline
// passed under a slow network after it marked the broadcast stopped; here
// that state is written as it left it: the stop field and the stop key,
// nothing cancelled), so the tap is handled again. The second handling
// finishes the stop and answers it as the stop: every copy not sent
// cancelled, none in flight (not "already stopped … N in flight" for
// copies waiting on the halted paid queue that nothing would send); the
// progress message ends with sent + failed + cancelled = total; no copy
// is sent after; the paid queue runs again; the stop is audited once.
func TestAPaidStopCutShortAddsUpWhenItsTapIsHandledAgain(t *testing.T) {
	t.Parallel()
	const chatsN, balance = 40, 10 // and the admin's chat; 1 Star: 10 paid copies
	h, r := paidHarness(t, 41_000, chatsN)
	ctx := context.Background()
	const text = "💫 the paid news, stopped twice"
	pv, buttons := h.broadcastPreview(text)
	h.emu.SetStarBalance(balance)
	_, toast := h.tapAdmin(pv.ID, buttons["💫 Send paid"])
	require.Equal(t, "📣 Sending to 41 chats (paid).", toast)

	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	notice := h.haltNotice(wctx)
	m := regexp.MustCompile(`^⚠️ Paid broadcast (bc_\w+) halted`).FindStringSubmatch(notice.Text)
	require.NotNil(t, m, notice.Text)
	id := m[1]
	_, noticeButtons := keyboardOf(t, notice.ReplyMarkup)

	// The first handling of the tap, cut short inside StopBroadcast after
	// its first round trip (the stop field, its time, the stop key).
	key := "{" + h.tag + "}:n:bc:" + id
	require.NoError(t, h.c.Do(ctx, h.c.B().Hset().Key(key).FieldValue().FieldValue("x", "1").Build()).Error())
	require.NoError(t, h.c.Do(ctx, h.c.B().Set().Key(key+":stop").Value("1").Build()).Error())
	require.NoError(t, h.c.Do(ctx, h.c.B().Hset().Key(key).FieldValue().FieldValue("xt", strconv.FormatInt(time.Now().UnixMilli(), 10)).Build()).Error())

	// Handled again.
	_, toast = h.tapAdmin(notice.ID, noticeButtons["🛑 Stop"])
	require.Equal(t, fmt.Sprintf("🛑 Broadcast %s stopped: %d sent before the stop, %d cancelled.",
		id, balance, chatsN+1-balance), toast)
	final := fmt.Sprintf("🛑 Broadcast stopped: %d sent before the stop, 0 failed, %d cancelled of %d\n💫 Paid: %d copies, %s Stars", balance, chatsN+1-balance, chatsN+1, balance, notifier.FormatStars(balance))
	require.NoError(t, h.emu.WaitUntil(wctx, func() bool {
		p := h.progressMsgs()
		return len(p) == 1 && p[0].CurrentText() == final
	}), "the progress message ends with %q", final)
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, balance, h.copiesOf(text), "nothing sent after the stop")
	require.Equal(t, balance, h.emu.PaidSent())
	halt, err := r.app.Notifier().PaidHalted(ctx)
	require.NoError(t, err)
	require.Empty(t, halt, "the paid queue runs again")
	es, err := r.app.audit.Last(ctx, admin.AuditShown)
	require.NoError(t, err)
	require.Len(t, es, 2)
	require.Equal(t, broadcast.ActionStopped, es[0].Action)
	require.Equal(t, fmt.Sprintf("%s: %d sent before the stop, %d cancelled, 0 in flight at the stop, paid: %d copies, 1.0 Stars", id, balance, chatsN+1-balance, balance), es[0].Detail)
}
