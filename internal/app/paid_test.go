package app

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// TestPaidBroadcastPreviewCannotPayThenContinueFreeOrStop: with
// TELEGRAM_PAID_BROADCAST_RATE set, the preview offers both modes, each
// with its estimated time, the paid one with its cost in Stars (copies x
// 0.1); sent paid, only the broadcast's copies carry allow_paid_broadcast
// (the preview, the notices and the replies do not). The balance covers the
// cost when the preview is made, then is spent elsewhere down to 10 copies'
// worth before Send paid is tapped: the cannot-pay answer halts the paid part with the rest
// kept (nothing sent while halted), the progress message shows the mode
// and the cost so far, and the admin gets Continue free and Stop. Continue
// free delivers the rest once to every chat, without the parameter; Stop
// cancels the rest as for a free broadcast. /audit shows the mode and the
// cost; /metrics counts the broadcast halted while it is, and neither
// running nor halted once it ended.
func TestPaidBroadcastPreviewCannotPayThenContinueFreeOrStop(t *testing.T) {
	for _, choice := range []string{"▶️ Continue free", "🛑 Stop"} {
		t.Run(choice, func(t *testing.T) {
			t.Parallel()
			const chatsN, balance = 40, 10 // and the admin's chat; 1 Star: 10 paid copies
			h, r := paidHarness(t, 40_000, chatsN)
			ctx := context.Background()
			const text = "💫 the paid news"
			copies := func() int { return h.copiesOf(text) }

			pv, buttons := h.broadcastPreview(text)
			require.Equal(t, "📣 Broadcast preview. The chats will see:\n\n"+text+"\n\nIt will reach 41 chats:\n"+
				"• ✅ Send free: in about 2 s at the current rate of 30 messages/s, no fee.\n"+
				"• 💫 Send paid: in about 1 s at 1000 messages/s, for about 4.1 Telegram Stars (41 copies × 0.1 Star, from the bot's balance).\n"+
				"The bot's Stars balance: 4.1 Stars, enough for it.\n"+
				"Choose, or Cancel, within 10 minutes.", pv.Text)
			rows, _ := keyboardOf(t, pv.ReplyMarkup)
			require.Equal(t, [][]string{{"✅ Send free", "💫 Send paid", "❌ Cancel"}}, rows)
			h.emu.SetStarBalance(balance) // spent elsewhere since the preview
			_, toast := h.tapAdmin(pv.ID, buttons["💫 Send paid"])
			require.Equal(t, "📣 Sending to 41 chats (paid).", toast)

			// The halt: the notice with its buttons, the progress message
			// with the mode and the cost so far.
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			notice := h.haltNotice(wctx)
			m := regexp.MustCompile(`^⚠️ Paid broadcast (bc_\w+) halted: Telegram answered that the bot cannot pay for more copies \(its Stars balance is too low\)\. ` +
				`10 copies were sent paid \(1\.0 Stars\); 31 are not sent and kept\.`).FindStringSubmatch(notice.Text)
			require.NotNil(t, m, notice.Text)
			id := m[1]
			rows, noticeButtons := keyboardOf(t, notice.ReplyMarkup)
			require.Equal(t, [][]string{{"▶️ Continue free", "🛑 Stop"}}, rows)
			halted := "📣 Broadcast: 10 sent, 0 failed, 31 remaining of 41\n💫 Paid, halted (the bot cannot pay): 10 copies paid, 1.0 Stars so far\nTo stop it: 🛑 Stop, or /broadcast stop " + id
			require.NoError(t, h.emu.WaitUntil(wctx, func() bool {
				p := h.progressMsgs()
				return len(p) == 1 && p[0].CurrentText() == halted
			}), "the progress message shows the mode and the cost so far")
			time.Sleep(500 * time.Millisecond)
			require.Equal(t, balance, copies(), "nothing sent while halted")
			require.Equal(t, balance, h.emu.PaidSent())
			p, err := r.app.Notifier().Progress(ctx, id)
			require.NoError(t, err)
			require.Equal(t, chatsN+1-balance, p.Remaining, "the rest is kept")
			code, body := h.get(r, "/metrics")
			require.Equal(t, 200, code)
			for _, line := range []string{"codemojex_broadcasts_halted 1", "codemojex_broadcasts_running 1",
				`codemojex_broadcast_messages{state="total"} 41`, `codemojex_broadcast_messages{state="sent"} 10`,
				`codemojex_broadcast_messages{state="remaining"} 31`, `codemojex_broadcast_messages{state="cancelled"} 0`} {
				require.Contains(t, body, "\n"+line+"\n", "/metrics while halted")
			}
			require.Contains(t, body, "\n"+`codemojex_queue_depth{queue="paid"} `, "paid broadcasts on: the paid queue's gauges")

			_, toast = h.tapAdmin(notice.ID, noticeButtons[choice])
			code, body = h.get(r, "/metrics")
			require.Equal(t, 200, code)
			require.Contains(t, body, "\ncodemojex_broadcasts_halted 0\n", "continued free or stopped: no longer halted, sending or not")
			var final string
			switch choice {
			case "▶️ Continue free":
				require.Equal(t, fmt.Sprintf("▶️ Broadcast %s continues free: 31 copies at 30 messages/s.", id), toast)
				final = "✅ Broadcast done: 41 sent, 0 failed, 0 remaining of 41\n💫 Paid, then free: 10 copies paid (1.0 Stars), 31 moved to free"
			case "🛑 Stop":
				require.Equal(t, fmt.Sprintf("🛑 Broadcast %s stopped: 10 sent before the stop, 31 cancelled.", id), toast)
				final = "🛑 Broadcast stopped: 10 sent before the stop, 0 failed, 31 cancelled of 41\n💫 Paid: 10 copies, 1.0 Stars"
			}
			require.NoError(t, h.emu.WaitUntil(wctx, func() bool {
				return h.progressMsgs()[0].CurrentText() == final
			}), "the progress message ends with %q", final)
			time.Sleep(300 * time.Millisecond)
			if choice == "▶️ Continue free" {
				audience := []int64{adminID}
				for i := range int64(chatsN) {
					audience = append(audience, 40_000+i)
				}
				requireEachOnce(t, h.emu, audience, text)
			} else {
				require.Equal(t, balance, copies(), "nothing sent after the stop")
			}
			require.Equal(t, balance, h.emu.PaidSent(), "the rest was not paid")

			// Only the paid copies carried the parameter.
			for _, rq := range h.emu.SendRequests() {
				if rq.Params["allow_paid_broadcast"] == "true" {
					require.Equal(t, text, rq.Params["text"])
				}
			}
			paidAccepted := 0
			for _, msg := range h.emu.AllMessages() {
				if msg.Paid {
					paidAccepted++
					require.Equal(t, text, msg.Text)
				}
			}
			require.Equal(t, balance, paidAccepted)

			es, err := r.app.audit.Last(ctx, admin.AuditShown)
			require.NoError(t, err)
			require.Len(t, es, 2)
			require.Equal(t, broadcast.ActionSent, es[1].Action)
			require.Equal(t, id+" to 41 chats, paid (about 4.1 Stars)", es[1].Detail)
			switch choice {
			case "▶️ Continue free":
				require.Equal(t, broadcast.ActionContinuedFree, es[0].Action)
				require.Equal(t, id+": 31 copies moved to free, paid: 10 copies, 1.0 Stars", es[0].Detail)
			case "🛑 Stop":
				require.Equal(t, broadcast.ActionStopped, es[0].Action)
				require.Equal(t, id+": 10 sent before the stop, 31 cancelled, 0 in flight at the stop, paid: 10 copies, 1.0 Stars", es[0].Detail)
			}
			// Done and its final text shown: untracked (right after that
			// edit), so no longer counted.
			require.Eventually(t, func() bool {
				code, body = h.get(r, "/metrics")
				return code == 200 && strings.Contains(body, "\ncodemojex_broadcasts_running 0\n")
			}, wait, 20*time.Millisecond, "/metrics counts no running broadcast once it ended")
			for _, line := range []string{"codemojex_broadcasts_halted 0", `codemojex_broadcast_messages{state="total"} 0`} {
				require.Contains(t, body, "\n"+line+"\n", "/metrics once it ended")
			}
			require.Contains(t, body, `codemojex_budget_limit{budget="paid"} 1000`)
			require.Contains(t, body, `codemojex_budget_limit{budget="bulk"} 30`)
			require.Contains(t, body, "codemojex_worker_paid_sent_total 10")
			require.Contains(t, body, "codemojex_worker_stars_spent_total 1")
			halt, err := r.app.Notifier().PaidHalted(ctx)
			require.NoError(t, err)
			require.Empty(t, halt, "the paid queue runs again")
		})
	}
}

// The paid preview shows the bot's Stars balance (getMyStarBalance, read
// when the preview is made) against the cost and offers Send paid only
// when the balance covers it: enough (offered), not enough (how many copies
// it pays for; Send paid not offered: a paid broadcast the balance cannot
// cover is not started paid; instead, when it pays for some, "N paid, rest
// free": that many copies go paid, the rest free, and the balance is spent
// on exactly those), or that it could not be read (getMyStarBalance
// failing: offered, the halt path covers a balance that runs out).
func TestPaidPreviewShowsTheStarsBalance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		balance int64 // tenths of a Star; -1: the emulator's unlimited balance
		fail    bool
		short   bool // Send paid not offered
		want    string
	}{
		{name: "enough, exactly", balance: 3, want: "The bot's Stars balance: 0.3 Stars, enough for it."},
		{name: "unlimited", balance: -1, want: "The bot's Stars balance: 1000000000.0 Stars, enough for it."},
		{name: "one copy short", balance: 2, short: true, want: "The bot's Stars balance: 0.2 Stars, not enough: it pays for 2 of the 3 copies, " +
			"so Send paid is not offered; send the first 2 paid and the rest free, add Stars and send /broadcast again, or send it free."},
		{name: "empty", balance: 0, short: true, want: "The bot's Stars balance: 0.0 Stars, not enough for one paid copy of the 3, " +
			"so Send paid is not offered; add Stars and send /broadcast again, or send it free."},
		{name: "unreadable", balance: -1, fail: true,
			want: "The bot's Stars balance could not be read: a paid broadcast halts when it runs out (then ▶️ Continue free or 🛑 Stop)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, "TELEGRAM_PAID_BROADCAST_RATE=1000")
			r := h.start(nil)
			h.waitLeader(r)
			h.addKnownChats(r, 41_000, 2) // and the admin's chat: 3 copies
			h.emu.SetStarBalance(tc.balance)
			if tc.fail {
				h.emu.InjectFault(tgemu.BadGateway().For("getMyStarBalance").Times(-1))
			}
			pv, buttons := h.broadcastPreview("💫 news")
			lines := strings.Split(pv.Text, "\n")
			require.GreaterOrEqual(t, len(lines), 2)
			require.Equal(t, tc.want, lines[len(lines)-2], pv.Text)
			rows, _ := keyboardOf(t, pv.ReplyMarkup)
			if tc.short && tc.balance == 0 {
				require.Equal(t, [][]string{{"✅ Send free", "❌ Cancel"}}, rows, "not started paid")
				return
			}
			if tc.short {
				require.Equal(t, [][]string{{"✅ Send free", "💫 2 paid, rest free", "❌ Cancel"}}, rows, "not started all paid")
				_, toast := h.tapAdmin(pv.ID, buttons["💫 2 paid, rest free"])
				require.Equal(t, "📣 Sending to 3 chats (paid up to the balance, then free).", toast)
				paid, free := 0, 0
				require.Eventually(t, func() bool {
					paid, free = 0, 0
					for _, m := range h.emu.AllMessages() {
						if m.Text == "💫 news" && m.Paid {
							paid++
						} else if m.Text == "💫 news" {
							free++
						}
					}
					return paid+free == 3
				}, wait, 20*time.Millisecond)
				require.Equal(t, 2, paid, "as many paid as the balance covered")
				require.Equal(t, 1, free, "the rest free")
				require.Zero(t, h.emu.StarBalance(), "the balance spent on exactly those")
				return
			}
			require.Equal(t, [][]string{{"✅ Send free", "💫 Send paid", "❌ Cancel"}}, rows)
			_, toast := h.tapAdmin(pv.ID, buttons["💫 Send paid"])
			require.Equal(t, "📣 Sending to 3 chats (paid).", toast)
		})
	}
}
