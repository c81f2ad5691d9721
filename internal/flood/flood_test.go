package flood_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// rig is a limiter on a namespace of the shared server, with a job-id
// counter for the members it records.
type rig struct {
	t    *testing.T
	c    valkey.Client
	tag  string
	l    *flood.Limiter
	next int
}

func newRig(t *testing.T, limits flood.Limits, exempt func(int64) bool) *rig {
	t.Helper()
	srv := valkeytest.Shared(t)
	tag := valkeytest.Namespace(t)
	return &rig{t: t, c: srv.Client(t), tag: tag, l: flood.New(tag, limits, exempt)}
}

func (r *rig) recorded() string { return "{" + r.tag + "}:app:in:rec" }

// record records one batch of subjects (each a new update) and returns
// the results.
func (r *rig) record(subjects ...flood.Subject) []flood.Result {
	r.t.Helper()
	return r.recordAt(time.Now(), subjects...)
}

// recordAt is record with the recording time now.
func (r *rig) recordAt(now time.Time, subjects ...flood.Subject) []flood.Result {
	r.t.Helper()
	members := make([]string, len(subjects))
	for i := range subjects {
		r.next++
		members[i] = fmt.Sprintf("job-%06d", r.next)
	}
	res, err := r.l.Record(context.Background(), r.c, r.recorded(), now, subjects, members)
	require.NoError(r.t, err)
	require.Len(r.t, res, len(subjects))
	return res
}

// tally counts results by outcome and notices.
func tally(rs []flood.Result) (recorded, dropped, notices int) {
	for _, r := range rs {
		switch r.Outcome {
		case flood.Recorded:
			recorded++
		case flood.Dropped:
			dropped++
			if r.Notice {
				notices++
			}
		}
	}
	return
}

func msg(user, chat int64) flood.Subject {
	return flood.Subject{User: user, Chat: chat, Kind: flood.Message}
}
func tap(user, chat int64) flood.Subject {
	return flood.Subject{User: user, Chat: chat, Kind: flood.Tap, QueryID: "q"}
}

func repeat(s flood.Subject, n int) []flood.Subject {
	out := make([]flood.Subject, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// Of a batch recorded at once, a user's first UserMessages messages are
// recorded and the rest dropped by reason user_messages, only the first drop taking the
// chat's notice; taps count apart; a group's members together are held to
// the group's limits (a raid of many accounts under their own limits), and
// a quiet chat is not affected by either.
func TestLimitsHoldPerUserAndPerGroup(t *testing.T) {
	limits := flood.Limits{Window: 10 * time.Minute, UserMessages: 10, UserTaps: 30, ChatMessages: 30, ChatTaps: 200}
	cases := []struct {
		name                         string
		batch                        func() []flood.Subject
		recorded, dropped, notices   int
		reason                       flood.Reason
		quietRecorded, quietSubjects int
	}{
		{name: "one user floods a private chat", batch: func() []flood.Subject { return repeat(msg(7, 7), 3000) },
			recorded: 10, dropped: 2990, notices: 1, reason: flood.UserMessages},
		{name: "one user floods a group", batch: func() []flood.Subject { return repeat(msg(7, -100), 500) },
			recorded: 10, dropped: 490, notices: 1, reason: flood.UserMessages},
		{name: "one user taps too fast", batch: func() []flood.Subject { return repeat(tap(7, 7), 100) },
			recorded: 30, dropped: 70, notices: 0, reason: flood.UserTaps},
		{name: "50 accounts raid a group", batch: func() []flood.Subject {
			var b []flood.Subject
			for round := 0; round < 8; round++ {
				for u := int64(1); u <= 50; u++ {
					b = append(b, msg(1000+u, -200))
				}
			}
			return b
		}, recorded: 30, dropped: 370, notices: 1, reason: flood.ChatMessages},
		{name: "50 accounts tap one group board", batch: func() []flood.Subject {
			var b []flood.Subject
			for round := 0; round < 20; round++ {
				for u := int64(1); u <= 50; u++ {
					b = append(b, tap(1000+u, -300))
				}
			}
			return b
		}, recorded: 200, dropped: 800, notices: 0, reason: flood.ChatTaps},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, limits, nil)
			res := r.record(tc.batch()...)
			rec, drop, notices := tally(res)
			require.Equal(t, tc.recorded, rec)
			require.Equal(t, tc.dropped, drop)
			require.Equal(t, tc.notices, notices)
			for _, x := range res {
				if x.Outcome == flood.Dropped {
					require.Equal(t, tc.reason, x.Reason)
				}
			}
			// Another batch in the same window: still held, no second notice.
			rec, drop, notices = tally(r.record(tc.batch()[:50]...))
			require.Zero(t, rec)
			require.Equal(t, 50, drop)
			require.Zero(t, notices, "one notice per window")
			// A quiet private chat and a quiet group pass untouched.
			rec, drop, _ = tally(r.record(msg(55, 55), msg(56, -999), tap(56, -999)))
			require.Equal(t, 3, rec)
			require.Zero(t, drop)
		})
	}
}

// Normal use passes: a player's rounds of 4 fruit taps and ✅ in under 2 s,
// five players on one group board, typed guesses at a human pace, and an
// admin's commands in any number (exempt, and not counted for the group).
func TestNormalUseIsNeverLimited(t *testing.T) {
	r := newRig(t, flood.DefaultLimits(), func(u int64) bool { return u == 1 })
	var all []flood.Result
	// 10 s of play, one round (5 taps) every 2 s, in private and by five
	// players on one group board, plus a typed guess every 2 s each.
	for round := 0; round < 5; round++ {
		var b []flood.Subject
		b = append(b, repeat(tap(2, 2), 5)...)
		for p := int64(10); p < 15; p++ {
			b = append(b, repeat(tap(p, -500), 5)...)
			b = append(b, msg(p, -500))
		}
		b = append(b, msg(3, 3))
		all = append(all, r.record(b...)...)
	}
	// An admin sends 100 commands in a group (a /broadcast and its
	// confirmations, /lanes, ...).
	all = append(all, r.record(repeat(msg(1, -500), 100)...)...)
	_, drop, _ := tally(all)
	require.Zero(t, drop)
	ls, err := r.l.Limited(context.Background(), r.c, time.Now(), 0)
	require.NoError(t, err)
	require.Empty(t, ls)
}

// An update recorded again while its time is there (a resend of an update
// still waiting) is not counted again.
func TestResentUpdateIsNotCountedTwice(t *testing.T) {
	r := newRig(t, flood.Limits{Window: time.Minute, UserMessages: 2}, nil)
	members := []string{"a", "a", "a", "b"}
	res, err := r.l.Record(context.Background(), r.c, r.recorded(), time.Now(), repeat(msg(7, 7), 4), members)
	require.NoError(t, err)
	require.Equal(t, []flood.Outcome{flood.Recorded, flood.Present, flood.Present, flood.Recorded},
		[]flood.Outcome{res[0].Outcome, res[1].Outcome, res[2].Outcome, res[3].Outcome})
}

// In a batch that mixes one user's messages and taps, in a private chat
// and in a group, each update's result is at its own position: the
// messages draw on the user's and the group's message budgets and the taps
// on the tap budgets, each in batch order, and the one notice goes with
// the first message dropped.
func TestMixedBatchAnswersEachUpdateInPlace(t *testing.T) {
	r := newRig(t, flood.Limits{Window: time.Minute, UserMessages: 3, UserTaps: 2, ChatMessages: 2, ChatTaps: 1}, nil)
	rec, pre := flood.Result{Outcome: flood.Recorded}, flood.Result{Outcome: flood.Present}
	drop := func(reason flood.Reason, notice bool) flood.Result {
		return flood.Result{Outcome: flood.Dropped, Reason: reason, Notice: notice}
	}
	batch := []flood.Subject{
		tap(7, -9), // the group's one tap
		msg(7, 7),  // user message 1
		tap(7, -9), // over the group's taps
		msg(7, -9), // user message 2, group message 1
		tap(7, 7),  // user tap 2 (the first drawn by the group tap)
		msg(8, -9), // group message 2
		msg(7, -9), // over the group's messages (draws nothing): the group's notice
		tap(7, 7),  // over the user's taps
		msg(7, 7),  // user message 3
		msg(7, 7),  // over the user's messages: the private chat's notice
		msg(8, 8),  // another user's private chat
	}
	members := make([]string, 0, len(batch)+1)
	for i := range batch {
		members = append(members, fmt.Sprintf("m-%02d", i))
	}
	// The second update once more in the batch: Present, not counted.
	batch, members = append(batch, msg(7, 7)), append(members, "m-01")
	res, err := r.l.Record(context.Background(), r.c, r.recorded(), time.Now(), batch, members)
	require.NoError(t, err)
	require.Equal(t, []flood.Result{
		rec, rec, drop(flood.ChatTaps, false), rec, rec, rec,
		drop(flood.ChatMessages, true), drop(flood.UserTaps, false),
		rec, drop(flood.UserMessages, true), rec, pre,
	}, res)
}

// A window after a flood, the user's budget is full again (the limit at
// once, and a new notice for the next drop); the limited-chats set has
// forgotten the chat, and every key the flood left has expired.
func TestAWindowAfterAFloodTheUserPassesAndNothingIsLeft(t *testing.T) {
	win := 400 * time.Millisecond
	r := newRig(t, flood.Limits{Window: win, UserMessages: 3, ChatMessages: 5}, nil)
	before := time.Now()
	rec, drop, notices := tally(r.record(repeat(msg(7, -1), 100)...))
	after := time.Now()
	require.Equal(t, []int{3, 97, 1}, []int{rec, drop, notices})
	ls, err := r.l.Limited(context.Background(), r.c, time.Now(), 0)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, int64(-1), ls[0].Chat)
	// A window after the record's time (taken between before and after;
	// Until is in whole ms), however long the record took.
	require.False(t, ls[0].Until.Before(before.Add(win).Truncate(time.Millisecond)), "until %v, recorded after %v", ls[0].Until, before)
	require.False(t, ls[0].Until.After(after.Add(win)), "until %v, recorded before %v", ls[0].Until, after)

	time.Sleep(win + 100*time.Millisecond)
	ls, err = r.l.Limited(context.Background(), r.c, time.Now(), 0)
	require.NoError(t, err)
	require.Empty(t, ls)
	n, err := r.l.LimitedCount(context.Background(), r.c, time.Now())
	require.NoError(t, err)
	require.Zero(t, n)
	keys, err := valkeytest.Keys(context.Background(), r.c, "{"+r.tag+"}:app:fl:*")
	require.NoError(t, err)
	require.Empty(t, keys, "every key of the limits expires with its window")

	rec, drop, notices = tally(r.record(repeat(msg(7, -1), 4)...))
	require.Equal(t, []int{3, 1, 1}, []int{rec, drop, notices}, "a new window: passes again, one new notice")
}

// While a window lasts, the flood leaves a few short keys whatever its
// size, each expiring within the window.
func TestFloodLeavesBoundedExpiringKeys(t *testing.T) {
	r := newRig(t, flood.Limits{Window: time.Minute, UserMessages: 10}, nil)
	for range 3 {
		r.record(repeat(msg(7, 7), 1000)...)
	}
	ctx := context.Background()
	keys, err := valkeytest.Keys(ctx, r.c, "{"+r.tag+"}:app:fl:*")
	require.NoError(t, err)
	require.Len(t, keys, 3, "the user's counter, the chat's notice flag, the limited set: %v", keys)
	for _, k := range keys {
		ttl, err := r.c.Do(ctx, r.c.B().Pttl().Key(k).Build()).AsInt64()
		require.NoError(t, err)
		require.Positive(t, ttl, "key %s expires", k)
		require.LessOrEqual(t, ttl, time.Minute.Milliseconds())
	}
	n, err := r.c.Do(ctx, r.c.B().Zcard().Key(r.recorded()).Build()).AsInt64()
	require.NoError(t, err)
	require.EqualValues(t, 10, n, "only the updates within the limit are recorded")
}

// Two processes (two clients, two limiters) share one window, and a
// limiter made after a restart (the server restarted on its append-only
// file) finds the window where it was.
func TestWindowsAreSharedAndSurviveARestart(t *testing.T) {
	srv := valkeytest.Start(t, valkeytest.Options{AppendOnly: true})
	tag := valkeytest.Namespace(t)
	limits := flood.Limits{Window: time.Minute, UserMessages: 10}
	rec := "{" + tag + "}:app:in:rec"
	n := 0
	record := func(c valkey.Client, l *flood.Limiter, k int) []flood.Result {
		t.Helper()
		members := make([]string, k)
		for i := range members {
			n++
			members[i] = fmt.Sprint("m", n)
		}
		res, err := l.Record(context.Background(), c, rec, time.Now(), repeat(msg(7, 7), k), members)
		require.NoError(t, err)
		return res
	}
	c1, c2 := srv.Client(t), srv.Client(t)
	got1, _, _ := tally(record(c1, flood.New(tag, limits, nil), 6))
	got2, drop2, _ := tally(record(c2, flood.New(tag, limits, nil), 6))
	require.Equal(t, []int{6, 4, 2}, []int{got1, got2, drop2}, "the second process sees the first's count")

	srv.Restart(t)
	c3 := srv.Client(t)
	got3, drop3, notices := tally(record(c3, flood.New(tag, limits, nil), 5))
	require.Equal(t, []int{0, 5, 0}, []int{got3, drop3, notices}, "the window and its notice survive the restart")
}

// A limit of 0 is off; a zero window turns every limit off.
func TestZeroTurnsALimitOff(t *testing.T) {
	require.False(t, flood.Limits{UserMessages: 10}.On())
	require.False(t, flood.Limits{Window: time.Second}.On())
	require.True(t, flood.DefaultLimits().On())
	r := newRig(t, flood.Limits{Window: time.Minute, UserTaps: 1}, nil)
	rec, drop, _ := tally(r.record(repeat(msg(7, 7), 50)...))
	require.Equal(t, []int{50, 0}, []int{rec, drop}, "messages unlimited")
	rec, drop, _ = tally(r.record(repeat(tap(7, 7), 3)...))
	require.Equal(t, []int{1, 2}, []int{rec, drop}, "taps limited")
}

// SubjectOf reads who and where from the update kinds the bot receives.
func TestSubjectOfReadsSenderChatAndKind(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want flood.Subject
	}{
		{"private message", `{"update_id":1,"message":{"chat":{"id":7},"from":{"id":7},"text":"/help"}}`, msg(7, 7)},
		{"group message", `{"update_id":1,"message":{"message_id":12,"chat":{"id":-5},"from":{"id":7,"language_code":"ru"},"text":"hi"}}`,
			flood.Subject{User: 7, Chat: -5, Kind: flood.Message, MessageID: 12, LanguageCode: "ru"}},
		{"edited message", `{"update_id":1,"edited_message":{"chat":{"id":-5},"from":{"id":8}}}`, msg(8, -5)},
		{"dated message", `{"update_id":1,"message":{"chat":{"id":-5},"from":{"id":8},"date":1700000000}}`, dated(8, -5, time.Unix(1700000000, 0))},
		{"edit: its edit_date", `{"update_id":1,"edited_message":{"chat":{"id":-5},"from":{"id":8},"date":1700000000,"edit_date":1700000090}}`,
			dated(8, -5, time.Unix(1700000090, 0))},
		{"tap on a group board", `{"update_id":1,"callback_query":{"id":"q1","from":{"id":7,"language_code":"fa"},"message":{"chat":{"id":-5}}}}`,
			flood.Subject{User: 7, Chat: -5, Kind: flood.Tap, QueryID: "q1", LanguageCode: "fa"}},
		{"tap on an inaccessible message", `{"update_id":1,"callback_query":{"id":"q2","from":{"id":7}}}`,
			flood.Subject{User: 7, Chat: 7, Kind: flood.Tap, QueryID: "q2"}},
		{"channel post (no sender)", `{"update_id":1,"message":{"chat":{"id":-5}}}`, flood.Subject{}},
		{"member change", `{"update_id":1,"my_chat_member":{"chat":{"id":7},"from":{"id":7}}}`, flood.Subject{}},
		{"not JSON", `nope`, flood.Subject{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, flood.SubjectOf([]byte(tc.raw)))
		})
	}
}

// dated is msg(user, chat) sent at date.
func dated(user, chat int64, date time.Time) flood.Subject {
	s := msg(user, chat)
	s.Date = date
	return s
}

// conversation is n messages of three members of group, in turn, dated
// evenly from first (inclusive) over span, in the order they were sent.
func conversation(group int64, n int, first time.Time, span time.Duration) []flood.Subject {
	out := make([]flood.Subject, n)
	for i := range out {
		out[i] = dated(int64(2000+i%3), group, first.Add(span*time.Duration(i)/time.Duration(n)))
	}
	return out
}

// A backlog fetched at once (the poller deaf through an outage) counts at
// its messages' dates: a group's conversation of 90 messages over a minute
// (each member one message every 2 s, 1.5 a second in all, under every
// limit) passes whole, in one batch or two; the same 90 messages dated
// within 10 s are a flood by their dates and are limited, and so is one
// member's 40 messages in one second a minute ago, the same way in one
// batch or two (the second batch finds the budgets the first drew at its
// dates, though they were full again by the time it was recorded).
func TestABacklogIsJudgedByItsMessagesDates(t *testing.T) {
	const group = int64(-700)
	cases := []struct {
		name     string
		backlog  func(now time.Time) []flood.Subject
		min, max int // recorded
	}{
		{name: "a minute's conversation", backlog: func(now time.Time) []flood.Subject {
			return conversation(group, 90, now.Add(-time.Minute), time.Minute)
		}, min: 90, max: 90},
		// 30 at once for the group, then 3/s, and 10 at once for each
		// member, then 1/s: over 10 s between 30 and 60 of the 90.
		{name: "the same messages within 10 s", backlog: func(now time.Time) []flood.Subject {
			return conversation(group, 90, now.Add(-10*time.Second), 10*time.Second)
		}, min: flood.DefaultChatMessages, max: 60},
		{name: "one member's flood a minute ago", backlog: func(now time.Time) []flood.Subject {
			return repeat(dated(2000, group, now.Add(-time.Minute)), 40)
		}, min: flood.DefaultUserMessages, max: flood.DefaultUserMessages},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dropped []int
			// One now for both (message dates are whole seconds: with a
			// now of its own each, a second boundary fell between them
			// once and the drops differed, 35 and 33).
			now := time.Now()
			for _, batches := range []int{1, 2} {
				r := newRig(t, flood.DefaultLimits(), nil)
				backlog := tc.backlog(now)
				n := len(backlog)
				var res []flood.Result
				for b := range batches {
					res = append(res, r.recordAt(now, backlog[b*n/batches:(b+1)*n/batches]...)...)
				}
				rec, drop, notices := tally(res)
				require.Equal(t, n, rec+drop)
				require.GreaterOrEqual(t, rec, tc.min, "in %d batches", batches)
				require.LessOrEqual(t, rec, tc.max, "in %d batches", batches)
				require.Equal(t, min(drop, 1), notices, "one notice when limited")
				dropped = append(dropped, drop)
			}
			require.Equal(t, dropped[0], dropped[1], "the same drops in one batch or two")
		})
	}
}

// A date that cannot be when the message was sent does not break the
// limits: one in the future counts now (a flood dated ahead is limited now,
// and the budget is not pushed past a window); one older than MaxAge counts
// MaxAge ago (its flood limited there, leaving today's budget full).
func TestAnImpossibleDateCountsWithinNowAndMaxAge(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name    string
		date    time.Time
		arrival time.Time
		// after: messages at now right after the 20 dated ones: recorded
		after int
	}{
		{name: "an hour ahead", date: now.Add(time.Hour), arrival: now, after: 0},
		{name: "a second ahead", date: now.Add(time.Second), arrival: now, after: 0},
		{name: "in 1970", date: time.Unix(1, 0), arrival: now.Add(-flood.MaxAge), after: 10},
		{name: "two days ago", date: now.Add(-48 * time.Hour), arrival: now.Add(-flood.MaxAge), after: 10},
		{name: "none (a tap's)", arrival: now, after: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.arrival, flood.Arrival(dated(7, -8, tc.date), now))
			r := newRig(t, flood.DefaultLimits(), nil)
			rec, drop, _ := tally(r.recordAt(now, repeat(dated(7, -8, tc.date), 20)...))
			require.Equal(t, []int{10, 10}, []int{rec, drop}, "a flood at one instant")
			rec, _, _ = tally(r.recordAt(now, repeat(dated(7, -8, now), 10)...))
			require.Equal(t, tc.after, rec)
			ctx := context.Background()
			zs, err := r.c.Do(ctx, r.c.B().Zrange().Key(r.l.BudgetsKey()).Min("0").Max("-1").Withscores().Build()).AsZScores()
			require.NoError(t, err)
			for _, z := range zs {
				require.LessOrEqual(t, int64(z.Score), now.Add(flood.DefaultWindow).UnixMilli(), "%s within a window of now", z.Member)
			}
		})
	}
	require.Equal(t, now, flood.Arrival(flood.Subject{User: 7, Chat: 7, Kind: flood.Tap, Date: now.Add(-time.Minute)}, now),
		"a tap counts when it is recorded")
	require.Equal(t, now.Add(-time.Minute).Truncate(time.Second).Add(999*time.Millisecond),
		flood.Arrival(dated(7, 7, now.Add(-time.Minute).Truncate(time.Second)), now), "a message at the end of its date's second")
}
