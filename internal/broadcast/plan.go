package broadcast

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/codemojex/codemojex/notifier"
)

// MaxPlanAhead is the latest a broadcast may be scheduled ("in") and the
// longest it may be spread over ("over"): 7 days.
const MaxPlanAhead = 7 * 24 * time.Hour

// plan is when a broadcast starts and how long it is spread over, as the
// admin asked: "/broadcast [in <duration>] [over <duration>] <text>".
type plan struct {
	Start  time.Time     // zero: at once
	Spread time.Duration // 0: as fast as the budget allows
}

// notifierPlan is p as the notifier's Plan (paidMax, texts: see
// notifier.Plan).
func (p plan) notifierPlan(paidMax int, texts map[string]string) notifier.Plan {
	return notifier.Plan{At: p.Start, Spread: p.Spread, PaidMax: paidMax, Texts: texts}
}

// parsePlan reads the leading "in <duration>" and "over <duration>" of a
// /broadcast's arguments (each at most once, in either order; a duration
// as Go writes it, "90m", "1h30m", or in days, "2d", "1d12h"; words are
// split at any white space, line breaks included) at now and returns the
// plan and the rest, the text. "in" and "over" are plan words in lower
// case only: a text that starts with the word writes it "In" or "Over"
// ("In the morning"), as the error for a lower-case one says; that holds
// after a plan too, so a plan word given twice is refused, never taken as
// the start of the text ("in 1m in 2m hi" previewed the text "in 2m hi").
// Errors (the admin is told; nothing is previewed): a leading "in" or
// "over" not followed by a duration ("in abc hi", "in 5 minutes", "in 2H",
// "in -5m", planDuration's, the console's words), one under a minute or
// over MaxPlanAhead, a plan word twice (`"in" twice (1m, then 2m): a
// broadcast has one start; …`), or a plan with no text after it.
func parsePlan(args string, now time.Time) (plan, string, error) {
	var p plan
	rest := strings.TrimSpace(args)
	seen := map[string]string{} // plan word -> its duration as written
	for {
		word, after := cutSpace(rest)
		if word != "in" && word != "over" {
			break
		}
		durWord, text := cutSpace(strings.TrimSpace(after))
		hint := fmt.Sprintf("a text that starts with the word %q writes it %q", word, strings.ToUpper(word[:1])+word[1:])
		_, isDur := parsePlanDuration(durWord)
		if first, ok := seen[word]; ok && isDur {
			one := "one start"
			if word == "over" {
				one = "one spread"
			}
			return plan{}, "", fmt.Errorf("%q twice (%s, then %s): a broadcast has %s; %s", word, first, durWord, one, hint)
		}
		d, err := planDuration(word, durWord)
		if err != nil {
			if !isDur {
				return plan{}, "", fmt.Errorf("%w; %s", err, hint)
			}
			return plan{}, "", err
		}
		seen[word] = durWord
		if word == "in" {
			p.Start = now.Add(d)
		} else {
			p.Spread = d
		}
		rest = strings.TrimSpace(text)
	}
	if rest == "" && len(seen) > 0 {
		return plan{}, "", fmt.Errorf("no text after the plan")
	}
	return p, rest, nil
}

// cutSpace splits s at its first white space (a space, a line break, a
// tab: announcements are often several lines): the word before and the
// rest after it (its line breaks kept).
func cutSpace(s string) (string, string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// planDuration reads the duration s written after plan word word ("in"
// or "over"), as /broadcast and the console's form take it: "90m", "2h",
// "1d12h" (parsePlanDuration), 1 minute to MaxPlanAhead. Errors: `"in"
// abc: not a duration (like 90m, 2h or 1d12h)`, `"in" 30s: want 1 minute
// to 7 days`.
func planDuration(word, s string) (time.Duration, error) {
	d, ok := parsePlanDuration(s)
	if !ok {
		if s == "" {
			return 0, fmt.Errorf("%q without a duration (like 90m, 2h or 1d12h)", word)
		}
		return 0, fmt.Errorf("%q %s: not a duration (like 90m, 2h or 1d12h)", word, s)
	}
	if d < time.Minute || d > MaxPlanAhead {
		return 0, fmt.Errorf("%q %s: want 1 minute to %d days", word, s, int(MaxPlanAhead/(24*time.Hour)))
	}
	return d, nil
}

// composedPlan is a composed broadcast's plan at now (Compose): in (when it
// starts, from now) and over (how long it is spread over) written as
// /broadcast writes them ("90m", "2h", "1d12h"; "" for none), read by the
// same planDuration. Errors: planDuration's.
func composedPlan(in, over string, now time.Time) (plan, error) {
	var p plan
	for _, f := range [][2]string{{"in", in}, {"over", over}} {
		s := strings.TrimSpace(f[1])
		if s == "" {
			continue
		}
		d, err := planDuration(f[0], s)
		if err != nil {
			return plan{}, err
		}
		if f[0] == "in" {
			p.Start = now.Add(d)
		} else {
			p.Spread = d
		}
	}
	return p, nil
}

// parsePlanDuration parses "90m", "1h30m" (time.ParseDuration) and days,
// "2d", "1d12h".
func parsePlanDuration(s string) (time.Duration, bool) {
	var days time.Duration
	if d, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 36500 {
			return 0, false
		}
		days, s = time.Duration(n)*24*time.Hour, rest
		if s == "" {
			return days, true
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return days + d, true
}

// StartTime is a broadcast's start t as the preview, the answers, the
// progress message, /broadcasts and the console write it: in UTC to the
// second, "2026-12-05 13:13:37 UTC". Not to the minute: a start is the
// preview's time plus the plan's "in", so it falls anywhere within a
// minute, and a minute truncated ("13:13" for 13:13:37) names a time
// before the start, one rounded a time up to 30 s off it, either a
// sizeable part of the "(in 1 min)" beside it; the start is stored to the
// millisecond, so the second shown is the one it starts in.
func StartTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// planLines is the preview's account of p for copies at rate messages/s
// (the budget): when it starts and, spread, at what pace ("" for a plan
// that sends at once as fast as the budget allows).
func planLines(p plan, copies, rate int, now time.Time) string {
	var b strings.Builder
	if !p.Start.IsZero() {
		fmt.Fprintf(&b, "🕘 Starts at %s (in %s).\n", StartTime(p.Start), humanDuration(p.Start.Sub(now)))
	}
	if p.Spread > 0 {
		pace := float64(copies) / p.Spread.Seconds()
		fmt.Fprintf(&b, "⏳ Spread over %s: %s", humanDuration(p.Spread), spreadPace(copies == 1, pace))
		if rate > 0 && pace > float64(rate) {
			fmt.Fprintf(&b, ", more than the budget's %d messages/s: it takes about %s", rate, humanDuration(estimate(copies, rate)))
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// oneMessage is the pace of a spread broadcast of a single message (one
// chat, one part): it has none, that message goes as the broadcast starts.
const oneMessage = "one message, sent as it starts (nothing to spread)"

// spreadPace is the pace of a spread broadcast at r messages/s as the
// preview and the progress text write it: Pace(r); single (one message
// in all), oneMessage, not "about one message every 1 min".
func spreadPace(single bool, r float64) string {
	if single {
		return oneMessage
	}
	return Pace(r)
}

// SpreadPhrase is how /broadcasts and the console state spread broadcast
// p's pace: "spread at " + Pace(p.Rate), e.g. "spread at about 0.35
// messages/s"; for a single message (Total 1, counted in messages or in
// chats, of one part) "spread: " + oneMessage.
func SpreadPhrase(p notifier.Progress) string {
	if p.Total == 1 && p.Parts <= 1 {
		return "spread: " + oneMessage
	}
	return "spread at " + Pace(p.Rate)
}

// Pace renders a pace of r messages/s as the previews, progress texts and
// the console write it: "about 12 messages/s", "about 0.35 messages/s",
// and under 0.1/s "about one message every 48 min" (not "0.00").
func Pace(r float64) string {
	switch {
	case r >= 10:
		return "about " + strconv.FormatFloat(r, 'f', 0, 64) + " messages/s"
	case r >= 0.1 || r <= 0:
		return "about " + strconv.FormatFloat(r, 'f', 2, 64) + " messages/s"
	}
	return "about one message every " + humanDuration(time.Duration(float64(time.Second)/r))
}
