package app

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Lazy broadcasts (issue 27) end to end: the bot against the emulator at
// the harness's rates (1,000 bulk messages/s, the emulator enforcing
// them), the audience written straight into its buckets
// (testkit.AddAudience). The tests wait on progress, never on a deadline
// for the whole (waitBroadcast), and assert orders and counts: what the
// emulator received against what the progress counted. The same with
// real processes killed mid-way: internal/failuretest.

// TestLazyBroadcastTo50000ChatsReachesEachOnceWithoutHoldingRepliesOrWeightedChats:
// a broadcast to 50,000 chats, sent from the preview's ✅ Send: every chat
// receives exactly one copy, and the progress message's final counts are
// what the emulator received. Mid-way, with copies pending on ~2,000
// lanes: a chat's /help is answered before the broadcast's last copy (the
// chat is the walk's last, so its own copy comes at the very end), and a
// chat of weight 5 given 10 notifications gets them 5 per turn of the ring
// (all of them while a chat of weight 1 given as many got at most half of
// its own), also before the last copy.
func TestLazyBroadcastTo50000ChatsReachesEachOnceWithoutHoldingRepliesOrWeightedChats(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 50,000 copies (about a minute)")
	}
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	ctx := t.Context()
	const chatsN, first = 50_000, int64(100_000)
	h.addKnownChats(r, first, chatsN-1) // the admin's chat is the 50,000th (known with its /broadcast)
	asker := chatInBucket(first, chats.Buckets-1)
	heavy, light := chatInBucket(first, chats.Buckets-2), chatInBucket(first, chats.Buckets-3)
	const weight, notes = 5, 10
	require.NoError(t, r.app.Store().Inspector().SetWeight(ctx, tgjob.Group(heavy), weight))

	const text = "📣 to fifty thousand chats"
	id := h.sendBroadcast(text)
	p := h.waitBroadcast(r, id, "2,000 copies sent", func(p notifier.Progress) bool { return p.Sent >= 2000 })
	require.True(t, p.Lazy)
	require.Equal(t, chatsN, p.Total, "the plan: the whole audience")
	require.True(t, p.Walking, "mid-way: the walk is not over")
	for i := range notes {
		for _, c := range []int64{heavy, light} {
			_, err := r.app.Notifier().Notify(ctx, c, notifyMsg(fmt.Sprintf("note %d", i)))
			require.NoError(t, err)
		}
	}
	h.say(0, user(asker, "Asker"), "/help")

	p = h.waitBroadcast(r, id, "every copy settled", notifier.Progress.Done)
	h.waitProgress("the notes and the reply", 2*notes+1, func() int {
		n := 0
		for _, c := range []int64{heavy, light, asker} {
			for _, m := range h.emu.Messages(c) {
				if m.Text != text {
					n++
				}
			}
		}
		return n
	})
	sent, failed := h.finalProgressCounts()

	msgs := h.emu.AllMessages() // by time
	per := map[int64]int{}
	var lastCopy, reply, heavyDone time.Time
	var heavyNotes, lightByHeavyDone int
	for _, m := range msgs {
		switch {
		case m.Text == text:
			per[m.ChatID]++
			lastCopy = m.Time
		case m.ChatID == asker:
			require.Contains(t, m.Text, "Commands:", "the asker's one other message is /help's answer")
			reply = m.Time
		case m.ChatID == heavy:
			require.Equal(t, fmt.Sprintf("note %d", heavyNotes), m.Text, "the weighted chat's notes in order")
			if heavyNotes++; heavyNotes == notes {
				heavyDone = m.Time
			}
		case m.ChatID == light && heavyDone.IsZero():
			lightByHeavyDone++
		}
	}
	copiesAfter := func(at time.Time) int {
		n := 0
		for _, m := range msgs {
			if m.Text == text && m.Time.After(at) {
				n++
			}
		}
		return n
	}
	t.Logf("%d copies; /help answered with %d copies still to come; the weighted chat's %d notes done with %d still to come, the plain chat had %d of its %d then",
		len(per), copiesAfter(reply), notes, copiesAfter(heavyDone), lightByHeavyDone, notes)
	require.Len(t, per, chatsN, "every chat received the copy")
	for c, n := range per {
		if n != 1 {
			require.Failf(t, "a chat received the copy more than once", "chat %d: %d copies", c, n)
		}
	}
	require.Equal(t, chatsN, p.Sent, "the progress counted what the emulator received")
	require.Empty(t, p.Failed)
	require.Equal(t, chatsN, sent, "the progress message's final count is what the emulator received")
	require.Zero(t, failed)
	require.False(t, reply.IsZero(), "/help answered")
	require.True(t, reply.Before(lastCopy), "/help answered while copies were pending, not after the broadcast")
	require.Equal(t, notes, heavyNotes)
	require.True(t, heavyDone.Before(lastCopy), "the weighted chat's notes went while copies were pending")
	require.LessOrEqual(t, lightByHeavyDone, notes/2, "weight %d: the weighted chat's notes go %d per turn of the ring, a plain chat's 1", weight, weight)
}

// TestLazyBroadcastStoppedMidWalkSendsNothingAfterItsCopiesInFlight: a
// broadcast to 10,000 chats stopped with /broadcast stop once 2,000 copies
// are out, while its walk is not over (most copies not even made): after
// the stop only copies then in flight arrive; the chats receive exactly
// the copies counted sent, each at most once; sent + cancelled =
// 10,000; no queue holds anything; the progress message's final count is
// what the emulator received.
func TestLazyBroadcastStoppedMidWalkSendsNothingAfterItsCopiesInFlight(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	const chatsN = 10_000
	h.addKnownChats(r, 300_000, chatsN-1)
	const text = "📣 stopped mid-walk"
	id := h.sendBroadcast(text)
	before := h.waitBroadcast(r, id, "2,000 copies sent", func(p notifier.Progress) bool { return p.Sent >= 2000 })
	require.True(t, before.Walking, "the stop comes mid-walk")

	atStop := h.stopBroadcast(r, id, text)
	p := h.waitBroadcast(r, id, "the copies in flight settled", notifier.Progress.Done)
	sent, failed := h.finalProgressCounts()
	h.requireQueuesEmpty(r)
	time.Sleep(time.Second) // at 1,000/s, hundreds more would arrive if any were left
	per := h.copiesPerChat(text)
	delivered := 0
	for c, n := range per {
		require.Equal(t, 1, n, "chat %d received the copy once", c)
		delivered += n
	}
	t.Logf("stopped with %d delivered, %d in flight; in the end %d delivered, %d cancelled of %d",
		atStop.delivered, atStop.inFlight, delivered, p.Cancelled, p.Total)
	require.Equal(t, p.Sent, delivered, "the chats received exactly the copies counted sent")
	require.LessOrEqual(t, delivered-atStop.delivered, atStop.inFlight, "after the stop, only copies in flight at the stop arrived")
	require.Equal(t, chatsN, p.Total)
	require.Equal(t, chatsN, p.Sent+p.Cancelled, "sent + cancelled = the planned count")
	require.Greater(t, p.Cancelled, chatsN/2, "the stop came mid-way: most copies never made")
	require.Empty(t, p.Failed)
	require.Equal(t, delivered, sent, "the progress message's final count")
	require.Zero(t, failed)
}

// TestLazyBroadcastMigratedChatGetsItOnceAtItsNewIDAndBlockedOneCountsForbidden:
// mid-way through a broadcast to 5,000 chats, a group the walk reaches
// last is upgraded to a supergroup (sendMessage: 400 migrate_to_chat_id)
// and a private chat it reaches last blocks the bot (403): the group gets
// the copy once at its new id, the blocked chat is counted failed
// (forbidden), every other chat gets the copy once, and the progress
// message's final counts say so.
func TestLazyBroadcastMigratedChatGetsItOnceAtItsNewIDAndBlockedOneCountsForbidden(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	ctx := t.Context()
	const first, privates = int64(500_000), 5_000
	h.addKnownChats(r, first, privates)
	// -4097 mod 1,024 is 1,023: the group's bucket is the walk's last.
	const group, supergroup = int64(-4097), int64(-1_000_000_004_097)
	require.Equal(t, int64(chats.Buckets-1), chats.Bucket(group))
	h.emu.AddChat(models.Chat{ID: group, Type: models.ChatTypeGroup, Title: "Old group"})
	require.NoError(t, r.app.audience.Add(ctx, group))
	blocked := chatInBucket(first, chats.Buckets-1)
	audience := privates + 2 // and the group, and the admin's chat

	const text = "📣 through a migration"
	id := h.sendBroadcast(text)
	h.waitBroadcast(r, id, "500 copies sent", func(p notifier.Progress) bool { return p.Sent >= 500 })
	require.Empty(t, h.emu.Messages(group), "mid-way: the group's copy is still to come")
	require.Empty(t, h.emu.Messages(blocked), "mid-way: the blocked chat's copy is still to come")
	h.emu.MigrateChat(group, supergroup)
	h.emu.SetChatStatus(blocked, tgemu.ChatBlocked)

	p := h.waitBroadcast(r, id, "every copy settled", notifier.Progress.Done)
	sent, failed := h.finalProgressCounts()
	per := h.copiesPerChat(text)
	require.Equal(t, 1, per[supergroup], "the migrated group got the copy once, at its new id")
	require.Zero(t, per[group])
	require.Zero(t, per[blocked], "the blocked chat got nothing")
	delivered := 0
	for c, n := range per {
		require.Equal(t, 1, n, "chat %d received the copy once", c)
		delivered += n
	}
	require.Equal(t, audience-1, delivered, "every other chat got the copy")
	require.Equal(t, map[string]int{"forbidden": 1}, p.Failed, "the blocked chat counted failed, forbidden")
	require.Equal(t, audience, p.Total)
	require.Equal(t, delivered, p.Sent)
	require.Equal(t, delivered, sent, "the progress message's final sent count")
	require.Equal(t, 1, failed, "the progress message's final failed count")
}

// TestTwoLazyBroadcastsAtOnceReachEveryChatOnceAndShareTheBudget: two
// broadcasts to the same 8,000 chats, the second sent right after the
// first: while both walk, each gets a fair part of the bulk budget (over
// the second half of that time, past each one's first window, each one's
// copies sent at least half the other's: the fillers fill both,
// each its own window, on the chats' one lane), and in the end every chat
// received each broadcast once.
func TestTwoLazyBroadcastsAtOnceReachEveryChatOnceAndShareTheBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	const chatsN = 8_000
	h.addKnownChats(r, 700_000, chatsN-1)
	const textA, textB = "📣 the first of two", "📣 the second of two"
	a := h.sendBroadcast(textA)
	b := h.sendBroadcast(textB)

	var sent [][2]int // copies sent of a and b, every 50 ms while both walk
	h.waitBroadcasts(r, []string{a, b}, "one walk over", func(ps []notifier.Progress) bool {
		if !ps[0].Walking || !ps[1].Walking {
			return true
		}
		sent = append(sent, [2]int{ps[0].Sent, ps[1].Sent})
		return false
	})
	// The second half of that time: past the start, where each had its
	// first window to itself.
	require.GreaterOrEqual(t, len(sent), 2)
	from, to := sent[len(sent)/2], sent[len(sent)-1]
	da, db := to[0]-from[0], to[1]-from[1]
	t.Logf("while both walked (%d samples): %d copies of the first, %d of the second; in the second half %d and %d",
		len(sent), to[0]-sent[0][0], to[1]-sent[0][1], da, db)
	require.GreaterOrEqual(t, da+db, 1000, "both walked for a while (the second half alone: half a window each at least)")
	require.GreaterOrEqual(t, 2*da, db, "the first got a fair part of the budget")
	require.GreaterOrEqual(t, 2*db, da, "the second got a fair part of the budget")

	// Both at once: either one's progress is progress (waiting for one
	// alone sees a stall while its last copy, the admin's, waits its turns
	// of the ring behind the other's copies and the progress edits on the
	// admin's lane: on a loaded host a turn of 800 lanes took over 20 s).
	var final []notifier.Progress
	h.waitBroadcasts(r, []string{a, b}, "every copy settled", func(ps []notifier.Progress) bool {
		final = ps
		return ps[0].Done() && ps[1].Done()
	})
	for _, p := range final {
		require.Equal(t, chatsN, p.Sent)
	}
	for _, text := range []string{textA, textB} {
		per := h.copiesPerChat(text)
		require.Len(t, per, chatsN, "every chat received %q", text)
		for c, n := range per {
			require.Equal(t, 1, n, "chat %d received %q once", c, text)
		}
	}
}

// TestLazyBroadcastPlanSchedulesSpreadsAndStops: broadcasts to 300 chats
// and the admin's with a plan (/broadcast in <duration>, over <duration>;
// the shortest, a minute):
//   - in 1 minute: no copy is delivered before its start, then every chat
//     gets it once;
//   - in an hour, then stopped with /broadcast stop: no copy is made in
//     its first second, none is ever sent, every copy counts cancelled;
//   - over 1 minute (5.02 copies/s): the copies made never run ahead of
//     the rate (queued <= rate x elapsed + one copy, sampled while it
//     runs; the k-th copy delivered no sooner than (k-1)/rate after the
//     start), then stopped mid-way: after the stop only copies then in
//     flight arrive.
func TestLazyBroadcastPlanSchedulesSpreadsAndStops(t *testing.T) {
	t.Parallel()
	const chatsN = 301
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, h *harness, r *running)
	}{
		{"in a minute", func(t *testing.T, h *harness, r *running) {
			const text = "⏰ at its time"
			asked := time.Now()
			id := h.sendBroadcast("in 1m " + text)
			p, err := r.app.Notifier().Progress(t.Context(), id)
			require.NoError(t, err)
			require.False(t, p.At.Before(asked.Add(time.Minute).Truncate(time.Millisecond)), "it starts a minute after it was asked for")
			time.Sleep(time.Until(p.At)) // nothing to wait on before its start
			p = h.waitBroadcast(r, id, "every copy settled", notifier.Progress.Done)
			require.Equal(t, chatsN, p.Sent)
			copies := h.copies(text)
			require.Len(t, copies, chatsN)
			require.False(t, copies[0].Time.Before(p.At), "no copy before its start (the first at %v, the start %v)", copies[0].Time, p.At)
			t.Logf("scheduled: the first copy %v after its start", copies[0].Time.Sub(p.At))
			for c, n := range h.copiesPerChat(text) {
				require.Equal(t, 1, n, "chat %d once", c)
			}
		}},
		{"in an hour, stopped before its start", func(t *testing.T, h *harness, r *running) {
			const text = "⏰ never"
			id := h.sendBroadcast("in 1h " + text)
			time.Sleep(time.Second) // the fillers look at it twice (notifier.DefaultTick)
			p, err := r.app.Notifier().Progress(t.Context(), id)
			require.NoError(t, err)
			require.Zero(t, p.Queued, "no copy made before its start")
			h.stopBroadcast(r, id, text)
			p = h.waitBroadcast(r, id, "stopped", notifier.Progress.Done)
			require.Zero(t, p.Sent)
			require.Equal(t, chatsN, p.Total)
			require.Equal(t, chatsN, p.Cancelled, "every copy cancelled")
			h.requireQueuesEmpty(r)
			require.Empty(t, h.copies(text), "nothing sent")
		}},
		{"over a minute, stopped mid-way", func(t *testing.T, h *harness, r *running) {
			const text = "🐢 spread over a minute"
			id := h.sendBroadcast("over 1m " + text)
			rate := float64(chatsN) / time.Minute.Seconds()
			samples := 0
			p := h.waitBroadcast(r, id, "30 copies sent at the spread's pace", func(p notifier.Progress) bool {
				elapsed := time.Since(p.At) // read after p: at least the time the fillers had
				require.InDelta(t, rate, p.Rate, 0.001)
				require.LessOrEqual(t, p.Queued, int(math.Floor(p.Rate*elapsed.Seconds()))+1,
					"copies made %v after the start: no more than the rate allows, plus one", elapsed)
				samples++
				return p.Sent >= 30
			})
			require.True(t, p.Walking, "stopped mid-way")
			atStop := h.stopBroadcast(r, id, text)
			p = h.waitBroadcast(r, id, "the copies in flight settled", notifier.Progress.Done)
			h.requireQueuesEmpty(r)
			time.Sleep(time.Second) // at 5 copies/s, 5 more would arrive if any were left
			copies := h.copies(text)
			t.Logf("spread: %d samples; stopped with %d delivered, %d in flight; in the end %d sent, %d cancelled of %d",
				samples, atStop.delivered, atStop.inFlight, p.Sent, p.Cancelled, p.Total)
			require.Len(t, copies, p.Sent, "the chats received exactly the copies counted sent")
			require.LessOrEqual(t, len(copies)-atStop.delivered, atStop.inFlight, "after the stop, only copies in flight at the stop arrived")
			require.Equal(t, chatsN, p.Sent+p.Cancelled)
			require.Positive(t, p.Cancelled)
			for k, m := range copies {
				earliest := p.At.Add(time.Duration(float64(k) / p.Rate * float64(time.Second)))
				require.False(t, m.Time.Before(earliest.Add(-time.Millisecond)),
					"copy %d delivered %v after the start, no sooner than the rate allows (%v)", k+1, m.Time.Sub(p.At), earliest.Sub(p.At))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			r := h.start(nil)
			h.waitLeader(r)
			h.addKnownChats(r, 900_000, chatsN-1) // and the admin's, known with its /broadcast
			tc.run(t, h, r)
		})
	}
}

// chatInBucket is the first chat id from first on in audience bucket b
// (chats.Bucket): a walk of the audience reaches bucket Buckets-1 last.
func chatInBucket(first, b int64) int64 {
	return first + ((b-chats.Bucket(first))%chats.Buckets+chats.Buckets)%chats.Buckets
}

// sendBroadcast has the admin send /broadcast text and tap the preview's
// ✅ Send, and returns the broadcast's id (as the preview recorded it).
func (h *harness) sendBroadcast(text string) string {
	h.t.Helper()
	pv, buttons := h.broadcastPreview(text)
	send, ok := buttons["✅ Send"]
	require.True(h.t, ok, "the preview offers ✅ Send: %v", buttons)
	u, _ := h.tapAdmin(pv.ID, send)
	pid := strings.Split(u.CallbackQuery.Data, "|")[1]
	id, err := h.c.Do(h.t.Context(), h.c.B().Hget().Key(broadcast.NewKeys(h.tag).Preview(pid)).Field("bc").Build()).ToString()
	require.NoError(h.t, err, "the preview records its broadcast")
	return id
}

// stopped is a broadcast as its stop left it.
type stopped struct {
	p notifier.Progress // its progress once the stop was answered
	// inFlight is the messages under a lease (every queue) then, and
	// delivered the broadcast's copies the emulator had received after
	// that: once a stop is done no copy is claimed, so every copy
	// delivered later was among those in flight.
	inFlight, delivered int
}

// stopBroadcast has the admin send /broadcast stop id (a broadcast of
// text) and waits for the answer naming the broadcast: the stop is done
// then.
func (h *harness) stopBroadcast(r *running, id, text string) stopped {
	h.t.Helper()
	before := len(h.emu.Messages(adminID))
	h.say(0, user(adminID, "Admin"), "/broadcast stop "+id)
	h.waitProgress("the stop's answer", 1, func() int {
		for _, m := range h.emu.Messages(adminID)[before:] {
			if strings.Contains(m.Text, id) && strings.Contains(m.Text, "stopped") {
				return 1
			}
		}
		return 0
	})
	p, err := r.app.Notifier().Progress(h.t.Context(), id)
	require.NoError(h.t, err)
	require.True(h.t, p.Stopped)
	require.False(h.t, p.Walking, "a stop ends the walk")
	n := 0
	for _, q := range tgjob.AllQueues() {
		st, err := r.app.Store().Inspector().Stats(h.t.Context(), q, 0)
		require.NoError(h.t, err)
		n += st.InFlight
	}
	return stopped{p: p, inFlight: n, delivered: len(h.copies(text))}
}

// waitBroadcast polls broadcast id's progress (every 50 ms) until done
// holds and returns it; it fails when wait passes with no change of the
// progress (the broadcast stalled), never for the time the whole takes.
func (h *harness) waitBroadcast(r *running, id, what string, done func(notifier.Progress) bool) notifier.Progress {
	h.t.Helper()
	var out notifier.Progress
	h.waitBroadcasts(r, []string{id}, what, func(ps []notifier.Progress) bool {
		out = ps[0]
		return done(ps[0])
	})
	return out
}

// waitBroadcasts is waitBroadcast of several broadcasts at once: done
// sees their progress in the order of ids. No broadcast may make more
// copies than its plan (its Total when first read: no chat joins the
// audience during these tests), so one that runs away fails at once
// rather than progressing forever.
func (h *harness) waitBroadcasts(r *running, ids []string, what string, done func([]notifier.Progress) bool) {
	h.t.Helper()
	plan := make([]int, len(ids))
	h.poll(what, func() (bool, string) {
		ps := make([]notifier.Progress, len(ids))
		for i, id := range ids {
			p, err := r.app.Notifier().Progress(h.t.Context(), id)
			require.NoError(h.t, err)
			if plan[i] == 0 {
				plan[i] = p.Total
			}
			require.LessOrEqual(h.t, p.Queued, plan[i], "%s: broadcast %s made more copies than its plan", what, id)
			ps[i] = p
		}
		return done(ps), fmt.Sprintf("%+v", ps)
	}, func() string { return h.queuesState(r) })
}

// queuesState describes every queue of r's store (its counts and deepest
// lanes), for a stall's failure message.
func (h *harness) queuesState(r *running) string {
	var b strings.Builder
	for _, q := range tgjob.AllQueues() {
		st, err := r.app.Store().Inspector().Stats(h.t.Context(), q, 3)
		fmt.Fprintf(&b, "\n  queue %s: %+v (err %v)", q, st, err)
	}
	return b.String()
}

// poll evaluates cond every 50 ms until it is done; it fails when wait
// passes with no change of the state cond reports (a stall), never for
// the time the whole takes, which a loaded machine stretches. A stall's
// message adds what each diag says then.
func (h *harness) poll(what string, cond func() (done bool, state string), diag ...func() string) {
	h.t.Helper()
	var last string
	moved := time.Now()
	for {
		done, state := cond()
		if done {
			return
		}
		if state != last {
			last, moved = state, time.Now()
		}
		if time.Since(moved) >= wait {
			for _, d := range diag {
				last += d()
			}
		}
		require.Less(h.t, time.Since(moved), wait, "%s: no progress for %v: %s", what, wait, last)
		time.Sleep(50 * time.Millisecond)
	}
}

// copies are the messages of every chat whose text is text, by time.
func (h *harness) copies(text string) []tgemu.Message {
	var out []tgemu.Message
	for _, m := range h.emu.AllMessages() {
		if m.Text == text {
			out = append(out, m)
		}
	}
	return out
}

// copiesPerChat counts the messages whose text is text by chat.
func (h *harness) copiesPerChat(text string) map[int64]int {
	out := map[int64]int{}
	for _, m := range h.copies(text) {
		out[m.ChatID]++
	}
	return out
}

// finalRE reads the counts of a progress message's final text (a stopped
// one ending in ", N in flight" is not final: isFinalProgress).
var finalRE = regexp.MustCompile(`^(?:✅ Broadcast done|🛑 Broadcast stopped): (\d+) sent[^,]*, (\d+) failed`)

// finalProgressCounts waits until the admin's one progress message shows
// its final text (done or stopped) and returns its sent and failed counts.
func (h *harness) finalProgressCounts() (sent, failed int) {
	h.t.Helper()
	var txt string
	h.waitProgress("the progress message's final text", 1, func() int {
		p := h.progressMsgs()
		if len(p) != 1 {
			return 0
		}
		txt = p[0].CurrentText()
		if isFinalProgress(txt) {
			return 1
		}
		return 0
	})
	m := finalRE.FindStringSubmatch(txt)
	sent, err := strconv.Atoi(m[1])
	require.NoError(h.t, err)
	failed, err = strconv.Atoi(m[2])
	require.NoError(h.t, err)
	return sent, failed
}

// isFinalProgress reports whether txt is a progress message's final text:
// done, or stopped with nothing in flight. A stop sets the broadcast's stop
// field before it cancels the queued copies step by step, so the tracker
// may show "🛑 Broadcast stopped: …, N in flight" with counts still moving
// (a CI run read 2,027 sent there, 2,037 in the end).
func isFinalProgress(txt string) bool {
	return finalRE.MatchString(txt) && !strings.HasSuffix(txt, " in flight")
}

// requireQueuesEmpty waits until no queue holds a message (pending,
// delayed or in flight): the admin's replies settle too.
func (h *harness) requireQueuesEmpty(r *running) {
	h.t.Helper()
	h.poll("the queues empty", func() (bool, string) {
		n := 0
		for _, q := range tgjob.AllQueues() {
			st, err := r.app.Store().Inspector().Stats(h.t.Context(), q, 0)
			require.NoError(h.t, err)
			n += st.Pending + st.InFlight + st.Delayed
		}
		return n == 0, strconv.Itoa(n)
	})
}
