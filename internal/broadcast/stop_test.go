package broadcast

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A Stop cut short (its handler's deadline passed during
// notifier.StopBroadcast: here the state it leaves after StopBroadcast's
// first round trip, the broadcast marked stopped and nothing cancelled) of
// a halted paid broadcast is finished, whoever comes next: the Stop's
// update handled again answers it as the stop, its counts adding up (all
// the copies not sent cancelled, none in flight) and audits it once; the
// tracker, when no retry came within stopGrace of the stop, finishes it
// too (and not before: the retry is the one that audits), without
// auditing it: the next Stop (the update's late retry, or another
// admin's) audits it, once, and answers as the stop. Either way nothing
// waits on the paid queue, its halt is lifted, and a later Stop answers
// "already stopped" with counts that add up (chaos seed 7: the retried
// Stop answered "was already stopped … 498 cancelled of 5111, 2113 in
// flight", and that never settled), auditing nothing more.
func TestAStopCutShortIsFinishedAndItsCountsAddUp(t *testing.T) {
	t.Parallel()
	for _, next := range []string{"the Stop handled again", "the tracker"} {
		t.Run(next, func(t *testing.T) {
			t.Parallel()
			s, _ := newService(t, 0)
			ctx := t.Context()
			c := s.cfg.Client
			const n = 30
			id, err := s.notifier.Broadcast(ctx, chatsFrom(7000, n), notifier.Message{Text: "paid news", Paid: true})
			require.NoError(t, err)
			ok, err := s.notifier.HaltPaid(ctx, id)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, s.tracking.Track(ctx, id, tracked{}))

			key := "{" + s.cfg.Tag + "}:n:bc:" + id
			require.NoError(t, c.Do(ctx, c.B().Hset().Key(key).FieldValue().FieldValue("x", "1").Build()).Error())
			require.NoError(t, c.Do(ctx, c.B().Set().Key(key+":stop").Value("1").Build()).Error())
			stoppedAt := func(at time.Time) {
				require.NoError(t, c.Do(ctx, c.B().Hset().Key(key).FieldValue().FieldValue("xt", strconv.FormatInt(at.UnixMilli(), 10)).Build()).Error())
			}
			stoppedAt(time.Now())
			cut, err := s.notifier.Progress(ctx, id)
			require.NoError(t, err)
			require.True(t, cut.Stopped)
			require.Equal(t, n, cut.Remaining, "cut short: every copy not sent counts as in flight")

			stopped := fmt.Sprintf("🛑 Broadcast %s stopped: 0 sent before the stop, %d cancelled.", id, n)
			audited := []string{fmt.Sprintf("42|%s|%s: 0 sent before the stop, %d cancelled, 0 in flight at the stop, paid: 0 copies, 0.0 Stars", ActionStopped, id, n)}
			trail := s.cfg.Audit.(*auditTrail)
			switch next {
			case "the Stop handled again":
				ans, err := s.Stop(ctx, "42", id)
				require.NoError(t, err)
				require.Equal(t, stopped, ans)
				require.Equal(t, audited, trail.recorded(), "audited once, now")
			case "the tracker":
				require.NoError(t, s.trackOnce(ctx))
				p, err := s.notifier.Progress(ctx, id)
				require.NoError(t, err)
				require.False(t, p.StopFinished, "within stopGrace the stop is left to its update's retry")
				stoppedAt(time.Now().Add(-stopGrace))
				require.NoError(t, s.trackOnce(ctx))
				require.Empty(t, trail.recorded(), "the tracker audits nothing")
				ans, err := s.Stop(ctx, "42", id)
				require.NoError(t, err)
				require.Equal(t, stopped, ans, "the next Stop audits it, and answers as the stop")
				require.Equal(t, audited, trail.recorded())
			}
			p, err := s.notifier.Progress(ctx, id)
			require.NoError(t, err)
			require.True(t, p.StopFinished)
			require.Equal(t, n, p.Cancelled)
			require.Zero(t, p.Remaining)
			st, err := s.notifier.Store().Inspector().Stats(ctx, tgjob.QueuePaid, 0)
			require.NoError(t, err)
			require.Zero(t, st.Pending, "nothing waits on the paid queue")
			halted, err := s.notifier.PaidHalted(ctx)
			require.NoError(t, err)
			require.Empty(t, halted, "the halt is lifted")

			ans, err := s.Stop(ctx, "42", id)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("Broadcast %s was already stopped. 🛑 Broadcast stopped: 0 sent before the stop, 0 failed, %d cancelled of %d\n💫 Paid: 0 copies, 0.0 Stars", id, n, n), ans)
			require.Equal(t, audited, trail.recorded(), "audited once")
		})
	}
}

// A stop's answer counts what it can know: the copies sent before it and
// those in flight at it, which may or may not be delivered ("… 3 in
// flight at the stop (each counted sent or cancelled as it settles)"; no
// such clause when none is, TestAStopCutShortIsFinishedAndItsCountsAddUp);
// the audit records the same. Once they settle, the progress text does not
// call a copy delivered after the stop "sent before the stop": it says how
// many of those sent were in flight at it, from what the stop recorded
// (notifier.Progress.StopSent), and so does a later Stop's "was already
// stopped".
func TestAStopSaysWhatWasSentBeforeItAndWhatWasInFlightAtIt(t *testing.T) {
	t.Parallel()
	s, _ := newService(t, 0)
	ctx := t.Context()
	chats := make([]int64, 10)
	for i := range chats {
		chats[i] = int64(8000 + i)
	}
	id, err := s.notifier.Broadcast(ctx, chats, notifier.Message{Text: "stop me"})
	require.NoError(t, err)
	store := s.notifier.Store()
	claim := func() lanes.Job {
		t.Helper()
		c, err := store.Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueNotify}, Lease: time.Minute, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		return c.Jobs[0]
	}
	sent, err := s.notifier.SentTally(id, false)
	require.NoError(t, err)
	require.NoError(t, store.Ack(ctx, claim().Lease, lanes.Counting(sent)), "one copy delivered before the stop")
	delivered, retried, forbidden := claim(), claim(), claim()

	ans, err := s.Stop(ctx, "42", id)
	require.NoError(t, err)
	require.Equal(t, "🛑 Broadcast "+id+" stopped: 1 sent before the stop, 6 cancelled, 3 in flight at the stop (each counted sent or cancelled as it settles).", ans)
	require.Equal(t, []string{"42|" + ActionStopped + "|" + id + ": 1 sent before the stop, 6 cancelled, 3 in flight at the stop"}, s.cfg.Audit.(*auditTrail).recorded())
	p, err := s.notifier.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "🛑 Broadcast stopped: 1 sent before the stop, 0 failed, 6 cancelled of 10, 3 in flight", strings.SplitN(progressText(p), "\n", 2)[0])

	require.NoError(t, store.Ack(ctx, delivered.Lease, lanes.Counting(sent)), "in flight at the stop, delivered after it")
	_, err = store.Nack(ctx, retried.Lease, 0, "transient: 502")
	require.NoError(t, err)
	failed, err := s.notifier.FailedTally(id, "forbidden")
	require.NoError(t, err)
	require.NoError(t, store.Dead(ctx, forbidden.Lease, "403", lanes.Counting(failed)))
	p, err = s.notifier.Progress(ctx, id)
	require.NoError(t, err)
	require.True(t, p.Done())
	settled := "🛑 Broadcast stopped: 2 sent (1 of them in flight at the stop), 0 failed, 8 cancelled of 10"
	require.Equal(t, settled, progressText(p), "the copy delivered after the stop is not counted sent before it")
	ans, err = s.Stop(ctx, "43", id)
	require.NoError(t, err)
	require.Equal(t, "Broadcast "+id+" was already stopped. "+settled, ans)
	require.Len(t, s.cfg.Audit.(*auditTrail).recorded(), 1, "audited once")
}

// A stop cancels the copies waiting on their lanes before it records the
// copies sent and in flight at it (lua/stopdone.lua): in between, the
// broadcast reads done (nothing remaining) while its stop has not
// finished, and the tracker keeps it (its counts are not final: a final
// edit then said "N sent", not "N sent before the stop", for good); once
// the stop finished, it is final and untracked.
func TestAStoppedBroadcastIsNotFinalUntilItsStopFinished(t *testing.T) {
	t.Parallel()
	s, _ := newService(t, 0)
	ctx := t.Context()
	c := s.cfg.Client
	const n = 5
	id, err := s.notifier.Broadcast(ctx, chatsFrom(8000, n), notifier.Message{Text: "news"})
	require.NoError(t, err)
	require.NoError(t, s.tracking.Track(ctx, id, tracked{}))
	key := "{" + s.cfg.Tag + "}:n:bc:" + id
	hset := func(fv ...string) {
		cmd := c.B().Hset().Key(key).FieldValue()
		for i := 0; i < len(fv); i += 2 {
			cmd = cmd.FieldValue(fv[i], fv[i+1])
		}
		require.NoError(t, c.Do(ctx, cmd.Build()).Error())
	}
	// Stopped, its waiting copies cancelled, its counts not yet recorded.
	hset("x", "1", "xt", strconv.FormatInt(time.Now().UnixMilli(), 10), "c", strconv.Itoa(n))
	p, err := s.notifier.Progress(ctx, id)
	require.NoError(t, err)
	require.True(t, p.Done())
	require.False(t, p.StopFinished)
	tracked := func() bool {
		all, err := s.tracking.Tracked(ctx)
		require.NoError(t, err)
		_, ok := all[id]
		return ok
	}
	require.NoError(t, s.trackOnce(ctx))
	require.True(t, tracked(), "done, but its stop has not finished: not final")

	hset("xs", "0", "xi", "0", "xd", "1")
	require.NoError(t, s.trackOnce(ctx))
	require.False(t, tracked(), "its stop finished: final, untracked")
}

// chatsFrom returns the n chat ids from first on.
func chatsFrom(first int64, n int) []int64 {
	chats := make([]int64, n)
	for i := range chats {
		chats[i] = first + int64(i)
	}
	return chats
}
