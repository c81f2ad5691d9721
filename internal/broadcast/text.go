package broadcast

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// progressText renders a broadcast's counts in chats (Progress.InChats: a
// text split in parts is one copy per chat, as the preview counts), e.g.
// "📣 Broadcast: 20 sent, 1 failed (forbidden 1), 4 remaining of 25"; a
// stopped one, e.g. "🛑 Broadcast stopped: 60 sent before the stop, 0
// failed, 1937 cancelled of 2000, 3 in flight", and once those settled
// "62 sent (2 of them in flight at the stop), …" (stoppedSent).
func progressText(p notifier.Progress) string {
	p = p.InChats()
	failed := 0
	reasons := make([]string, 0, len(p.Failed))
	for r, n := range p.Failed {
		if n > 0 {
			failed += n
			reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
		}
	}
	sort.Strings(reasons)
	f := strconv.Itoa(failed) + " failed"
	if len(reasons) > 0 {
		f += " (" + strings.Join(reasons, ", ") + ")"
	}
	if p.Stopped {
		txt := fmt.Sprintf("🛑 Broadcast stopped: %s, %s, %d cancelled of %d", stoppedSent(p), f, p.Cancelled, p.Total)
		if p.Remaining > 0 {
			txt += fmt.Sprintf(", %d in flight", p.Remaining)
		}
		if p.Paid {
			// What it cost: a stopped paid broadcast's last word on it.
			txt += "\n" + modeText(p)
		}
		return txt
	}
	head := "📣 Broadcast"
	if p.Done() {
		head = "✅ Broadcast done"
	}
	txt := fmt.Sprintf("%s: %d sent, %s, %d remaining of %d", head, p.Sent, f, max(p.Remaining, 0), p.Total)
	if p.Lazy && p.Walking && p.Queued == 0 && p.Sent == 0 && !p.At.IsZero() {
		txt += "\n🕘 Starts at " + StartTime(p.At)
	}
	if p.Rate > 0 && !p.Done() {
		txt += "\n⏳ Spread: " + spreadPace(p.Total == 1 && p.Parts <= 1, p.Rate)
	}
	if p.Paid {
		txt += "\n" + modeText(p)
	}
	if !p.Done() {
		txt += "\nTo stop it: 🛑 Stop, or /broadcast stop " + p.ID
	}
	return txt
}

// stoppedSent is what stopped broadcast p (in chats) says of its copies
// sent: "60 sent before the stop" while no copy in flight at the stop was
// delivered since, "62 sent (2 of them in flight at the stop)" once some
// were (Sent less StopSent: every copy delivered after the stop was in
// flight at it), and "60 sent" when the stop's counts were not recorded
// (a stop cut short, whose copies may still be sent until it is
// finished, or one finished before they were recorded): the copies in
// flight at a stop are delivered or not as they settle, so a count of
// sent copies taken after it is not all "before the stop".
func stoppedSent(p notifier.Progress) string {
	switch after := p.Sent - p.StopSent; {
	case !p.StopCounted:
		return fmt.Sprintf("%d sent", p.Sent)
	case after > 0:
		return fmt.Sprintf("%d sent (%d of them in flight at the stop)", p.Sent, after)
	}
	return fmt.Sprintf("%d sent before the stop", p.Sent)
}

// atStop is stopped broadcast p's copies sent before the stop and in
// flight at it, as its stop recorded them (Progress.StopSent,
// StopInFlight); for a stop that recorded none (cut short, or finished
// before they were recorded), Sent and Remaining now.
func atStop(p notifier.Progress) (sent, inFlight int) {
	if p.StopCounted {
		return p.StopSent, p.StopInFlight
	}
	return p.Sent, max(p.Remaining, 0)
}

// modeText is a paid broadcast's mode and cost so far, e.g. "💫 Paid: 30
// copies, 3.0 Stars so far" ("… 3.0 Stars" once done), "💫 Paid, halted
// (the bot cannot pay): …", "💫 Paid, then free: 30 copies paid (3.0
// Stars), 50 moved to free".
func modeText(p notifier.Progress) string {
	stars := notifier.FormatStars(p.StarTenths())
	switch {
	case p.Done() && !p.Free:
		return fmt.Sprintf("💫 Paid: %s, %s Stars", copies(p.PaidSent), stars)
	case p.Free:
		return fmt.Sprintf("💫 Paid, then free: %s paid (%s Stars), %d moved to free", copies(p.PaidSent), stars, p.Moved)
	case p.Halted && !p.Stopped:
		return fmt.Sprintf("💫 Paid, halted (the bot cannot pay): %s paid, %s Stars so far", copies(p.PaidSent), stars)
	default:
		return fmt.Sprintf("💫 Paid: %s, %s Stars so far", copies(p.PaidSent), stars)
	}
}

// paidNote is ", paid: N copies, X Stars" for a paid broadcast (audit
// details), "" for a free one.
func paidNote(p notifier.Progress) string {
	if !p.Paid {
		return ""
	}
	return fmt.Sprintf(", paid: %s, %s Stars", copies(p.PaidSent), notifier.FormatStars(p.StarTenths()))
}

// copies is "1 copy" or "n copies".
func copies(n int) string { return tgtext.Plural(n, "copy", "copies") }
