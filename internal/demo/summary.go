package demo

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/flood"
)

// Check is one promise of the scene and whether it held.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// Summary is the outcome of a scene.
type Summary struct {
	// Scene is how long the scene ran (bot ready to last delivery).
	Scene time.Duration
	// Chats are the per-chat figures at the end, in cast order.
	Chats []ChatStats
	// Commands and Answered count the users' commands and those with a
	// reply; Delivered counts every message the bot sent.
	Commands, Answered, Delivered int
	// QuietReplies, QuietP50 and QuietMax describe the quiet chats' waits
	// (command to reply).
	QuietReplies       int
	QuietP50, QuietMax time.Duration
	// BurstCommands is what the bursting chat sent; BurstDrain the time
	// from its first command to its last reply; BurstMax its longest wait.
	BurstCommands        int
	BurstDrain, BurstMax time.Duration
	// BroadcastWant is the number of chats, BroadcastGot those that got the
	// broadcast (once or more), BroadcastDup the extra copies;
	// BroadcastFanout the time from /broadcast to the last first copy.
	BroadcastWant, BroadcastGot, BroadcastDup int
	BroadcastFanout, BroadcastP50             time.Duration
	// Taps counts the tapper's button taps, TapsAnswered those answered,
	// TapsLimited those answered with the intake limit's toast instead
	// (dropped unhandled: not answered); TapP50, TapP99 and TapMax are
	// tap-to-answer times of the answered ones (the tap queued at the
	// emulator to answerCallbackQuery accepted).
	Taps, TapsAnswered, TapsLimited int
	TapP50, TapP99, TapMax          time.Duration
	// Rush is the VIP chat's share in the rush, before and after the admin
	// raised its weight.
	Rush rushShare
	// Admin is what the admin sent and the first line of each reply.
	Admin []Exchange
	// TooMany counts the 429s the emulator answered, Rejected every
	// sendMessage it refused; PeakGlobal is the most sends (messages and
	// edits, as the limiter counts them) accepted in any 1 s window,
	// PeakChat the most in one private chat in 1 s.
	TooMany, Rejected, PeakGlobal, PeakChat int
	// TooManyByChat counts the 429s per chat id; Diagnosis says, per 429,
	// how full the global and the chat's windows were.
	TooManyByChat map[int64]int
	Diagnosis     []string
	// BotStop is how the bot stopped at the end ("" when cleanly);
	// BotOutput the tail of its stdout and stderr.
	BotStop, BotOutput string
	// Checks are the promises; OK reports whether all held.
	Checks []Check
	// Interrupted: the demo was stopped (Ctrl-C) before the scene ended;
	// the figures are what it got to, and no promise is judged (Checks
	// is empty, OK false).
	Interrupted bool
}

// OK reports whether every check held.
func (s Summary) OK() bool {
	for _, c := range s.Checks {
		if !c.OK {
			return false
		}
	}
	return len(s.Checks) > 0
}

// limitsSeen are the emulator's figures at the end.
type limitsSeen struct {
	tooMany, rejected, peakGlobal, peakChat int
	tooManyByChat                           map[int64]int
}

// summarize computes the summary and its checks.
func summarize(cfg Scene, scene time.Duration, chats []ChatStats, rush rushShare, lim limitsSeen, errs []error, botAlive bool) Summary {
	s := Summary{Scene: scene, Chats: chats, Rush: rush, TooMany: lim.tooMany, Rejected: lim.rejected,
		PeakGlobal: lim.peakGlobal, PeakChat: lim.peakChat, TooManyByChat: lim.tooManyByChat}
	t := s.tally(cfg, chats)
	s.Checks = append(s.Checks, s.quietCheck(cfg, t), s.lostCheck(t, errs), weightCheck(rush), s.limitsCheck(chats))
	s.Checks = append(s.Checks, Check{
		Name: "taps answered within 1 s",
		OK:   s.Taps > 0 && s.TapsAnswered == s.Taps && s.TapP99 < time.Second,
		Detail: fmt.Sprintf("%d/%d taps answered, %d limited (%q), tap to answer p50 %s, p99 %s, max %s (limit p99 1s)",
			s.TapsAnswered, s.Taps, s.TapsLimited, flood.ToastText, ms(s.TapP50), ms(s.TapP99), ms(s.TapMax)),
	})
	s.Checks = append(s.Checks, Check{
		Name: "the bot ran the whole scene", OK: botAlive,
		Detail: map[bool]string{true: "still running at the end", false: "the bot process exited during the scene"}[botAlive],
	})
	return s
}

// tallied is what the checks read besides the Summary's totals: the chats
// that went unanswered, got no broadcast copy or were starved (names with
// their figures) and the quiet chats' reply waits.
type tallied struct {
	quiet                       []time.Duration
	unanswered, noCopy, starved []string
}

// tally sums the chats' figures into s and returns the lists the checks
// name.
func (s *Summary) tally(cfg Scene, chats []ChatStats) tallied {
	var t tallied
	var bc []time.Duration
	for _, c := range chats {
		s.Commands += c.Sent
		s.Answered += c.Answered
		s.Delivered += c.Delivered
		if c.Sent > c.Answered {
			t.unanswered = append(t.unanswered, fmt.Sprintf("%s %d/%d", c.Name, c.Answered, c.Sent))
		}
		if c.Role == RoleRush {
			// Not in the broadcast's audience: it first spoke after it.
		} else if c.Broadcasts > 0 {
			s.BroadcastGot++
			s.BroadcastDup += c.Broadcasts - 1
			s.BroadcastFanout = max(s.BroadcastFanout, c.BroadcastWait)
			bc = append(bc, c.BroadcastWait)
		} else {
			t.noCopy = append(t.noCopy, c.Name)
		}
		if c.Role != RoleRush {
			s.BroadcastWant++
		}
		switch c.Role {
		case RoleQuiet:
			t.quiet = append(t.quiet, c.Waits...)
			if m := percentile(c.Waits, 100); m > cfg.QuietMaxWait || c.Answered < c.Sent {
				t.starved = append(t.starved, fmt.Sprintf("%s (max %s, %d/%d answered)", c.Name, secs(m), c.Answered, c.Sent))
			}
		case RoleTap:
			s.Taps += c.Taps
			s.TapsAnswered += len(c.TapWaits)
			s.TapsLimited += c.TapsLimited
			s.TapP50, s.TapP99, s.TapMax = percentile(c.TapWaits, 50), percentile(c.TapWaits, 99), percentile(c.TapWaits, 100)
		case RoleBurst:
			s.BurstCommands = c.Sent
			s.BurstMax = percentile(c.Waits, 100)
			if !c.Last.IsZero() {
				s.BurstDrain = c.Last.Sub(c.First)
			}
		}
	}
	s.BroadcastP50 = percentile(bc, 50)
	s.QuietReplies = len(t.quiet)
	s.QuietP50, s.QuietMax = percentile(t.quiet, 50), percentile(t.quiet, 100)
	return t
}

// quietCheck: every quiet chat had all its replies, none waited longer than
// cfg.QuietMaxWait.
func (s *Summary) quietCheck(cfg Scene, t tallied) Check {
	c := Check{
		Name: "quiet chats were not starved",
		OK:   len(t.starved) == 0 && len(t.quiet) > 0,
		Detail: fmt.Sprintf("%d replies, wait p50 %s, max %s (limit %s), while the burst chat's %d commands took %s to drain",
			len(t.quiet), secs(s.QuietP50), secs(s.QuietMax), secs(cfg.QuietMaxWait), s.BurstCommands, secs(s.BurstDrain)),
	}
	if len(t.starved) > 0 {
		c.Detail += "; starved: " + strings.Join(t.starved, ", ")
	}
	return c
}

// lostCheck: every command answered, one broadcast copy per chat, no error
// in the scene.
func (s *Summary) lostCheck(t tallied, errs []error) Check {
	lost := Check{Name: "no message lost", OK: len(t.unanswered) == 0 && len(t.noCopy) == 0 && s.BroadcastDup == 0 && len(errs) == 0,
		Detail: fmt.Sprintf("%d/%d commands answered, broadcast reached %d/%d chats in %s, %d duplicate copies",
			s.Answered, s.Commands, s.BroadcastGot, s.BroadcastWant, secs(s.BroadcastFanout), s.BroadcastDup)}
	if len(t.unanswered) > 0 {
		lost.Detail += "; unanswered: " + firstFew(t.unanswered)
	}
	if len(t.noCopy) > 0 {
		lost.Detail += "; no broadcast: " + firstFew(t.noCopy)
	}
	for _, e := range errs {
		lost.Detail += "; " + e.Error()
	}
	return lost
}

// weightCheck: the VIP chat's share rose with its weight.
//
// A weight-5 chat among N > 30 backlogs at 30/s overall is owed 5× an
// average chat's share, but Telegram's 1 message/s per private chat caps
// it: with 121 chats an average chat gets about 0.25/s, and the VIP chat
// takes its 5 messages a turn at 1/s, then waits a turn of the ring (about
// 4 s): about 0.5/s, 2×.
func weightCheck(rush rushShare) Check {
	weighted := Check{Name: "a raised weight raised the chat's share while the global rate bound",
		OK:     rush.Measured && rush.After.Times(rush.Chats) >= minRushGain && rush.After.Times(rush.Chats) > rush.Before.Times(rush.Chats),
		Detail: "not measured"}
	if rush.Measured {
		weighted.Detail = fmt.Sprintf("%d chats with backlogs; weight 1: %s; weight %d: %s (promised ≥ %.1f×, capped by 1 msg/s per chat)",
			rush.Chats, rush.Before.String(rush.Chats), vipWeight, rush.After.String(rush.Chats), minRushGain)
	}
	return weighted
}

// limitsCheck: no 429 and no refused send, with the 429s by chat name.
func (s *Summary) limitsCheck(chats []ChatStats) Check {
	limits := Check{
		Name: "within Telegram's limits, zero 429s",
		// The peaks are figures, not the check: the emulator refuses a send
		// over its limits (429), so they cannot exceed them; the 429s can.
		OK: s.TooMany == 0 && s.Rejected == 0,
		Detail: fmt.Sprintf("%d × 429, %d rejected, peak %d msg/s overall (limit 30), %d msg/s in one chat (limit 1)",
			s.TooMany, s.Rejected, s.PeakGlobal, s.PeakChat),
	}
	if len(s.TooManyByChat) > 0 {
		names := make(map[int64]string, len(chats))
		for _, c := range chats {
			names[c.ID] = c.Name
		}
		var by []string
		for _, id := range slices.Sorted(maps.Keys(s.TooManyByChat)) {
			by = append(by, fmt.Sprintf("%s %d", cmp.Or(names[id], fmt.Sprint(id)), s.TooManyByChat[id]))
		}
		limits.Detail += "; 429s by chat: " + strings.Join(by, ", ")
	}
	return limits
}

// minRushGain is the promised share of the VIP chat after its weight was
// raised, in times an average rush chat's.
const minRushGain = 1.5

func firstFew(s []string) string {
	if len(s) > 4 {
		return strings.Join(s[:4], ", ") + fmt.Sprintf(" and %d more", len(s)-4)
	}
	return strings.Join(s, ", ")
}

// Print writes the summary.
func (s Summary) Print(w io.Writer) {
	if len(s.Admin) > 0 {
		fmt.Fprintln(w, "\nthe admin's chat:")
		for _, e := range s.Admin {
			reply := "(no reply)"
			if e.Reply != "" {
				reply = fmt.Sprintf("%s  [%s]", e.Reply, secs(e.Wait))
			}
			fmt.Fprintf(w, "  > %s\n    %s\n", clip(e.Command, lineWidth-4), clip(reply, lineWidth-4))
		}
	}
	fmt.Fprintf(w, "\nsummary: scene %.1fs, %d messages delivered to %d chats\n", s.Scene.Seconds(), s.Delivered, len(s.Chats))
	fmt.Fprintf(w, "  burst chat:  %d commands at once, backlog drained in %s (longest wait %s), paced at 1 msg/s\n",
		s.BurstCommands, secs(s.BurstDrain), secs(s.BurstMax))
	fmt.Fprintf(w, "  quiet chats: %d replies, wait p50 %s, max %s\n", s.QuietReplies, secs(s.QuietP50), secs(s.QuietMax))
	fmt.Fprintf(w, "  tapper:      %d taps, %d answered, %d limited, tap to answer p50 %s, p99 %s, max %s (answerCallbackQuery, outside the message budget)\n",
		s.Taps, s.TapsAnswered, s.TapsLimited, ms(s.TapP50), ms(s.TapP99), ms(s.TapMax))
	fmt.Fprintf(w, "  broadcast:   %d/%d chats, p50 %s after /broadcast, last %s (a chat's copy waits behind its own backlog)\n",
		s.BroadcastGot, s.BroadcastWant, secs(s.BroadcastP50), secs(s.BroadcastFanout))
	if s.Rush.Measured {
		fmt.Fprintf(w, "  rush:        %d chats with backlogs at 30/s overall; VIP chat %.1f× an average chat's share at weight 1, %.1f× at weight %d (/weight sent at %.1fs, answered in %s)\n",
			s.Rush.Chats, s.Rush.Before.Times(s.Rush.Chats), s.Rush.After.Times(s.Rush.Chats), vipWeight, s.Rush.WeightAt.Seconds(), secs(s.Rush.ReplyWas))
	}
	fmt.Fprintf(w, "  limits:      peak %d msg/s overall (30), %d msg/s per chat (1), %d × 429\n", s.PeakGlobal, s.PeakChat, s.TooMany)
	for _, d := range s.Diagnosis {
		fmt.Fprintf(w, "  429 at:      %s\n", d)
	}
	if s.BotStop != "" {
		fmt.Fprintf(w, "  note:        %s\n", s.BotStop)
	}
	if s.Interrupted {
		fmt.Fprintln(w, "interrupted: the scene was stopped before its end; no promise judged")
		return
	}
	for _, c := range s.Checks {
		mark := "PASS"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s  %s: %s\n", mark, c.Name, c.Detail)
	}
	if s.OK() {
		fmt.Fprintln(w, "all promises held")
	} else {
		fmt.Fprintln(w, "some promises failed")
	}
}

// ms formats d in milliseconds ("12 ms").
func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
