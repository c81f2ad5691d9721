package broadcast

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
)

// A /broadcast's leading "in <duration>" and "over <duration>" (either
// order, each once, days allowed) are its plan and the rest its text; a
// leading lower-case "in" or "over" not followed by a duration is refused
// as a schedule, in the console's words, with how to start a text with the
// word ("In the morning" is text); a plan word given twice is refused, not
// taken as the text's start ("in 1m in 2m hi" is not the text "in 2m hi");
// a duration under a minute or over 7 days, or a plan with no text, is
// refused.
func TestParsePlanReadsStartAndSpreadThenTheText(t *testing.T) {
	now := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		args   string
		start  time.Duration // 0: at once
		spread time.Duration
		text   string
		err    string
	}{
		{args: "Hello all", text: "Hello all"},
		{args: "in 2h Big news", start: 2 * time.Hour, text: "Big news"},
		{args: "over 8h Big news", spread: 8 * time.Hour, text: "Big news"},
		{args: "in 1d12h over 90m  Big news", start: 36 * time.Hour, spread: 90 * time.Minute, text: "Big news"},
		{args: "over 2d in 30m x", start: 30 * time.Minute, spread: 48 * time.Hour, text: "x"},
		{args: "In the morning we play", text: "In the morning we play"},
		{args: "Over and out", text: "Over and out"},
		{args: "in abc hi", err: `"in" abc: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "in the morning we play", err: `"in" the: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "over and out", err: `"over" and: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "over" writes it "Over"`},
		{args: "in 2h over soon hi", err: `"over" soon: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "over" writes it "Over"`},
		{args: "in", err: `"in" without a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "in 1m in 2m hi", err: `"in" twice (1m, then 2m): a broadcast has one start; a text that starts with the word "in" writes it "In"`},
		{args: "over 1h in 2h over 3h hi", err: `"over" twice (1h, then 3h): a broadcast has one spread; a text that starts with the word "over" writes it "Over"`},
		{args: "in 2h in 30s hi", err: `"in" twice (2h, then 30s): a broadcast has one start; a text that starts with the word "in" writes it "In"`},
		{args: "in 2h in the morning", err: `"in" the: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "in 2h In 3h we play", start: 2 * time.Hour, text: "In 3h we play"},
		{args: "in 2h over 1h Over 3h we play", start: 2 * time.Hour, spread: time.Hour, text: "Over 3h we play"},
		{args: "in 30s too soon", err: `"in" 30s: want 1 minute to 7 days`},
		{args: "in 2h\nBig news\nsecond line", start: 2 * time.Hour, text: "Big news\nsecond line"},
		{args: "in 2h over 8h\nBig news", start: 2 * time.Hour, spread: 8 * time.Hour, text: "Big news"},
		{args: "in 5 minutes hi", err: `"in" 5: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "in 2H hi", err: `"in" 2H: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "in -5m hi", err: `"in" -5m: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "in 9999999999999999999d hi", err: `"in" 9999999999999999999d: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "in" writes it "In"`},
		{args: "over 36501d hi", err: `"over" 36501d: not a duration (like 90m, 2h or 1d12h); a text that starts with the word "over" writes it "Over"`},
		{args: "over 8d too long", err: `"over" 8d: want 1 minute to 7 days`},
		{args: "in 2h", err: "no text after the plan"},
	} {
		p, text, err := parsePlan(tc.args, now)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.args)
			continue
		}
		require.NoError(t, err, tc.args)
		require.Equal(t, tc.text, text, tc.args)
		if tc.start == 0 {
			require.True(t, p.Start.IsZero(), tc.args)
		} else {
			require.Equal(t, now.Add(tc.start), p.Start, tc.args)
		}
		require.Equal(t, tc.spread, p.Spread, tc.args)
	}
}

// The preview's plan lines say when it starts, to the second it starts
// in, and at what pace a spread goes, and that the budget caps a spread
// shorter than the budget allows.
func TestPlanLinesStateTheStartAndThePace(t *testing.T) {
	now := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	require.Empty(t, planLines(plan{}, 1000, 30, now))
	require.Equal(t, "⏳ Spread over 8 h: about one message every 48 min.\n",
		planLines(plan{Spread: 8 * time.Hour}, 10, 30, now), "a thin spread is not 'about 0.00 messages/s'")
	require.Equal(t, "🕘 Starts at 2026-12-05 20:00:00 UTC (in 2 h).\n⏳ Spread over 8 h: about 0.35 messages/s.\n",
		planLines(plan{Start: now.Add(2 * time.Hour), Spread: 8 * time.Hour}, 10_000, 30, now))
	previewed := time.Date(2026, 12, 5, 13, 12, 37, 400_000_000, time.UTC)
	require.Equal(t, "🕘 Starts at 2026-12-05 13:13:37 UTC (in 1 min).\n",
		planLines(plan{Start: previewed.Add(time.Minute)}, 10, 30, previewed), "to the second it starts in, not 13:13 (truncated) nor 13:14 (rounded)")
	require.Equal(t, "⏳ Spread over 1 min: about 167 messages/s, more than the budget's 30 messages/s: it takes about 5 min 34 s.\n",
		planLines(plan{Spread: time.Minute}, 10_000, 30, now))
}

// The preview's time counts every message: a text split in two parts to
// 100 chats is 200 messages (about 7 s at 30/s, not 4 s), and says so.
func TestPreviewTextCountsEveryPartsMessages(t *testing.T) {
	one := PreviewText("short", 100, 30)
	require.Contains(t, one, "It will reach 100 chats, in about 4 s at the current rate of 30 messages/s.")
	two := PreviewText(strings.Repeat("x", 5000), 100, 30)
	require.Contains(t, two, "It will reach 100 chats (2 messages each: the text is split in 2), in about 7 s at the current rate of 30 messages/s.")
}

// A spread broadcast's preview gives the spread as its time, not the
// budget's: "/broadcast over 2m" to 3 chats is "over 2 min (spread)", not
// "in about 1 s" next to a pace of one message every 40 s; a spread
// shorter than the budget needs keeps the budget's time; the paid preview
// says the same of both ways.
func TestASpreadPreviewTakesTheSpreadsTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chats  int
		spread time.Duration
		want   string
	}{
		{"spread longer than the budget needs", 3, 2 * time.Minute, "It will reach 3 chats, over 2 min (spread)."},
		{"spread shorter than the budget needs", 10_000, time.Minute, "It will reach 10000 chats, in about 5 min 34 s at the current rate of 30 messages/s."},
		{"no spread", 3, 0, "It will reach 3 chats, in about 1 s at the current rate of 30 messages/s."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, previewText("hi", tc.chats, 30, plan{Spread: tc.spread}), tc.want)
		})
	}
	paid := paidPreviewText("hi", 3, 3, 30, 1000, "", plan{Spread: 2 * time.Minute}, "Choose, or Cancel, within 10 minutes.")
	require.Contains(t, paid, "• ✅ Send free: over 2 min (spread), no fee.")
	require.Contains(t, paid, "• 💫 Send paid: over 2 min (spread), for about")
}

// A scheduled broadcast's preview counts its time from its start, which
// the plan's line gives: "taking about 2 s once it starts", not "in about
// 2 s" beside "Starts at … (in 1 min)"; a spread one is spread "once it
// starts"; the paid preview says the same of both ways; one sent at once
// keeps "in about".
func TestAScheduledPreviewCountsItsTimeFromTheStart(t *testing.T) {
	now := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		pl   plan
		free string // the free preview's
		paid []string
	}{
		{"scheduled", plan{Start: now.Add(time.Minute)},
			"It will reach 60 chats, taking about 2 s once it starts, at the current rate of 30 messages/s.",
			[]string{"• ✅ Send free: taking about 2 s once it starts, at the current rate of 30 messages/s, no fee.",
				"• 💫 Send paid: taking about 1 s once it starts, at 1000 messages/s, for about"}},
		{"scheduled and spread", plan{Start: now.Add(time.Minute), Spread: time.Hour},
			"It will reach 60 chats, over 1 h (spread) once it starts.",
			[]string{"• ✅ Send free: over 1 h (spread) once it starts, no fee.", "• 💫 Send paid: over 1 h (spread) once it starts, for about"}},
		{"at once", plan{},
			"It will reach 60 chats, in about 2 s at the current rate of 30 messages/s.",
			[]string{"• ✅ Send free: in about 2 s at the current rate of 30 messages/s, no fee.", "• 💫 Send paid: in about 1 s at 1000 messages/s, for about"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			free := previewText("hi", 60, 30, tc.pl)
			require.Contains(t, free, tc.free)
			paid := paidPreviewText("hi", 60, 60, 30, 1000, "", tc.pl, "Choose, or Cancel, within 10 minutes.")
			for _, want := range tc.paid {
				require.Contains(t, paid, want)
			}
			if !tc.pl.Start.IsZero() {
				require.NotContains(t, free+paid, "in about", "no time from now beside the start's")
			}
		})
	}
}

// /broadcast and the console's form read a schedule with one parser
// (planDuration): what the console refuses, /broadcast refuses in the same
// words ("in abc" is no text to send at once); /broadcast adds how to start
// a text with the word.
func TestTheBotAndTheConsoleRefuseAScheduleAlike(t *testing.T) {
	now := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ word, dur string }{
		{"in", "abc"}, {"in", "5"}, {"in", "30s"}, {"in", "8d"}, {"over", "soon"}, {"over", "10s"},
	} {
		in, over := tc.dur, ""
		if tc.word == "over" {
			in, over = "", tc.dur
		}
		_, console := composedPlan(in, over, now)
		require.Error(t, console, "%s %s", tc.word, tc.dur)
		_, text, bot := parsePlan(tc.word+" "+tc.dur+" hi", now)
		require.Error(t, bot, "%s %s is refused, not the text %q", tc.word, tc.dur, text)
		require.True(t, strings.HasPrefix(bot.Error(), console.Error()), "%q has the console's words %q", bot, console)
	}
}

// A spread broadcast of a single message (one chat, one part) has no pace
// to state: its preview, progress text, /broadcasts line and console row
// say it goes as it starts, not "about one message every 1 min"; two
// messages or more keep their pace.
func TestASpreadOfOneMessageStatesNoPace(t *testing.T) {
	now := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		copies, parts int
		preview       string // planLines over 1 min
		phrase        string // SpreadPhrase
	}{
		{"one chat", 1, 1, "⏳ Spread over 1 min: one message, sent as it starts (nothing to spread).\n",
			"spread: one message, sent as it starts (nothing to spread)"},
		{"one chat, a text in two parts", 2, 2, "⏳ Spread over 1 min: about one message every 30 s.\n", "spread at about one message every 30 s"},
		{"two chats", 2, 1, "⏳ Spread over 1 min: about one message every 30 s.\n", "spread at about one message every 30 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.preview, planLines(plan{Spread: time.Minute}, tc.copies, 30, now))
			p := notifier.Progress{ID: "bc_x", Total: tc.copies, Remaining: tc.copies, Parts: tc.parts, Rate: float64(tc.copies) / 60}
			require.Equal(t, tc.phrase, SpreadPhrase(p), "in messages")
			require.Equal(t, tc.phrase, SpreadPhrase(p.InChats()), "in chats")
			_, pace, _ := strings.Cut(tc.preview, ": ")
			require.Contains(t, progressText(p), "\n⏳ Spread: "+strings.TrimSuffix(pace, ".\n")+"\n")
		})
	}
}
