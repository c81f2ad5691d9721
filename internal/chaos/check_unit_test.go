package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// baseHistory is a clean history: a group's /play, two guesses and /help
// each answered once in order, a rush user welcomed, a tap answered, one
// audience chat with its copy, the group and the admin with theirs, and
// the admin's progress message done with the 3 copies sent.
func baseHistory() history {
	const g = int64(groupsFirst)
	return history{
		group: []sentUpdate{
			{chat: g, msgID: 1, id: 11, kind: "play", round: 1},
			{chat: g, msgID: 2, id: 12, kind: "guess", round: 1, guess: 1},
			{chat: g, msgID: 3, id: 13, kind: "guess", round: 1, guess: 2},
			{chat: g, msgID: 4, id: 14, kind: "help", round: 1},
		},
		messages: map[int64][]tgemu.Message{
			g: {
				{ReplyToMessageID: 1, Text: "🔐 New code: 4 emojis"},
				{ReplyToMessageID: 2, Text: "🍎🍎🍎🍎 🟡 attempt 1/10"},
				{ReplyToMessageID: 3, Text: "🍎🍎🍎🍇 🟡 attempt 2/10"},
				{ReplyToMessageID: 4, Text: "Commands: ..."},
				{Text: "📣 M"},
			},
			rushFirst:     {{Text: "👋 Welcome to Codemojex"}},
			audienceFirst: {{Text: "📣 M"}},
		},
		rush:      []int64{rushFirst},
		taps:      []string{"q1"},
		answers:   map[string]int{"q1": 1},
		marker:    "📣 M",
		audience:  []int64{audienceFirst},
		copyChats: []int64{groupsFirst, rushFirst, audienceFirst},
		deadCopy:  map[int64]bool{},
		admin: []tgemu.Message{
			{Text: "Preview: 📣 M", ReplyMarkup: `{"inline_keyboard":[[{"text":"✅ Send"}]]}`},
			{Text: "📣 Broadcast: 0 sent, 0 failed, 3 remaining of 3", Edits: []tgemu.Edit{{Text: "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3"}}},
			{Text: "📣 M"},
		},
	}
}

// TestCheckerCountsLossDuplicatesDisorderAndWrongReplies: each kind of
// damage to a clean history shows in its own figure and nowhere else.
func TestCheckerCountsLossDuplicatesDisorderAndWrongReplies(t *testing.T) {
	const g = int64(groupsFirst)
	tests := []struct {
		name   string
		damage func(h *history)
		want   verdict // only the figures below are compared
	}{
		{"clean", func(*history) {}, verdict{}},
		{"a reply lost", func(h *history) { h.messages[g] = append(h.messages[g][:3:3], h.messages[g][4:]...) },
			verdict{Lost: 1}},
		{"a reply sent twice", func(h *history) { h.messages[g] = append(h.messages[g], h.messages[g][1]) },
			verdict{Duplicates: 1}},
		{"two replies swapped", func(h *history) {
			m := h.messages[g]
			m[2], m[3] = m[3], m[2]
		}, verdict{OrderViolations: 1}},
		{"one reply early is one violation", func(h *history) {
			m := h.messages[g]
			h.messages[g] = []tgemu.Message{m[3], m[0], m[1], m[2], m[4]}
		}, verdict{OrderViolations: 1}},
		{"a guess dropped by the flood limits", func(h *history) { h.messages[g][1].Text = "Too many messages: slow down." },
			verdict{FloodNotices: 1}},
		{"a guess applied twice (attempt 3 for the second)", func(h *history) { h.messages[g][2].Text = "attempt 3/10" },
			verdict{Wrong: 1}},
		{"a /play answered with the running board", func(h *history) { h.messages[g][0].Text = "A game is running" },
			verdict{Wrong: 1}},
		{"a guess after a win answered anything", func(h *history) {
			h.messages[g][1].Text = "🍎🍎🍎🍎 🟢🟢🟢🟢 attempt 1/10"
			h.messages[g][2].Text = "No game is running"
		}, verdict{}},
		{"a rush user never welcomed", func(h *history) { h.messages[rushFirst] = nil }, verdict{Lost: 1}},
		{"a rush user welcomed twice", func(h *history) {
			h.messages[rushFirst] = append(h.messages[rushFirst], h.messages[rushFirst][0])
		}, verdict{Duplicates: 1}},
		{"a tap never answered", func(h *history) { h.answers = map[string]int{} }, verdict{TapsUnanswered: 1}},
		{"a copy missing (counted as sent)", func(h *history) { h.messages[audienceFirst] = nil }, verdict{Lost: 1, ProgressOff: 1}},
		{"a copy dead-lettered", func(h *history) {
			h.messages[audienceFirst] = nil
			h.deadCopy[audienceFirst] = true
			h.admin[1].Edits[0].Text = "✅ Broadcast done: 2 sent, 1 failed (forbidden 1), 0 remaining of 3"
		}, verdict{DeadCopies: 1}},
		{"a dead-lettered copy counted as sent", func(h *history) {
			h.messages[audienceFirst] = nil
			h.deadCopy[audienceFirst] = true
		}, verdict{DeadCopies: 1, ProgressOff: 1}},
		{"the progress counts a copy too many", func(h *history) {
			h.admin[1].Edits[0].Text = "✅ Broadcast done: 4 sent, 0 failed, 0 remaining of 4"
		}, verdict{ProgressOff: 1}},
		{"the progress never done", func(h *history) { h.admin[1].Edits = nil }, verdict{ProgressOff: 1}},
		{"the admin's copy missing", func(h *history) { h.admin = h.admin[:2] }, verdict{ProgressOff: 1}},
		{"a copy twice", func(h *history) {
			h.messages[audienceFirst] = append(h.messages[audienceFirst], h.messages[audienceFirst][0])
		}, verdict{Duplicates: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := baseHistory()
			tc.damage(&h)
			v := check(h)
			require.Equal(t, 4, v.GroupUpdates)
			require.Equal(t, 1, v.Starts)
			require.Equal(t, 1, v.Taps)
			require.Equal(t, 1, v.Copies)
			got := verdict{Lost: v.Lost, Duplicates: v.Duplicates, OrderViolations: v.OrderViolations, Wrong: v.Wrong,
				TapsUnanswered: v.TapsUnanswered, DeadCopies: v.DeadCopies, FloodNotices: v.FloodNotices, ProgressOff: v.ProgressOff}
			require.Equal(t, tc.want, got, "problems: %q", v.Problems)
			require.Equal(t, v.Lost+v.OrderViolations+v.Wrong+v.FloodNotices+v.ProgressOff > 0, len(v.Problems) > 0,
				"each loss, disorder, wrong reply or progress off is named")
		})
	}
}

// paidHistory is baseHistory with a paid broadcast after the free one:
// the audience chat, the group and the admin each got its copy once, sent
// paid, the emulator counted the 3 paid sends, and the paid broadcast's
// progress message is done with the 3 copies sent, all 3 paid.
func paidHistory() history {
	const g = int64(groupsFirst)
	h := baseHistory()
	copyOf := tgemu.Message{Text: "💫 P", Paid: true}
	h.paidMarker, h.paidDead = "💫 P", map[int64]bool{}
	h.messages[g] = append(h.messages[g], copyOf)
	h.messages[audienceFirst] = append(h.messages[audienceFirst], copyOf)
	h.admin = append(h.admin,
		tgemu.Message{Text: "Preview: 💫 P", ReplyMarkup: `{"inline_keyboard":[[{"text":"💫 Send paid"}]]}`},
		tgemu.Message{Text: "📣 Broadcast: 0 sent, 0 failed, 3 remaining of 3\n💫 Paid: 0 copies, 0.0 Stars so far", Edits: []tgemu.Edit{
			{Text: "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3\n💫 Paid: 3 copies, 0.3 Stars"}}},
		copyOf)
	h.paidAccepted, h.paidSent, h.charged = 3, 3, 3
	return h
}

// TestCheckerAccountsForThePaidBroadcastCopyByCopy: every audience chat
// gets the paid copy once, sent paid, or it is dead-lettered; the paid
// broadcast's final progress is what the emulator received (sent, failed,
// copies paid), apart from the free one's; the emulator's paid count is
// the messages it accepted paid, and only the paid copies were. Each rule
// broken shows in its own figures and is named.
func TestCheckerAccountsForThePaidBroadcastCopyByCopy(t *testing.T) {
	const g = int64(groupsFirst)
	paidProgress := func(h *history) *tgemu.Edit { return &h.admin[4].Edits[0] }
	tests := []struct {
		name   string
		damage func(h *history)
		want   verdict // only the figures below are compared
	}{
		{"clean", func(*history) {}, verdict{}},
		{"a paid copy missing (counted as sent)", func(h *history) {
			h.messages[audienceFirst] = h.messages[audienceFirst][:1]
			h.paidAccepted, h.paidSent, h.charged = 2, 2, 2
		}, verdict{Lost: 1, PaidProgressOff: 1}},
		{"a paid copy dead-lettered", func(h *history) {
			h.messages[audienceFirst] = h.messages[audienceFirst][:1]
			h.paidAccepted, h.paidSent, h.charged = 2, 2, 2
			h.paidDead[audienceFirst] = true
			paidProgress(h).Text = "✅ Broadcast done: 2 sent, 1 failed (forbidden 1), 0 remaining of 3\n💫 Paid: 2 copies, 0.2 Stars"
		}, verdict{PaidDeadCopies: 1}},
		{"a dead-lettered paid copy counted as sent", func(h *history) {
			h.messages[audienceFirst] = h.messages[audienceFirst][:1]
			h.paidAccepted, h.paidSent, h.charged = 2, 2, 2
			h.paidDead[audienceFirst] = true
		}, verdict{PaidDeadCopies: 1, PaidProgressOff: 1}},
		{"the free copy dead-lettered does not excuse a missing paid one", func(h *history) {
			h.messages[audienceFirst] = h.messages[audienceFirst][:1]
			h.paidAccepted, h.paidSent, h.charged = 2, 2, 2
			h.deadCopy[audienceFirst] = true
		}, verdict{Lost: 1, PaidProgressOff: 1}},
		{"a paid copy twice", func(h *history) {
			h.messages[g] = append(h.messages[g], h.messages[g][5])
			h.paidAccepted, h.paidSent, h.charged = 4, 4, 4
		}, verdict{Duplicates: 1}},
		{"the paid progress counts a copy too many", func(h *history) {
			paidProgress(h).Text = "✅ Broadcast done: 4 sent, 0 failed, 0 remaining of 4\n💫 Paid: 4 copies, 0.4 Stars"
		}, verdict{PaidProgressOff: 1}},
		{"the paid progress never done", func(h *history) { h.admin[4].Edits = nil }, verdict{PaidProgressOff: 1}},
		{"the paid progress counts a copy paid too few", func(h *history) {
			paidProgress(h).Text = "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3\n💫 Paid: 2 copies, 0.2 Stars"
		}, verdict{PaidProgressOff: 1}},
		{"the free progress is not the paid one's", func(h *history) { h.admin = append(h.admin[:4], h.admin[5]) },
			verdict{PaidProgressOff: 1}},
		{"the admin's paid copy missing", func(h *history) {
			h.admin = h.admin[:5]
			h.paidAccepted, h.paidSent, h.charged = 2, 2, 2
		}, verdict{PaidProgressOff: 1}},
		{"a paid copy sent without allow_paid_broadcast", func(h *history) {
			h.messages[audienceFirst][1].Paid = false
			h.paidAccepted, h.paidSent, h.charged = 2, 2, 2
		}, verdict{PaidUnpaid: 1, PaidProgressOff: 1}},
		{"the emulator's paid count off the messages accepted paid", func(h *history) { h.paidSent = 4 }, verdict{}},
		{"a reply accepted paid", func(h *history) {
			h.messages[g][0].Paid = true
			h.paidAccepted, h.paidSent, h.paidOther, h.charged = 4, 4, 1, 4
		}, verdict{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := paidHistory()
			tc.damage(&h)
			v := check(h)
			require.Equal(t, 1, v.Copies)
			require.Equal(t, 1, v.PaidCopies)
			require.Equal(t, h.paidSent, v.PaidSent)
			require.Equal(t, h.paidAccepted, v.PaidAccepted)
			got := verdict{Lost: v.Lost, Duplicates: v.Duplicates, DeadCopies: v.DeadCopies, ProgressOff: v.ProgressOff,
				PaidDeadCopies: v.PaidDeadCopies, PaidProgressOff: v.PaidProgressOff, PaidUnpaid: v.PaidUnpaid}
			require.Equal(t, tc.want, got, "problems: %q", v.Problems)
			// A dead letter is accounted for and a duplicate weighed against
			// the sends in flight (chaos_test.go): neither is a problem.
			named := !slices.Contains([]string{"clean", "a paid copy dead-lettered", "a paid copy twice"}, tc.name)
			require.Equal(t, named, len(v.Problems) > 0, "each broken rule is named: %q", v.Problems)
		})
	}
}

// scenarioHistory is paidHistory as paid scenario sc ran it: the group's
// and the admin's copies sent paid before the halt (or, for paidPart, as
// the part paid), then the audience chat's: sent free after ▶️ Continue
// free (paidHaltFree) or past the part (paidPart), never sent after 🛑
// Stop (paidHaltStop, 0 in flight); the halt's paid send refused before
// the admin's answer, the emulator charging the 2 paid copies.
func scenarioHistory(sc paidScenario) history {
	const g = int64(groupsFirst)
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	h := paidHistory()
	h.paid = sc
	h.messages[g][5].Time = at(1)
	h.admin[5].Time = at(1)
	h.messages[audienceFirst][1] = tgemu.Message{Text: "💫 P", Time: at(3)}
	h.paidAccepted, h.paidSent, h.charged = 2, 2, 2
	h.paidRequests = []time.Time{at(1), at(1), at(1.2)}
	halted := tgemu.Edit{Text: "📣 Broadcast: 2 sent, 0 failed, 1 remaining of 3\n💫 Paid, halted (the bot cannot pay): 2 copies paid, 0.2 Stars so far\nTo stop it: 🛑 Stop, or /broadcast stop bc_1"}
	switch sc {
	case paidHaltFree:
		h.acts = paidActs{Notice: at(1.5), Ack: at(2), Choice: "▶️ Continue free", Answer: "▶️ Broadcast bc_1 continues free: 1 copies at 30 messages/s."}
		h.admin[4].Edits = []tgemu.Edit{halted, {Text: "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3\n💫 Paid, then free: 2 copies paid (0.2 Stars), 1 moved to free"}}
	case paidHaltStop:
		h.acts = paidActs{Notice: at(1.5), Ack: at(2), Choice: "🛑 Stop", Answer: "🛑 Broadcast bc_1 stopped: 2 sent before the stop, 1 cancelled."}
		h.messages[audienceFirst] = h.messages[audienceFirst][:1]
		h.admin[4].Edits = []tgemu.Edit{halted, {Text: "🛑 Broadcast stopped: 2 sent before the stop, 0 failed, 1 cancelled of 3"}}
	case paidPart:
		h.paidRequests = h.paidRequests[:2]
		h.admin[4].Edits = []tgemu.Edit{{Text: "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3\n💫 Paid: 2 copies, 0.2 Stars"}}
	}
	return h
}

// TestCheckerAccountsForThePaidScenarios: a paid broadcast whose balance
// runs out (the halt, then ▶️ Continue free or 🛑 Stop) or that is paid
// only in part: every audience chat gets one copy, paid or free, or is
// dead-lettered, or (stopped) cancelled; the progress counts what the
// emulator received, its Stars what the emulator charged (less the paid
// copies sent twice); the halt is answered; no paid send begins after
// Continue free is answered, and after Stop no paid send and no copy
// beyond those its answer counted in flight. Each rule broken shows in
// its own figures and is named; a case clean of problems names none.
func TestCheckerAccountsForThePaidScenarios(t *testing.T) {
	const g = int64(groupsFirst)
	later := time.Date(2026, 12, 6, 12, 0, 5, 0, time.UTC) // after the admin's answer
	last := func(h *history) *tgemu.Edit { return &h.admin[4].Edits[len(h.admin[4].Edits)-1] }
	// unanswered makes the group's paid copy one the emulator accepted
	// under a tg-hold: delivered, its answer dropped (seed 32's chats).
	unanswered := func(h *history) {
		h.messages[g][5].ID = 6
		h.held = map[sentMsg]bool{{g, 6}: true}
	}
	// countedCancelled makes the Stop count the group's copy cancelled:
	// 1 sent and paid (the admin's), 2 cancelled.
	countedCancelled := func(h *history) {
		h.admin[4].Edits[0].Text = "📣 Broadcast: 1 sent, 0 failed, 2 remaining of 3\n💫 Paid, halted (the bot cannot pay): 1 copies paid, 0.1 Stars so far"
		last(h).Text = "🛑 Broadcast stopped: 1 sent before the stop, 0 failed, 2 cancelled of 3"
	}
	tests := []struct {
		sc     paidScenario
		name   string
		damage func(h *history)
		want   verdict // only the figures below are compared
		named  bool    // a problem is named
	}{
		{paidHaltFree, "clean", func(*history) {}, verdict{PaidFree: 1}, false},
		{paidHaltFree, "a copy of the rest missing", func(h *history) { h.messages[audienceFirst] = h.messages[audienceFirst][:1] },
			verdict{Lost: 1, PaidProgressOff: 1}, true},
		{paidHaltFree, "a copy of the rest sent twice", func(h *history) {
			h.messages[audienceFirst] = append(h.messages[audienceFirst], h.messages[audienceFirst][1])
		}, verdict{Duplicates: 1, PaidFree: 2}, false},
		{paidHaltFree, "a paid copy sent twice, charged twice", func(h *history) {
			h.messages[g] = append(h.messages[g], h.messages[g][5])
			h.paidAccepted, h.paidSent, h.charged = 3, 3, 3
		}, verdict{Duplicates: 1, PaidFree: 1}, false},
		{paidHaltFree, "a paid copy sent again free (its ack lost), counted free", func(h *history) {
			h.messages[g] = append(h.messages[g], tgemu.Message{Text: "💫 P", Time: h.messages[g][5].Time.Add(4 * time.Second)})
			h.admin[4].Edits[1].Text = "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3\n💫 Paid, then free: 1 copies paid (0.1 Stars), 2 moved to free"
		}, verdict{Duplicates: 1, PaidFree: 2, PaidUncounted: 1}, false},
		{paidHaltFree, "a chat with only its paid copy counted free", func(h *history) {
			h.admin[4].Edits[1].Text = "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3\n💫 Paid, then free: 1 copies paid (0.1 Stars), 2 moved to free"
		}, verdict{PaidFree: 1, PaidProgressOff: 1, PaidUncounted: 1}, true},
		{paidHaltFree, "the Stars charged are not the progress's", func(h *history) { h.charged = 3 },
			verdict{PaidFree: 1, PaidProgressOff: 1}, true},
		{paidHaltFree, "a paid send after Continue free", func(h *history) { h.paidRequests = append(h.paidRequests, later) },
			verdict{PaidFree: 1, PaidAfterAck: 1}, true},
		{paidHaltFree, "the halt never answered", func(h *history) { h.acts.Ack = time.Time{} },
			verdict{PaidFree: 1, PaidActOff: 1}, true},
		{paidHaltFree, "the halt never noticed", func(h *history) { h.acts.Notice = time.Time{} },
			verdict{PaidFree: 1, PaidActOff: 1}, true},
		{paidHaltFree, "the progress never said it continued free", func(h *history) { h.admin[4].Edits = h.admin[4].Edits[:1] },
			verdict{PaidFree: 1, PaidProgressOff: 1}, true},
		{paidCovered, "a copy sent free when the balance covered all", func(h *history) {},
			verdict{PaidUnpaid: 1}, true},
		{paidHaltStop, "clean", func(*history) {}, verdict{PaidCancelled: 1}, false},
		{paidHaltStop, "a copy accepted after the Stop, none in flight", func(h *history) {
			h.messages[audienceFirst] = append(h.messages[audienceFirst], tgemu.Message{Text: "💫 P", Time: later})
			last(h).Text = "🛑 Broadcast stopped: 3 sent before the stop, 0 failed, 0 cancelled of 3"
		}, verdict{PaidFree: 1, CopiesAfterStop: 1}, true},
		{paidHaltStop, "a copy accepted after the Stop, one in flight", func(h *history) {
			h.messages[audienceFirst] = append(h.messages[audienceFirst], tgemu.Message{Text: "💫 P", Time: later})
			last(h).Text = "🛑 Broadcast stopped: 3 sent (1 of them in flight at the stop), 0 failed, 0 cancelled of 3"
			h.acts.Answer = "🛑 Broadcast bc_1 stopped: 2 sent before the stop, 0 cancelled, 1 in flight at the stop (each counted sent or cancelled as it settles)."
		}, verdict{PaidFree: 1, CopiesAfterStop: 1, StopInFlight: 1}, false},
		{paidHaltStop, "a paid send after the Stop, none in flight", func(h *history) { h.paidRequests = append(h.paidRequests, later) },
			verdict{PaidCancelled: 1, PaidAfterAck: 1}, true},
		{paidHaltStop, "the stopped counts do not add up", func(h *history) {
			last(h).Text = "🛑 Broadcast stopped: 2 sent before the stop, 0 failed, 2 cancelled of 3"
		}, verdict{PaidCancelled: 1, PaidProgressOff: 1}, true},
		{paidHaltStop, "the halted Stars are not what was charged", func(h *history) {
			h.admin[4].Edits[0].Text = strings.Replace(h.admin[4].Edits[0].Text, "0.2 Stars", "0.3 Stars", 1)
		}, verdict{PaidCancelled: 1, PaidProgressOff: 1}, true},
		{paidHaltStop, "the progress says done, not stopped", func(h *history) {
			last(h).Text = "✅ Broadcast done: 2 sent, 0 failed, 0 remaining of 3\n💫 Paid: 2 copies, 0.2 Stars"
		}, verdict{PaidCancelled: 1, PaidProgressOff: 1}, true},
		{paidHaltStop, "never stopped: the chat not reached is lost", func(h *history) { h.acts.Ack = time.Time{} },
			verdict{Lost: 1, PaidActOff: 1}, true},
		{paidHaltStop, "a copy delivered unanswered (tg-hold), then cancelled by the Stop", func(h *history) {
			unanswered(h)
			countedCancelled(h)
		}, verdict{PaidCancelled: 1, PaidUnanswered: 1}, false},
		{paidHaltStop, "a copy delivered unanswered (tg-hold), counted sent", unanswered,
			verdict{PaidCancelled: 1, PaidUnanswered: 1}, false},
		{paidHaltStop, "a copy delivered unanswered, then sent again and answered, counted cancelled", func(h *history) {
			unanswered(h)
			again := h.messages[g][5]
			again.ID = 7
			h.messages[g] = append(h.messages[g], again)
			h.paidAccepted, h.paidSent, h.charged = 3, 3, 3
			countedCancelled(h)
		}, verdict{Duplicates: 1, PaidCancelled: 1, PaidProgressOff: 1, PaidUncounted: 1}, true},
		{paidHaltStop, "a copy answered, then counted cancelled", countedCancelled,
			verdict{PaidCancelled: 1, PaidProgressOff: 1, PaidUncounted: 1}, true},
		{paidHaltStop, "a copy delivered unanswered excuses one chat, not two", func(h *history) {
			unanswered(h)
			countedCancelled(h)
			h.admin[4].Edits[0].Text = "📣 Broadcast: 0 sent, 0 failed, 3 remaining of 3\n💫 Paid, halted (the bot cannot pay): 0 copies paid, 0.0 Stars so far"
			last(h).Text = "🛑 Broadcast stopped: 0 sent before the stop, 0 failed, 3 cancelled of 3"
		}, verdict{PaidCancelled: 1, PaidUnanswered: 1, PaidProgressOff: 1, PaidUncounted: 1}, true},
		{paidHaltFree, "a copy delivered unanswered, not stopped: never counted cancelled", func(h *history) {
			unanswered(h)
			h.admin[4].Edits[1].Text = "✅ Broadcast done: 2 sent, 0 failed, 0 remaining of 3\n💫 Paid, then free: 1 copies paid (0.1 Stars), 1 moved to free"
		}, verdict{PaidFree: 1, PaidProgressOff: 1, PaidUncounted: 1}, true},
		{paidPart, "clean", func(*history) {}, verdict{PaidFree: 1}, false},
		{paidPart, "a copy past the part missing", func(h *history) { h.messages[audienceFirst] = h.messages[audienceFirst][:1] },
			verdict{Lost: 1, PaidProgressOff: 1}, true},
		{paidPart, "the part paid counted one too many", func(h *history) {
			last(h).Text = "✅ Broadcast done: 3 sent, 0 failed, 0 remaining of 3\n💫 Paid: 3 copies, 0.3 Stars"
		}, verdict{PaidFree: 1, PaidProgressOff: 1}, true},
		{paidPart, "the Stars charged are not the progress's", func(h *history) { h.charged = 1 },
			verdict{PaidFree: 1, PaidProgressOff: 1}, true},
		{paidPart, "a halt answered ▶️ Continue free, then a paid send", func(h *history) {
			h.acts = paidActs{Notice: later.Add(-4 * time.Second), Ack: later.Add(-3 * time.Second), Choice: "▶️ Continue free", Answer: "▶️ Broadcast bc_1 continues free: 1 copies at 30 messages/s."}
			h.paidRequests = append(h.paidRequests, later)
		}, verdict{PaidFree: 1, PaidAfterAck: 1}, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.sc)+": "+tc.name, func(t *testing.T) {
			h := scenarioHistory(tc.sc)
			if tc.sc == paidCovered {
				h = scenarioHistory(paidHaltFree)
				h.paid = paidCovered
			}
			tc.damage(&h)
			v := check(h)
			require.Equal(t, tc.sc, v.PaidScenario)
			require.Equal(t, 1, v.PaidCopies)
			got := verdict{Lost: v.Lost, Duplicates: v.Duplicates, PaidProgressOff: v.PaidProgressOff, PaidUnpaid: v.PaidUnpaid,
				PaidFree: v.PaidFree, PaidCancelled: v.PaidCancelled, PaidAfterAck: v.PaidAfterAck, CopiesAfterStop: v.CopiesAfterStop,
				StopInFlight: v.StopInFlight, PaidActOff: v.PaidActOff, PaidUncounted: v.PaidUncounted, PaidUnanswered: v.PaidUnanswered}
			require.Equal(t, tc.want, got, "problems: %q", v.Problems)
			require.Equal(t, tc.named, len(v.Problems) > 0, "each broken rule is named: %q", v.Problems)
		})
	}
}

// TestCheckerNamesAnUnfinishedPaidProgressBehindManyLostReplies: a paid
// broadcast whose halt was never answered (rows 45-47 of
// docs/chaos-runs.jsonl: the admin gave up waiting, the progress stayed at
// its halted text) is recorded with the counts its progress said, not 0,
// and each way it is off is named even when 40 lost group replies came
// first (the item problems are capped, the broadcast's findings are not);
// a progress that never counted what the emulator accepted (0 sent, 0
// copies paid for 2 accepted paid) is named for its sent and its paid.
func TestCheckerNamesAnUnfinishedPaidProgressBehindManyLostReplies(t *testing.T) {
	const lostReplies = 40
	tests := []struct {
		name     string
		progress string // the paid progress's last text
		sent     int    // PaidProgressSent
		stars    int    // PaidStars (tenths)
		findings []string
	}{
		{"halted, never answered, counts right",
			"📣 Broadcast: 2 sent, 0 failed, 1 remaining of 3\n💫 Paid, halted (the bot cannot pay): 2 copies paid, 0.2 Stars so far\nTo stop it: 🛑 Stop, or /broadcast stop bc_1",
			2, 2, []string{`paid broadcast: the progress never said "🛑 Broadcast stopped"`, "paid broadcast (halt-stop): the halt noticed at"}},
		{"halted, never answered, nothing counted",
			"📣 Broadcast: 0 sent, 0 failed, 3 remaining of 3\n💫 Paid: 0 copies, 0.0 Stars so far\nTo stop it: 🛑 Stop, or /broadcast stop bc_1",
			0, 0, []string{`paid broadcast: the progress never said "🛑 Broadcast stopped"`, "paid broadcast (halt-stop): the halt noticed at",
				"paid broadcast: the progress says 0 sent, 0 failed; the emulator saw 2 chats get a copy",
				"paid broadcast: the progress says 0 copies paid; the emulator saw 2 chats get a copy sent paid"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := scenarioHistory(paidHaltStop)
			h.acts = paidActs{}
			h.admin[4].Edits = []tgemu.Edit{{Text: tc.progress}}
			for i := range lostReplies {
				h.group = append(h.group, sentUpdate{chat: groupsFirst, msgID: 100 + i, id: int64(100 + i), kind: "help", round: 2})
			}
			v := check(h)
			require.Equal(t, lostReplies+1, v.Lost, "the replies and the audience chat never reached: %q", v.Problems)
			require.Equal(t, 1, v.PaidProgressOff)
			require.Equal(t, 1, v.PaidActOff)
			require.Equal(t, 2, v.PaidCopyChats)
			require.Equal(t, tc.sent, v.PaidProgressSent, "the progress's own count")
			require.Equal(t, tc.stars, v.PaidStars, "the progress's own Stars")
			require.Equal(t, 2, v.PaidCharged)
			require.Equal(t, lostReplies+1-maxItemProblems, v.ProblemsLeftOut)
			for _, f := range tc.findings {
				require.True(t, slices.ContainsFunc(v.Problems, func(p string) bool { return strings.HasPrefix(p, f) }),
					"%q named among %q", f, v.Problems)
			}
		})
	}
}

// TestPaidScenarioIsTheSeeds: a seed draws one paid scenario, on a stream
// of its own; the seeds 1-40 draw each of them.
func TestPaidScenarioIsTheSeeds(t *testing.T) {
	seen := map[paidScenario]int{}
	for seed := range uint64(40) {
		require.Equal(t, drawPaid(seed+1), drawPaid(seed+1))
		seen[drawPaid(seed+1)]++
	}
	require.Len(t, seen, len(paidScenarios), "%v", seen)
}

// TestScheduleIsTheSeeds: a seed gives one schedule, another seed
// another; faults start after 3 s, end before the settle margin, and
// never hold one target twice at once.
func TestScheduleIsTheSeeds(t *testing.T) {
	for _, d := range []struct {
		seed uint64
		dur  time.Duration
	}{{fixedSeed, time.Minute}, {1, 10 * time.Minute}, {7, 2 * time.Minute}} {
		dur := d.dur
		a, b := schedule(d.seed, dur), schedule(d.seed, dur)
		require.Equal(t, a, b, "seed %d: the same schedule twice", d.seed)
		require.NotEqual(t, a, schedule(d.seed+1, dur), "seed %d: another seed, another schedule", d.seed)
		require.NotEmpty(t, a)
		busy := map[string]fault{}
		for _, f := range a {
			require.GreaterOrEqual(t, f.At, 3*time.Second, "%s", f)
			require.LessOrEqual(t, f.At+f.For, dur-settleMargin(dur), "%s", f)
			if prev, ok := busy[f.Target]; ok {
				require.GreaterOrEqual(t, f.At, prev.At+prev.For, "%s overlaps %s", f, prev)
			}
			busy[f.Target] = f
		}
	}
}

// TestScheduleKeepsWhatRecordedSeedsDrew: adding valkey-busy and
// valkey-oom (serverFaults, a stream of their own) left the faults of the
// other kinds a seed draws as they were: seed 30 (1 minute, make test's)
// and seed 7 (3 minutes) draw the kinds counted in their last rows (of a
// primary with a replica) of docs/chaos-runs.jsonl; the new kinds come in where Valkey is free.
func TestScheduleKeepsWhatRecordedSeedsDrew(t *testing.T) {
	runs, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), runsFile))
	require.NoError(t, err)
	recorded := map[string]map[string]int{} // "seed/duration" -> its last row's faults by kind
	for line := range strings.SplitSeq(strings.TrimSpace(string(runs)), "\n") {
		var f figures
		require.NoError(t, json.Unmarshal([]byte(line), &f))
		if f.Store == "" { // a cluster run applies forCluster's faults
			recorded[fmt.Sprintf("%d/%s", f.Seed, f.Duration)] = f.Faults
		}
	}
	servers := 0
	for _, d := range []struct {
		seed uint64
		dur  time.Duration
	}{{fixedSeed, time.Minute}, {7, 3 * time.Minute}} {
		want := recorded[fmt.Sprintf("%d/%s", d.seed, d.dur)]
		require.NotEmpty(t, want, "seed %d (%s) recorded", d.seed, d.dur)
		got := map[string]int{}
		for _, f := range schedule(d.seed, d.dur) {
			if slices.Contains(serverKinds, f.Kind) {
				servers++
				continue
			}
			got[f.Kind]++
		}
		require.Equal(t, want, got, "seed %d (%s): the faults of the kinds drawn before", d.seed, d.dur)
	}
	long := schedule(1, 10*time.Minute)
	for _, k := range serverKinds {
		require.True(t, slices.ContainsFunc(long, func(f fault) bool { return f.Kind == k }), "seed 1 (10 minutes) draws %s", k)
	}
	t.Logf("server faults in seeds 30 (1 minute) and 7 (3 minutes): %d", servers)
}

// TestScheduleKeepsTheServerFaultsRecordedSeedsDrew: adding
// valkey-readonly (a stream of its own, after valkey-busy's and
// valkey-oom's) left every other fault of the seeds recorded with those
// two as it was: seeds 7 and 17 (1 minute) draw the kinds counted in their
// last rows (of a primary with a replica) of docs/chaos-runs.jsonl without valkey-readonly, valkey-busy
// and valkey-oom included, and valkey-readonly comes in besides.
func TestScheduleKeepsTheServerFaultsRecordedSeedsDrew(t *testing.T) {
	runs, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), runsFile))
	require.NoError(t, err)
	recorded := map[string]map[string]int{} // "seed/duration" -> its last row's faults by kind, of the rows without valkey-readonly
	for line := range strings.SplitSeq(strings.TrimSpace(string(runs)), "\n") {
		var f figures
		require.NoError(t, json.Unmarshal([]byte(line), &f))
		if f.Faults[faultReadonly] == 0 && f.Store == "" {
			recorded[fmt.Sprintf("%d/%s", f.Seed, f.Duration)] = f.Faults
		}
	}
	for _, seed := range []uint64{7, 17} {
		want := recorded[fmt.Sprintf("%d/%s", seed, time.Minute)]
		require.NotEmpty(t, want, "seed %d (1 minute) recorded", seed)
		require.Positive(t, want[faultBusy]+want[faultOOM], "seed %d (1 minute) recorded with valkey-busy or valkey-oom", seed)
		got := map[string]int{}
		for _, f := range schedule(seed, time.Minute) {
			if f.Kind != faultReadonly {
				got[f.Kind]++
			}
		}
		require.Equal(t, want, got, "seed %d (1 minute): the faults of the kinds drawn before valkey-readonly", seed)
	}
}

// TestGoroutinesJudgedAgainstTheSlotsBaseline: a process that leaked one
// goroutine per unit of its work is a leak, whatever its idle connections;
// connections within the tolerance are not; a process that did no more
// work than the tolerance is not judged (named apart); a slot without a
// baseline is skipped.
func TestGoroutinesJudgedAgainstTheSlotsBaseline(t *testing.T) {
	before := map[string]procStat{"handler-1": {Name: "handler-1#1", Goroutines: 30}}
	tests := []struct {
		name     string
		after    procStat
		leaks    int
		judged   int
		unjudged int
	}{
		{"idle connections within the tolerance", procStat{Name: "handler-1#1", Goroutines: 30 + goroutineTolerance, Work: 500}, 0, 1, 0},
		{"one per update", procStat{Name: "handler-1#1", Goroutines: 30 + 500, Work: 500}, 1, 1, 0},
		{"one per update, the least work judged", procStat{Name: "handler-1#3", Goroutines: 30 + goroutineTolerance + 1, Work: goroutineTolerance + 1}, 1, 1, 0},
		{"fewer than before (restarted)", procStat{Name: "handler-1#2", Goroutines: 20, Work: 100}, 0, 1, 0},
		{"too little work to judge", procStat{Name: "handler-1#4", Goroutines: 30 + goroutineTolerance, Work: goroutineTolerance}, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leaks, judged, unjudged := judgeGoroutines(before, map[string]procStat{"handler-1": tc.after, "worker-9": {Goroutines: 1000, Work: 1000}})
			require.Len(t, leaks, tc.leaks, "%q", leaks)
			require.Equal(t, tc.judged, judged)
			require.Len(t, unjudged, tc.unjudged)
		})
	}
}

// Telegram's limits count as kept while the limiter's 429s stay within the
// learned budgets' allowance: 5 per 1,000 accepted sends, at least the one
// a probe may draw; injected 429s are faults, not counted.
func TestLimiter429sBeyondTheLearnedBudgetsAllowanceFailTheRun(t *testing.T) {
	for _, tc := range []struct {
		sent, limiter, injected int
		kept                    bool
	}{
		{sent: 0, limiter: 0, kept: true},
		{sent: 100, limiter: 1, kept: true},
		{sent: 100, limiter: 2, kept: false},
		{sent: 2000, limiter: 10, injected: 40, kept: true},
		{sent: 2000, limiter: 11, kept: false},
	} {
		f := figures{Sent: tc.sent, Limiter429: tc.limiter, Injected429: tc.injected}
		require.Equal(t, tc.kept, f.keptLimits(), "%+v", tc)
	}
}

// A webhook run's deliveries are accounted for: every POST, the failed
// ones by kind, the updates resent (and those whose failed delivery had
// reached the receiver, which may have recorded them), the failures in
// the receiver's downtime (from its fault's start to the first 2xx after
// its end), the resent updates answered twice; an update waited until
// its first delivery answered 2xx.
func TestCheckerCountsWebhookResendsAndTheReceiversDowntime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ds := []tgemu.WebhookDelivery{
		{UpdateID: 1, Status: 200, Time: at(100)},
		{UpdateID: 2, Err: "Connection refused", Time: at(1100)}, // the receiver down
		{UpdateID: 2, Err: "Connection refused", Time: at(1300)},
		{UpdateID: 2, Err: "Connection timed out", Time: at(1500)}, // reached it
		{UpdateID: 2, Status: 500, Time: at(2100)},                 // up, Valkey failing: reached it
		{UpdateID: 2, Status: 200, Time: at(2500)},                 // back
		{UpdateID: 3, Err: "Connection refused", Time: at(2600)},   // after the downtime
		{UpdateID: 3, Status: 200, Time: at(2800)},
		{UpdateID: 4, Status: 204, Time: at(2900)},
	}
	downs := []span{{at(1000), at(2000)}}
	f, failed, back := accountHook(ds, downs, map[int64]int{1: 1, 2: 2, 3: 1, 4: 1})
	require.Equal(t, hookFigures{Deliveries: 9, Failed: 5, Failures: map[string]int{"refused": 3, "timed out": 1, "HTTP 500": 1},
		Resent: 2, ResentReached: 1, ReceiverFaults: 1, DowntimeFailed: 4, ResentDuplicated: 1}, f)
	require.Equal(t, []int{4}, failed)
	require.Equal(t, []time.Time{at(2500)}, back)

	group := []sentUpdate{{id: 1, at: at(0)}, {id: 2, at: at(900)}, {id: 3, at: at(2550)}, {id: 5, at: at(0)}}
	require.Equal(t, 1600*time.Millisecond, webhookLag(ds, group), "update 2 waited from 0.9 s to its 2xx at 2.5 s; 5 was never confirmed")

	clean, _, _ := accountHook(ds[:1], nil, map[int64]int{1: 1})
	require.Equal(t, hookFigures{Deliveries: 1}, clean)
	require.Equal(t, "poller", hookCell("", clean))
	require.Equal(t, "webhook: 9 posts, 5 failed (4 in 1 receiver downtimes), 2 resent (1 after reaching it, 1 answered twice)", hookCell(intakeWebhook, f))
}

// The receiver's downtimes are the spans of the process faults on the
// poller slot, and only those.
func TestCheckerTakesTheReceiversDowntimeFromItsFaults(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	faults := []applied{
		{fault: fault{Kind: faultKill, Target: "poller", For: 2 * time.Second}, Began: 10 * time.Second},
		{fault: fault{Kind: faultKill, Target: "worker-1", For: 2 * time.Second}, Began: 11 * time.Second},
		{fault: fault{Kind: faultStop, Target: "poller", For: 7 * time.Second}, Began: 20 * time.Second},
		{fault: fault{Kind: fault5xx, Target: fault5xx, For: 3 * time.Second}, Began: 30 * time.Second},
		{fault: fault{Kind: faultTerm, Target: "poller", For: time.Second}, Began: 40 * time.Second},
	}
	require.Equal(t, []span{
		{start.Add(10 * time.Second), start.Add(12 * time.Second)},
		{start.Add(20 * time.Second), start.Add(27 * time.Second)},
		{start.Add(40 * time.Second), start.Add(41 * time.Second)},
	}, receiverDowns(start, faults))
}

// TestScheduleDrawsTheConsolesFaultsFromAStreamOfTheirOwn: the console's
// process faults are a seed's own (the same twice, another seed's
// differ), each a process kind of the console's slot, lasting as draw's
// do, never two at once, from 3 s on and over by the settle margin; a
// long run draws every process kind; schedule holds none of them (so a
// seed's other faults are what it drew before).
func TestScheduleDrawsTheConsolesFaultsFromAStreamOfTheirOwn(t *testing.T) {
	long := consoleFaults(1, 10*time.Minute)
	require.Equal(t, long, consoleFaults(1, 10*time.Minute))
	require.NotEqual(t, long, consoleFaults(2, 10*time.Minute))
	for _, k := range processKinds {
		require.True(t, slices.ContainsFunc(long, func(f fault) bool { return f.Kind == k }), "seed 1 (10 minutes) draws %s on the console", k)
	}
	for _, seed := range []uint64{1, 7, 11, fixedSeed} {
		for _, dur := range []time.Duration{time.Minute, 10 * time.Minute} {
			fs := consoleFaults(seed, dur)
			var free time.Duration
			for _, f := range fs {
				require.Equal(t, consoleSlot, f.Target, "%s", f)
				require.Contains(t, processKinds, f.Kind, "%s", f)
				lo, hi := time.Second, 4*time.Second
				if f.Kind == faultStop {
					lo, hi = lease+time.Second, lease+6*time.Second
				}
				require.GreaterOrEqual(t, f.For, lo, "%s", f)
				require.Less(t, f.For, hi, "%s", f)
				require.GreaterOrEqual(t, f.At, max(free, 3*time.Second), "%s", f)
				require.LessOrEqual(t, f.At+f.For, dur-settleMargin(dur), "%s", f)
				free = f.At + f.For + 2*time.Second
			}
			require.False(t, slices.ContainsFunc(schedule(seed, dur), func(f fault) bool { return f.Target == consoleSlot }))
			t.Logf("seed %d (%s): %d console faults %v", seed, dur, len(fs), fs)
		}
	}
}

// TestCheckerExcusesConsoleFailuresOnlyAsTheFaultOfTheirSpanExplains: a
// console request that failed is excused only by a fault it overlapped
// (from its beginning until consoleGrace after its end), and only for
// the failure that fault explains: no answer or a sign-out while the
// console's process was faulted; 503 with Retry-After (the store briefly
// unavailable) while Valkey was. A 500, a change's failure shown on its
// page, a 503 without Retry-After, no answer while only Valkey was
// faulted, and any failure while only another process or Telegram was
// faulted, before or long after, are unexcused; a sign-in is well
// answered by its redirect to the Overview; once settled, the console's
// Broadcasts must show each broadcast done at its progress message's
// counts.
func TestCheckerExcusesConsoleFailuresOnlyAsTheFaultOfTheirSpanExplains(t *testing.T) {
	s := time.Second
	faults := []applied{
		{fault: fault{Kind: faultKill, Target: consoleSlot}, Began: 10 * s, Ended: 13 * s},
		{fault: fault{Kind: faultCut, Target: "valkey"}, Began: 30 * s, Ended: 33 * s},
		{fault: fault{Kind: faultKill, Target: "worker-1"}, Began: 50 * s, Ended: 52 * s},
		{fault: fault{Kind: fault502, Target: fault502}, Began: 60 * s, Ended: 65 * s},
		{fault: fault{Kind: faultBusy, Target: "valkey"}, Began: 70 * s, Ended: 74 * s},
		{fault: fault{Kind: faultSlow, Target: faultSlow}, Began: 90 * s, Ended: 95 * s},
	}
	unavailable := func(at time.Duration) consoleReq {
		return consoleReq{Path: "GET /api/broadcasts", At: at, End: at, Status: 503, RetryAfter: "5"}
	}
	tests := []struct {
		name                   string
		req                    consoleReq
		ok, excused, unexcused int
	}{
		{"a page answered", consoleReq{Path: "GET /queues", At: 11 * s, End: 11 * s, Status: 200}, 1, 0, 0},
		{"a sign-in answered", consoleReq{Path: "POST /login", Want: "/", At: 1 * s, End: 1 * s, Status: 303, Location: "/"}, 1, 0, 0},
		{"a wrong sign-in", consoleReq{Path: "POST /login", Want: "/", At: 1 * s, End: 1 * s, Status: 401}, 0, 0, 1},
		{"a change done", consoleReq{Path: "POST /chat/weight", Want: "/chat?id=1", At: 1 * s, End: 1 * s, Status: 303, Location: "/chat?id=1"}, 1, 0, 0},
		{"a change not signed in", consoleReq{Path: "POST /chat/weight", Want: "/chat?id=1", At: 1 * s, End: 1 * s, Status: 401}, 0, 0, 1},
		{"a change's failure shown during a network cut", consoleReq{Path: "GET /chat?id=1", At: 32 * s, End: 32 * s, Status: 200, Refused: "❌ Failed: EOF"}, 0, 0, 1},
		{"a change's failure shown with nothing held", consoleReq{Path: "GET /chat?id=1", At: 3 * s, End: 3 * s, Status: 200, Refused: "❌ Failed: EOF"}, 0, 0, 1},
		{"a change answered 503 during a network cut", consoleReq{Path: "POST /chat/weight", Want: "/chat?id=1", At: 31 * s, End: 31 * s, Status: 503, RetryAfter: "5"}, 0, 1, 0},
		{"refused while the console was killed", consoleReq{Path: "GET /queues", At: 11 * s, End: 11 * s, Err: "connection refused"}, 0, 1, 0},
		{"signed out as its process restarted", consoleReq{Path: "GET /queues", At: 14 * s, End: 14 * s, Status: 303, Location: "/login"}, 0, 1, 0},
		{"a hung request that began before the kill", consoleReq{Path: "GET /queues", At: 5 * s, End: 15 * s, Err: "timeout"}, 0, 1, 0},
		{"500 while the console was killed", consoleReq{Path: "GET /api/broadcasts", At: 12 * s, End: 12 * s, Status: 500}, 0, 0, 1},
		{"503 while the console was killed (Valkey fine)", unavailable(12 * s), 0, 0, 1},
		{"503 with Retry-After during a network cut", unavailable(31 * s), 0, 1, 0},
		{"503 with Retry-After within the grace after it", unavailable(33*s + consoleGrace), 0, 1, 0},
		{"503 with Retry-After past the grace", unavailable(34*s + consoleGrace), 0, 0, 1},
		{"503 without Retry-After during a network cut", consoleReq{Path: "GET /api/broadcasts", At: 31 * s, End: 31 * s, Status: 503}, 0, 0, 1},
		{"503 with Retry-After during BUSY", unavailable(72 * s), 0, 1, 0},
		{"503 with Retry-After during net-slow", unavailable(92 * s), 0, 1, 0},
		{"500 during a network cut", consoleReq{Path: "GET /api/broadcasts", At: 31 * s, End: 31 * s, Status: 500}, 0, 0, 1},
		{"500 during BUSY", consoleReq{Path: "GET /queues", At: 72 * s, End: 72 * s, Status: 500}, 0, 0, 1},
		{"no answer during BUSY", consoleReq{Path: "GET /queues", At: 71 * s, End: 73 * s, Err: "timeout"}, 0, 0, 1},
		{"503 while another process was killed", unavailable(51 * s), 0, 0, 1},
		{"500 while another process was killed", consoleReq{Path: "GET /api/broadcasts", At: 51 * s, End: 51 * s, Status: 500}, 0, 0, 1},
		{"refused while Telegram answered 502", consoleReq{Path: "GET /queues", At: 61 * s, End: 61 * s, Err: "connection refused"}, 0, 0, 1},
		{"signed out with nothing held", consoleReq{Path: "GET /queues", At: 3 * s, End: 3 * s, Status: 303, Location: "/login"}, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeConsole([]consoleReq{tc.req}, faults)
			require.Equal(t, 1, v.Requests)
			require.Equal(t, tc.ok, v.OK)
			require.Equal(t, tc.excused, v.Excused)
			require.Len(t, v.Excusals, tc.excused)
			for _, e := range v.Excusals {
				require.Contains(t, e, tc.req.Path)
				require.Contains(t, e, "excused by ")
			}
			require.Len(t, v.Unexcused, tc.unexcused)
			require.Equal(t, 1, v.Outcomes[tc.req.outcome()])
		})
	}

	done := verdict{ProgressSent: 510, ProgressFailed: 1, PaidProgressSent: 511}
	rows := []consoleRow{{ID: "bc_p", Total: 511, Sent: 511, Mode: "paid (51.1 Stars)"}, {ID: "bc_f", Total: 511, Sent: 510, Failed: 1, Mode: "free"}}
	require.Empty(t, consoleFinal(rows, done, true), "the console's counts are the progress messages'")
	short := slices.Clone(rows)
	short[1].Sent = 509
	require.Len(t, consoleFinal(short, done, true), 1, "a free broadcast shown short")
	running := slices.Clone(rows)
	running[0].Running = true
	require.Len(t, consoleFinal(running, done, true), 1, "a paid broadcast shown running once settled")
	require.Len(t, consoleFinal(rows[1:], done, true), 1, "the paid broadcast missing")
	require.Empty(t, consoleFinal(rows[1:], done, false), "no paid broadcast started")
	require.Len(t, consoleFinal(append(slices.Clone(rows), rows[1]), done, true), 1, "two free broadcasts")
}

// TestCheckerExcusesASignOutAfterARestartUntilTheNextSignIn: the console
// keeps its sessions in its process, so a sign-out (303 to /login) after a
// kill-9 or a SIGTERM of it is excused however late it comes, until the
// operator signs in again; after a SIGSTOP (the process and its sessions
// kept) only within the fault's span and grace; with no restart since
// the last sign-in, never.
func TestCheckerExcusesASignOutAfterARestartUntilTheNextSignIn(t *testing.T) {
	s := time.Second
	signIn := func(at time.Duration) consoleReq {
		return consoleReq{Path: signInPath, Want: "/", At: at, End: at, Status: 303, Location: "/"}
	}
	signedOut := func(at time.Duration) consoleReq {
		return consoleReq{Path: "GET /api/broadcasts", At: at, End: at, Status: 303, Location: "/login"}
	}
	late := 20*s + consoleGrace // past every fault's grace below
	tests := []struct {
		name    string
		fault   string
		reqs    []consoleReq // the last is judged
		excused bool
	}{
		{"after a kill-9, past the grace, no sign-in since", faultKill, []consoleReq{signIn(1 * s), signedOut(late)}, true},
		{"after a SIGTERM, past the grace, no sign-in since", faultTerm, []consoleReq{signIn(1 * s), signedOut(late)}, true},
		{"after a kill-9 and a sign-in since", faultKill, []consoleReq{signIn(1 * s), signIn(15 * s), signedOut(late)}, false},
		{"after a SIGSTOP, past the grace", faultStop, []consoleReq{signIn(1 * s), signedOut(late)}, false},
		{"a kill-9 before the last sign-in", faultKill, []consoleReq{signIn(12 * s), signedOut(late)}, false},
		{"after a kill-9, never signed in", faultKill, []consoleReq{signedOut(late)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			faults := []applied{{fault: fault{Kind: tc.fault, Target: consoleSlot}, Began: 10 * s, Ended: 13 * s}}
			v := judgeConsole(tc.reqs, faults)
			want := 0
			if tc.excused {
				want = 1
			}
			require.Equal(t, want, v.Excused, "%v", v.Unexcused)
			require.Len(t, v.Excusals, want)
			require.Len(t, v.Unexcused, 1-want)
		})
	}
}

// TestCheckerFindsABroadcastTheConsoleStoppedListingOrCountedBack: once
// the console listed a broadcast, a later answer without it, or with
// fewer copies settled, a smaller total, or a larger one once it was done,
// is a problem; counts going up, a broadcast running, and its total
// growing while it ran (chats that joined during its walk, as seed 7's
// 3-minute cluster runs saw after a /start rush) are not.
func TestCheckerFindsABroadcastTheConsoleStoppedListingOrCountedBack(t *testing.T) {
	row := consoleRow{ID: "bc_a", Total: 500, Sent: 100, Running: true, Mode: "free"}
	done := consoleRow{ID: "bc_a", Total: 500, Sent: 500, Mode: "free"}
	up, back, less, joined, grown := row, row, row, row, done
	up.Sent, back.Sent, less.Total, joined.Total, grown.Total = 200, 99, 499, 521, 521
	tests := []struct {
		name          string
		first, second consoleRow
		problems      int
	}{
		{"going on", row, up, 0},
		{"the same", row, row, 0},
		{"missing", row, consoleRow{}, 1},
		{"counted back", row, back, 1},
		{"a smaller total", row, less, 1},
		{"a larger total while running (chats joined during its walk)", row, joined, 0},
		{"a larger total once done", done, grown, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newOperator("127.0.0.1:1", "", time.Now(), time.Minute)
			o.saw(time.Second, []consoleRow{tc.first})
			var second []consoleRow
			if tc.second.ID != "" {
				second = []consoleRow{tc.second}
			}
			o.saw(2*time.Second, second)
			require.Len(t, o.problems, tc.problems, "%q", o.problems)
			running := 0
			for _, r := range []consoleRow{tc.first, tc.second} {
				if r.Running {
					running++
				}
			}
			require.Equal(t, running, o.running)
		})
	}
}

// TestAnExcusedConsoleRequestNamesTheFaultBegunLast: a request two faults
// excuse (a 503 for BUSY within a net-slow's grace) is named with the one
// begun last, its nearest cause, as the run's log line says "excused by".
func TestAnExcusedConsoleRequestNamesTheFaultBegunLast(t *testing.T) {
	ms := time.Millisecond
	faults := []applied{
		{fault: fault{Kind: faultSlow, Target: faultSlow}, Began: 38100 * ms, Ended: 41300 * ms},
		{fault: fault{Kind: faultBusy, Target: "valkey"}, Began: 44800 * ms, Ended: 47100 * ms},
		{fault: fault{Kind: faultKill, Target: "worker-1"}, Began: 45000 * ms, Ended: 46000 * ms}, // excuses no 503
	}
	r := consoleReq{Path: "GET /queues", At: 45900 * ms, End: 45900 * ms, Status: 503, RetryAfter: "5"}
	v := judgeConsole([]consoleReq{r}, faults)
	require.Equal(t, 1, v.Excused)
	require.Equal(t, []string{"GET /queues at 45.9s-45.9s: 503 (excused by valkey-busy valkey at 44.8s-47.1s)"}, v.Excusals)
}
