package chaos

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// history is what the checker reads: what the players sent (load) and
// what the emulator recorded.
type history struct {
	group     []sentUpdate
	messages  map[int64][]tgemu.Message // by chat, in send order
	rush      []int64
	taps      []string
	answers   map[string]int // callback query id -> answerCallbackQuery requests
	marker    string         // the broadcast's text ("" when none was started)
	audience  []int64        // chats that must each get one copy
	copyChats []int64        // every chat that may hold copies (audience and the cast)
	deadCopy  map[int64]bool // chats whose copy was dead-lettered
	// admin is the admin's chat as received: each broadcast's preview
	// (with its buttons), its progress message (edited as it goes) and
	// the admin's own copy.
	admin []tgemu.Message
	// The paid broadcast (allow_paid_broadcast): its text ("" when none
	// was started; every chat of audience must get one copy, as of the
	// free one) and the chats whose paid copy was dead-lettered.
	paidMarker string
	paidDead   map[int64]bool
	// paidAccepted is the messages the emulator accepted with
	// allow_paid_broadcast (tgemu.Message.Paid, every chat), paidSent its
	// own count of them (tgemu.Emulator.PaidSent), and paidOther the
	// accepted paid messages that are not a copy of the paid broadcast.
	paidAccepted, paidSent, paidOther int
	// paid is the paid broadcast's scenario ("" reads as paidCovered, as
	// in runs before it was drawn), acts what the admin saw of its halt
	// and answered, charged the Stars (tenths) the emulator took from the
	// balance since the paid broadcast's Send was tapped, and paidRequests
	// the times of every sendMessage with allow_paid_broadcast.
	paid         paidScenario
	acts         paidActs
	charged      int
	paidRequests []time.Time
	// held is the messages the emulator accepted under a tg-hold
	// (tgemu.FaultHold: sent, then the answer held and the connection
	// dropped), by chat and message id: the bot never learned they were
	// delivered (docs/delivery.md: an unknown outcome is sent again at
	// most once).
	held map[sentMsg]bool
}

// sentMsg names a message the emulator accepted: its chat and its id.
type sentMsg struct {
	chat int64
	id   int
}

// verdict is the checker's account of a history.
type verdict struct {
	GroupUpdates, Starts, Taps, Copies int // checked
	DeadCopies                         int // copies dead-lettered (not delivered, not lost)
	Lost, Duplicates, OrderViolations  int
	Wrong                              int // replies saying the update was applied twice, lost or out of turn
	// TapsUnanswered are taps that never got an answerCallbackQuery: by
	// design (internal/app/callback.go) the bot tries an answer for 5 s
	// and then gives up, so they are counted apart from Lost.
	TapsUnanswered int
	// FloodNotices are group updates answered with the intake's flood
	// notice (docs/floods.md): dropped unhandled, like the ones after it
	// in its window, which count as Lost.
	FloodNotices int
	// ProgressSent and ProgressFailed are the broadcast's final progress
	// counts (the admin's progress message: "✅ Broadcast done: N sent, F
	// failed ..."); CopyChats is how many chats the emulator saw get a
	// copy (the admin's own included). ProgressOff is 1 when the counts
	// disagree with the emulator (sent ≠ CopyChats, or failed ≠ the
	// copies dead-lettered) or the progress never reached its final text.
	ProgressSent, ProgressFailed, CopyChats, ProgressOff int
	// The paid broadcast's figures, as the free one's above: the audience
	// chats checked (PaidCopies), the copies dead-lettered, the final
	// progress counts against the chats the emulator saw get a paid copy
	// (PaidProgressOff 1 when they disagree, the progress never said done,
	// or its "💫 Paid: N copies" is not the chats that got a copy sent
	// paid). PaidAccepted is the messages the emulator accepted paid and
	// PaidSent its count of them (tgemu PaidSent): equal, or a problem.
	// PaidUnpaid is paid copies sent without allow_paid_broadcast (the
	// balance covers them all: a problem). All 0 in runs recorded before
	// the paid broadcast, and when it was not started.
	PaidCopies         int `json:",omitempty"`
	PaidDeadCopies     int `json:",omitempty"`
	PaidProgressSent   int `json:",omitempty"`
	PaidProgressFailed int `json:",omitempty"`
	PaidCopyChats      int `json:",omitempty"`
	PaidProgressOff    int `json:",omitempty"`
	PaidAccepted       int `json:",omitempty"`
	PaidSent           int `json:",omitempty"`
	PaidUnpaid         int `json:",omitempty"`
	// The paid scenario's figures (drawPaid; "" in runs recorded before
	// it): PaidFree the copies of the paid broadcast sent free (continued
	// free, or past the part paid), PaidCancelled the chats it never
	// reached because it was stopped (not lost), PaidStars the Stars
	// (tenths) its progress says it spent and PaidCharged what the
	// emulator took (PaidStars plus the paid copies sent twice, or a
	// problem), StopInFlight the copies the Stop's answer said were in
	// flight, PaidAfterAck the paid sends begun after the admin's ▶️
	// Continue free or 🛑 Stop was answered (0 after Continue free, at
	// most StopInFlight after Stop) and CopiesAfterStop the copies the
	// emulator accepted after the Stop was answered (at most
	// StopInFlight). PaidActOff is 1 when the balance ran out and the
	// halt, or the admin's answer to it, is missing.
	PaidScenario    paidScenario `json:",omitempty"`
	PaidFree        int          `json:",omitempty"`
	PaidCancelled   int          `json:",omitempty"`
	PaidStars       int          `json:",omitempty"`
	PaidCharged     int          `json:",omitempty"`
	StopInFlight    int          `json:",omitempty"`
	PaidAfterAck    int          `json:",omitempty"`
	CopiesAfterStop int          `json:",omitempty"`
	PaidActOff      int          `json:",omitempty"`
	// PaidUncounted is the chats that got a copy sent paid and another
	// sent free whose progress counts it free (the paid send's ack lost
	// to a fault, the copy sent again after the halt or past the part):
	// each also a duplicate, weighed against the sends in flight.
	PaidUncounted int `json:",omitempty"`
	// PaidUnanswered is the chats of a stopped paid broadcast whose every
	// copy the emulator accepted under a tg-hold (the answer dropped: the
	// bot cannot know it was delivered), so the Stop may count the copy
	// cancelled rather than sent: the progress's sent (and copies paid)
	// may fall short of the chats with a copy (paid) by at most these
	// (seed 32, 10 minutes, cluster: 2 such chats, counted cancelled).
	// unansweredChats names them for the report.
	PaidUnanswered  int `json:",omitempty"`
	unansweredChats []int64
	// Problems names what the checker found: at most maxItemProblems of
	// the ones about a single item (problem: a group update, a chat's
	// copy, a console request), every one about a broadcast as a whole
	// (finding: its progress, its Stars, its halt, the paid sends: a
	// handful a run). ProblemsLeftOut is the item problems past the cap,
	// not listed (0 in runs recorded before it was counted).
	Problems        []string
	ProblemsLeftOut int `json:",omitempty"`
	items           int // item problems found, listed or not
}

// maxItemProblems caps the problems about single items a verdict lists:
// a run that lost 4,000 group replies names the first 30.
const maxItemProblems = 30

// problem names a problem about a single item (a group update, a chat's
// copy, a console request), up to maxItemProblems of them; the rest are
// counted in ProblemsLeftOut.
func (v *verdict) problem(format string, args ...any) {
	v.items++
	if v.items > maxItemProblems {
		v.ProblemsLeftOut++
		return
	}
	v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
}

// finding names a problem about a broadcast as a whole (its progress
// against what the emulator received, its Stars against what it charged,
// its halt, the paid sends), always: the item problems before it (rows
// 45-47 of docs/chaos-runs.jsonl: 30 lost group replies) must not hide it.
func (v *verdict) finding(format string, args ...any) {
	v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
}

var attemptRE = regexp.MustCompile(`attempt (\d+)/\d+`)

// floodNotice begins the intake's notice for a dropped message.
const floodNotice = "Too many messages"

// progressRE reads a broadcast's progress text (internal/broadcast's
// progressText): its head, sent and failed counts.
var progressRE = regexp.MustCompile(`^(📣 Broadcast|✅ Broadcast done|🛑 Broadcast stopped): (\d+) sent[^,]*, (\d+) failed`)

// longestIncreasing marks the elements of a longest strictly increasing
// subsequence of xs (patience sorting, O(n log n)).
func longestIncreasing(xs []int) []bool {
	var tails []int // tails[l]: index in xs of the smallest tail of a run of length l+1
	prev := make([]int, len(xs))
	for k, x := range xs {
		l, _ := slices.BinarySearchFunc(tails, x, func(t, x int) int { return xs[t] - x })
		if l > 0 {
			prev[k] = tails[l-1]
		} else {
			prev[k] = -1
		}
		if l == len(tails) {
			tails = append(tails, k)
		} else {
			tails[l] = k
		}
	}
	in := make([]bool, len(xs))
	if len(tails) > 0 {
		for k := tails[len(tails)-1]; k >= 0; k = prev[k] {
			in[k] = true
		}
	}
	return in
}

// check goes over h: every group update has a reply that answers its
// message (reply_to_message_id), the first replies come in the order of
// the updates, a guess's reply carries its attempt number in its round
// (after a win: anything), a /play's says a new game began; every rush
// user got one welcome; every tap an answerCallbackQuery (else TapsUnanswered); every audience
// chat the broadcast once. Extra replies, welcomes and copies are
// duplicates.
func check(h history) verdict {
	var v verdict
	v.GroupUpdates = len(h.group)
	byChat := map[int64][]sentUpdate{}
	for _, u := range h.group {
		byChat[u.chat] = append(byChat[u.chat], u)
	}
	for chat, ups := range byChat {
		checkGroup(&v, chat, ups, h.messages[chat])
	}
	v.Starts = len(h.rush)
	for _, user := range h.rush {
		n := 0
		for _, m := range h.messages[user] {
			if strings.Contains(m.Text, "Welcome") {
				n++
			}
		}
		if n == 0 {
			v.Lost++
			v.problem("rush user %d: no welcome", user)
		}
		v.Duplicates += max(0, n-1)
	}
	v.Taps = len(h.taps)
	for _, id := range h.taps {
		if h.answers[id] == 0 {
			v.TapsUnanswered++
		}
	}
	if h.marker != "" {
		b := checkBroadcast(&v, h, h.marker, h.deadCopy, false)
		v.Copies, v.DeadCopies = b.copies, b.dead
		v.ProgressSent, v.ProgressFailed, v.CopyChats, v.ProgressOff = b.progressSent, b.progressFailed, b.chats, b.off
	}
	if h.paidMarker != "" {
		b := checkBroadcast(&v, h, h.paidMarker, h.paidDead, true)
		v.PaidCopies, v.PaidDeadCopies, v.PaidUnpaid = b.copies, b.dead, b.unpaid
		v.PaidProgressSent, v.PaidProgressFailed, v.PaidCopyChats, v.PaidProgressOff = b.progressSent, b.progressFailed, b.chats, b.off
		v.PaidFree, v.PaidCancelled = b.free, b.cancelled
		v.PaidUnanswered, v.unansweredChats = b.unanswered, b.unansweredChats
		checkPaidScenario(&v, h, b)
	}
	checkPaidSends(&v, h)
	return v
}

// broadcastFigures are one broadcast's figures (checkBroadcast): the
// audience chats checked, the copies dead-lettered, the copies of a paid
// broadcast sent without allow_paid_broadcast, the final progress counts,
// the chats the emulator saw get a copy (and of a paid broadcast, a copy
// sent paid), and off 1 when the progress disagrees with them.
type broadcastFigures struct {
	copies, dead, unpaid           int
	progressSent, progressFailed   int
	chats, paidChats, progressPaid int
	off                            int
	// Of a paid broadcast: the copies sent free (free), the copies
	// accepted paid (paidCopies: paidChats and the paid ones sent twice),
	// the audience chats without a copy after a Stop (cancelled), and the
	// Stars (tenths) its progress says it spent (progressStars).
	free, paidCopies, cancelled int
	progressStars               int
	// modeRead: the progress's last "💫 Paid…" line was read
	// (progressPaid, progressStars).
	modeRead bool
	// onlyPaid is the chats whose every copy was sent paid: the chats
	// the progress must count paid. A chat that got a paid copy and a
	// free one (a paid send whose ack a fault lost, sent again free after
	// the halt or past the part) may be counted either way; uncounted is
	// the chats with a paid copy the progress does not count paid.
	onlyPaid, uncounted int
	// Of a stopped paid broadcast: the chats whose every copy was
	// accepted unanswered (history.held), which its Stop may count
	// cancelled (unanswered; unansweredPaid those of them whose copies
	// were all paid), and their ids.
	unanswered, unansweredPaid int
	unansweredChats            []int64
}

// checkBroadcast checks the broadcast whose copies carry marker: every
// audience chat has a copy, or its copy was dead-lettered (dead); extra
// copies in any chat are duplicates (added to v.Duplicates) and a chat of
// the audience without one is lost (v.Lost). Of a paid broadcast (paid),
// a copy the emulator did not accept as paid is counted in unpaid and
// named. Then its progress (checkProgress).
func checkBroadcast(v *verdict, h history, marker string, dead map[int64]bool, paid bool) broadcastFigures {
	name := map[bool]string{false: "broadcast", true: "paid broadcast"}[paid]
	b := broadcastFigures{copies: len(h.audience)}
	stopped := paid && h.paid == paidHaltStop && !h.acts.Ack.IsZero()
	copies := map[int64]int{}
	for _, chat := range h.copyChats {
		sentPaid, allPaid, allHeld := false, true, true
		for _, m := range h.messages[chat] {
			if !strings.Contains(m.Text, marker) {
				continue
			}
			copies[chat]++
			sentPaid, allPaid = sentPaid || m.Paid, allPaid && m.Paid
			allHeld = allHeld && h.held[sentMsg{chat, m.ID}]
			b.tallyCopy(v, h, paid, m, fmt.Sprintf("%s: chat %d", name, chat))
		}
		if sentPaid {
			b.paidChats++
		}
		if sentPaid && allPaid {
			b.onlyPaid++
		}
		// Delivered, but never answered: the copy stayed on its lane (its
		// nack, or its lease running out) and a Stop before its one
		// resend cancels it, as it should a copy the bot never knew sent.
		if stopped && copies[chat] > 0 && allHeld {
			b.unanswered++
			b.unansweredChats = append(b.unansweredChats, chat)
			if allPaid {
				b.unansweredPaid++
			}
		}
		if copies[chat] > 0 {
			b.chats++
		}
		v.Duplicates += max(0, copies[chat]-1)
	}
	for _, chat := range h.audience {
		if copies[chat] == 0 && dead[chat] {
			b.dead++
			continue
		}
		if copies[chat] == 0 && stopped {
			b.cancelled++
			continue
		}
		if copies[chat] == 0 {
			v.Lost++
			v.problem("%s: chat %d has no copy", name, chat)
		}
	}
	checkProgress(v, h, marker, paid, &b)
	return b
}

// paidModeRE reads a paid broadcast's mode line (internal/broadcast's
// modeText: "💫 Paid: 3 copies, 0.3 Stars", "💫 Paid, then free: 3 copies
// paid (0.3 Stars), 5 moved to free", "💫 Paid, halted (the bot cannot
// pay): 3 copies paid, 0.3 Stars so far"): the copies its tracker counted
// sent paid and the Stars they cost (whole, tenths).
var paidModeRE = regexp.MustCompile(`(?m)^💫 Paid[^:\n]*: (\d+) copies(?: paid)?,? \(?(\d+)\.(\d) Stars`)

// stoppedRE reads a stopped broadcast's cancelled copies and its total.
var stoppedRE = regexp.MustCompile(`, (\d+) cancelled of (\d+)`)

// lastMode is the last paid mode line progress message m showed (its
// text, then its edits), "" when none: a stopped broadcast's final text
// has none, the halted one before it does.
func lastMode(m tgemu.Message) string {
	mode := paidModeRE.FindString(m.Text)
	for _, e := range m.Edits {
		if x := paidModeRE.FindString(e.Text); x != "" {
			mode = x
		}
	}
	return mode
}

// tallyCopy counts copy m of a broadcast (paid: a paid one) that who
// ("broadcast: chat 5") got: a copy accepted paid in paidCopies; of a
// paid broadcast, a copy sent free in free when its scenario lets copies
// go free (mayGoFree), else in unpaid and named as a problem.
func (b *broadcastFigures) tallyCopy(v *verdict, h history, paid bool, m tgemu.Message, who string) {
	if m.Paid {
		b.paidCopies++
	}
	switch {
	case !paid || m.Paid:
	case mayGoFree(h):
		b.free++
	default:
		b.unpaid++
		v.problem("%s got a copy sent without allow_paid_broadcast", who)
	}
}

// mayGoFree says whether copies of h's paid broadcast may be sent without
// allow_paid_broadcast: in every scenario but paidCovered (continued
// free, or the rest past the part paid).
func mayGoFree(h history) bool { return h.paid != "" && h.paid != paidCovered }

// stopInFlightRE reads the copies in flight the Stop's answer counted.
var stopInFlightRE = regexp.MustCompile(`(\d+) in flight`)

// checkPaidScenario checks what the paid broadcast's scenario adds to its
// copies and progress (checkBroadcast): the Stars its progress says it
// spent are what the emulator charged, less the paid copies it does not
// count (sent twice, which Telegram charges and the bot counts once, or
// in a chat it counts free) and the other messages accepted paid (named
// by checkPaidSends); when the balance ran
// out (the halt scenarios) the halt was noticed and answered; when a halt
// was answered (in any scenario) no paid send began after the admin's ▶️ Continue free was answered, and after
// 🛑 Stop at most the copies its answer said were in flight, as for the
// copies accepted after it.
func checkPaidScenario(v *verdict, h history, b broadcastFigures) {
	v.PaidScenario = h.paid
	v.PaidStars, v.PaidCharged = b.progressStars, h.charged
	v.PaidUncounted = b.uncounted
	// Telegram charges every paid copy it accepted; the progress counts
	// one copy a chat, and none paid in a chat it counts free.
	notCounted := b.paidCopies - b.progressPaid
	if b.modeRead && b.progressStars+notCounted+h.paidOther != h.charged {
		v.PaidProgressOff = 1
		v.finding("paid broadcast: the progress says %s Stars spent, %d paid copies it does not count and %d other messages paid; the emulator charged %s Stars",
			starsText(b.progressStars), notCounted, h.paidOther, starsText(h.charged))
	}
	halts := h.paid == paidHaltFree || h.paid == paidHaltStop
	if halts && (h.acts.Notice.IsZero() || h.acts.Ack.IsZero()) {
		v.PaidActOff = 1
		v.finding("paid broadcast (%s): the halt noticed at %v, answered at %v (%q)", h.paid, h.acts.Notice, h.acts.Ack, h.acts.Answer)
	}
	if h.acts.Ack.IsZero() { // no halt answered (in paidPart, none came)
		return
	}
	allowed := 0
	if h.paid == paidHaltStop {
		m := stopInFlightRE.FindStringSubmatch(h.acts.Answer)
		if m != nil {
			v.StopInFlight, _ = strconv.Atoi(m[1])
		}
		allowed = v.StopInFlight
		for _, chat := range h.copyChats {
			for _, m := range h.messages[chat] {
				if strings.Contains(m.Text, h.paidMarker) && m.Time.After(h.acts.Ack) {
					v.CopiesAfterStop++
				}
			}
		}
		if v.CopiesAfterStop > allowed {
			v.finding("paid broadcast: %d copies accepted after the Stop was answered, %d were in flight", v.CopiesAfterStop, allowed)
		}
	}
	for _, at := range h.paidRequests {
		if at.After(h.acts.Ack) {
			v.PaidAfterAck++
		}
	}
	if v.PaidAfterAck > allowed {
		v.finding("paid broadcast: %d paid sends began after the admin's %s was answered (%d in flight then)", v.PaidAfterAck, h.acts.Choice, allowed)
	}
}

// starsText renders tenths of a Star as "1.2".
func starsText(tenths int) string { return fmt.Sprintf("%d.%d", tenths/10, tenths%10) }

// checkProgress compares the final progress counts of the broadcast of
// marker (the admin's progress message: a paid broadcast's is the one
// with the "💫 Paid" line, a free one's the one without) with what the
// emulator received: sent is the chats with a copy (a copy sent twice
// counts once, as the tracker counts a chat's copy once; the admin's own
// included, the preview with its buttons not), failed the copies
// dead-lettered, and a paid broadcast's "💫 Paid: N copies" the chats that
// got a copy sent paid; a progress that never said "done" is off too. Of
// a stopped paid broadcast, sent and copies paid may each be short by the
// chats whose every copy the emulator accepted unanswered (tg-hold:
// b.unanswered, b.unansweredPaid): the bot never learned of the delivery,
// and its Stop counts a copy still on its lane cancelled.
func checkProgress(v *verdict, h history, marker string, paid bool, b *broadcastFigures) {
	name := map[bool]string{false: "broadcast", true: "paid broadcast"}[paid]
	var progress, mode string // the final progress text, and its last paid mode line
	for _, m := range h.admin {
		switch txt := m.CurrentText(); {
		case progressRE.MatchString(txt):
			// A paid broadcast's progress says so from its first text; a
			// stopped one's final text drops the mode line.
			if strings.Contains(m.Text, "\n💫 Paid") == paid {
				progress, mode = txt, lastMode(m)
			}
		case strings.Contains(m.Text, marker) && m.ReplyMarkup == "": // the admin's own copy (the preview has buttons)
			b.chats++
			if m.Paid {
				b.paidChats++
				b.onlyPaid++
			}
			b.tallyCopy(v, h, paid, m, name+": the admin")
		}
	}
	head := "✅ Broadcast done"
	if paid && h.paid == paidHaltStop {
		head = "🛑 Broadcast stopped"
	}
	m := progressRE.FindStringSubmatch(progress)
	if m == nil {
		b.off = 1
		v.finding("%s: no progress message says %q: %q", name, head, progress)
		return
	}
	// The counts are read whatever the head: a progress that never said
	// done (a halt never answered) is off, and its figures are still what
	// it said, not 0 (rows 45-47 of docs/chaos-runs.jsonl recorded 0).
	b.progressSent, _ = strconv.Atoi(m[2])
	b.progressFailed, _ = strconv.Atoi(m[3])
	if m[1] != head {
		b.off = 1
		v.finding("%s: the progress never said %q: %q", name, head, progress)
	}
	// A chat whose every copy went unanswered (tg-hold) may be counted
	// cancelled by the Stop instead of sent (b.unanswered, 0 unless
	// stopped).
	if b.progressSent > b.chats || b.progressSent < b.chats-b.unanswered || b.progressFailed != b.dead {
		b.off = 1
		v.finding("%s: the progress says %d sent, %d failed; the emulator saw %d chats get a copy, %d dead-lettered%s",
			name, b.progressSent, b.progressFailed, b.chats, b.dead, unansweredText(b.unanswered))
	}
	if !paid {
		return
	}
	if sm := stoppedRE.FindStringSubmatch(progress); m[1] == "🛑 Broadcast stopped" {
		cancelled, total := -1, -2
		if sm != nil {
			cancelled, _ = strconv.Atoi(sm[1])
			total, _ = strconv.Atoi(sm[2])
		}
		if b.progressSent+b.progressFailed+cancelled != total {
			b.off = 1
			v.finding("%s: the stopped progress's sent, failed and cancelled are not its total: %q", name, progress)
		}
	}
	pm := paidModeRE.FindStringSubmatch(mode)
	if pm == nil {
		b.off = 1
		v.finding("%s: the progress has no \"💫 Paid…: N copies…, X Stars\" line: %q", name, mode)
		return
	}
	b.modeRead = true
	b.progressPaid, _ = strconv.Atoi(pm[1])
	whole, _ := strconv.Atoi(pm[2])
	tenth, _ := strconv.Atoi(pm[3])
	b.progressStars = 10*whole + tenth
	// (A chat whose copy went unanswered before the Stop is counted
	// cancelled, not free.)
	b.uncounted = max(0, b.paidChats-b.progressPaid-b.unansweredPaid)
	if b.progressPaid < b.onlyPaid-b.unansweredPaid || b.progressPaid > b.paidChats {
		b.off = 1
		v.finding("%s: the progress says %d copies paid; the emulator saw %d chats get a copy sent paid (%d only paid copies)%s",
			name, b.progressPaid, b.paidChats, b.onlyPaid, unansweredText(b.unansweredPaid))
	}
}

// unansweredText is the note a progress finding adds for n chats whose
// every copy went unanswered before a Stop ("" when none).
func unansweredText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them got every copy unanswered, tg-hold, and may be counted cancelled)", n)
}

// checkPaidSends compares the emulator's paid count (PaidSent) with the
// messages it accepted paid, and names accepted paid messages that are no
// copy of the paid broadcast (a reply or a free copy sent paid).
func checkPaidSends(v *verdict, h history) {
	v.PaidAccepted, v.PaidSent = h.paidAccepted, h.paidSent
	if h.paidSent != h.paidAccepted {
		v.finding("paid sends: the emulator counted %d (PaidSent), it accepted %d messages paid", h.paidSent, h.paidAccepted)
	}
	if h.paidOther > 0 {
		v.finding("paid sends: %d messages accepted paid are not a copy of the paid broadcast", h.paidOther)
	}
}

// goroutineTolerance is how many more goroutines a bot process may run
// once the run has settled than its slot's process ran before the faults:
// its idle keep-alive connections to the emulator (net/http's two
// goroutines each where a client of the bot uses it; a worker's own
// connections, up to senders+2, run none) and to Valkey
// (valkey-go's connections, remade after the faults). A process is judged
// only when it did more work than this (updates recorded or handled,
// messages sent: workFamilies), so a leak of one goroutine per unit of work
// cannot hide within it.
const goroutineTolerance = 20

// judgeGoroutines compares each slot's process after settling (after,
// the processes alive at the end: a restarted slot's newest) with the
// slot's before the faults (before): more than goroutineTolerance above
// it is a leak. It returns the leaks, how many processes it judged, and
// the ones it could not judge (too little work since their start).
func judgeGoroutines(before, after map[string]procStat) (leaks []string, judged int, unjudged []string) {
	names := slices.Sorted(maps.Keys(after))
	for _, slot := range names {
		a, b := after[slot], before[slot]
		if _, ok := before[slot]; !ok {
			continue
		}
		if a.Work <= goroutineTolerance {
			unjudged = append(unjudged, fmt.Sprintf("%s: %d goroutines (%d before the faults), only %d units of work", a.Name, a.Goroutines, b.Goroutines, a.Work))
			continue
		}
		judged++
		if a.Goroutines > b.Goroutines+goroutineTolerance {
			leaks = append(leaks, fmt.Sprintf("%s: %d goroutines after settling, %d before the faults (%s), after %d units of work",
				a.Name, a.Goroutines, b.Goroutines, b.Name, a.Work))
		}
	}
	return leaks, judged, unjudged
}

// checkGroup checks one group's updates (in the order sent) against the
// messages the group received.
func checkGroup(v *verdict, chat int64, ups []sentUpdate, msgs []tgemu.Message) {
	idx := make(map[int]int, len(ups)) // message id -> index in ups
	for i, u := range ups {
		idx[u.msgID] = i
	}
	replies := make([][]tgemu.Message, len(ups))
	var order []int // the updates of the first replies, in the order the replies came
	for _, m := range msgs {
		i, ok := idx[m.ReplyToMessageID]
		if m.ReplyToMessageID == 0 || !ok {
			continue
		}
		if len(replies[i]) == 0 {
			order = append(order, i)
		}
		replies[i] = append(replies[i], m)
	}
	// The replies out of order are the fewest whose removal leaves the
	// rest in the order of their updates: all but a longest increasing
	// run (one early reply is one violation, not one per later reply).
	inOrder := longestIncreasing(order)
	for k, i := range order {
		if !inOrder[k] {
			v.OrderViolations++
			v.problem("group %d: the reply to update %d (%s) came out of the order of the updates", chat, ups[i].id, ups[i].kind)
		}
	}
	won := map[int]bool{} // rounds won before their end
	for i, u := range ups {
		rs := replies[i]
		if len(rs) == 0 {
			v.Lost++
			v.problem("group %d: update %d (%s, round %d) got no reply", chat, u.id, u.kind, u.round)
			continue
		}
		v.Duplicates += len(rs) - 1
		txt := rs[0].Text
		switch {
		case strings.HasPrefix(txt, floodNotice):
			v.FloodNotices++
			v.problem("group %d: update %d (%s, round %d) dropped by the flood limits: %q", chat, u.id, u.kind, u.round, txt)
		case won[u.round]:
		case u.kind == "play" && !strings.Contains(txt, "New code"):
			v.Wrong++
			v.problem("group %d: /play (update %d, round %d) did not start a game: %q", chat, u.id, u.round, txt)
		case u.kind == "guess":
			if strings.Contains(txt, "🟢🟢🟢🟢") {
				won[u.round] = true
				continue
			}
			m := attemptRE.FindStringSubmatch(txt)
			if m == nil || m[1] != strconv.Itoa(u.guess) {
				v.Wrong++
				v.problem("group %d: guess %d of round %d (update %d) answered %q", chat, u.guess, u.round, u.id, txt)
			}
		}
	}
}

// chatsOf lists the chats of a history's cast (groups, tappers, rush users,
// the flooder), for the broadcast's duplicates.
func chatsOf(group []sentUpdate, rush []int64) []int64 {
	var out []int64
	for g := range groups {
		out = append(out, int64(groupsFirst-g))
	}
	for i := range tappers {
		out = append(out, int64(tappersFirst+i))
	}
	out = append(out, rush...)
	out = append(out, flooderID) // not the admin: its preview carries the text too
	for _, u := range group {
		out = append(out, u.chat)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
