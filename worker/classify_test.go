package worker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// 429 with retry_after 40: the chat's lanes (both queues) are parked for
// exactly 40 s and its job released (no attempt used), while 50 other chats
// keep receiving.
func Test429ParksLaneForRetryAfter(t *testing.T) {
	// Not parallel: it runs against the emulator's limits, and CPU
	// contention with other tests adds claim-to-arrival jitter.
	e := newEnv(t, envOpts{limits: notifier.DefaultLimits(), emuLimits: tgemu.DefaultLimits()})
	const x = int64(5000)
	e.emu.InjectFault(tgemu.TooManyRequests(40).For("sendMessage").ForChat(x))
	e.notify(x, "reply to x", notifier.Reply)
	e.notify(x, "note to x", notifier.Notification)
	for i := range 50 {
		e.notify(int64(6000+i), "note "+itoa(i), notifier.Notification)
	}
	_, stop := e.start(e.config())
	for i := range 50 {
		e.waitMsgs(int64(6000+i), 1)
	}
	now := e.serverTime()
	require.NoError(t, stop())
	var tooMany []tgemu.Request // the injected 429
	for _, r := range e.emu.SendRequests() {
		if r.ChatID == x && r.HTTPStatus == 429 && r.RetryAfter == 40 {
			tooMany = append(tooMany, r)
		}
	}
	require.Len(t, tooMany, 1, "one 429 for x")

	require.Empty(t, e.emu.Messages(x))
	for _, q := range []string{tgjob.QueueReply, tgjob.QueueNotify} { // the queues that hold a job for x
		ls := e.laneStats(q, "5000")
		require.Equal(t, 1, ls.Depth, "queue %s: the job is back on its lane", q)
		require.False(t, ls.ParkedUntil.IsZero(), "queue %s parked", q)
		// Parked for 40 s from the 429's answer: no earlier than 40 s after
		// the emulator processed it, no later than 40 s from now (server
		// and emulator read the same host clock; the server's to the ms).
		require.False(t, ls.ParkedUntil.Before(tooMany[0].Time.Add(40*time.Second).Truncate(time.Millisecond)),
			"queue %s: parked until %v, 40 s after the 429 at %v", q, ls.ParkedUntil, tooMany[0].Time)
		require.LessOrEqual(t, ls.ParkedUntil.Sub(now), 40*time.Second, "queue %s", q)
	}
	require.Empty(t, e.dead(tgjob.QueueReply))
	require.Empty(t, e.dead(tgjob.QueueNotify))
	// The flood limiter of the emulator may answer a rare 429 when a CPU
	// stall delays a request by more than Limits.Slack (see the report in
	// DefaultSlack); such a chat is parked for retry_after and delivered
	// later, which the waits above already proved.
	t.Logf("429s from the emulator's limiter: %d", e.emu.Stats().TooManyRequests)
	// The released job kept its attempts at 0: claim it (the lane is
	// parked, so resume it first).
	require.NoError(t, e.store.Inspector().ResumeLane(e.ctx, tgjob.QueueReply, "5000"))
	// The 50 sends just filled the global budget (and the 429'd send counts
	// against the chat's pace until a window after its release): wait as
	// the claim says (RetryIn), as a worker would.
	var (
		c   lanes.Claimed
		err error
	)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		c, err = e.store.Claim(e.ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueReply}, Lease: time.Second, Max: 1})
		require.NoError(t, err)
		if len(c.Jobs) > 0 {
			break
		}
		require.GreaterOrEqual(t, c.RetryIn, time.Duration(0), "something is scheduled (budget refill or pace)")
		time.Sleep(c.RetryIn + time.Millisecond)
	}
	require.Len(t, c.Jobs, 1)
	require.Zero(t, c.Jobs[0].Attempts)
}

// 429 without parameters: parked for Config.DefaultRetryAfter (the
// worker's record of the park: 1 s, not the 5 s default), then sent at
// least that long after the 429 (by the emulator's clock). The logged end
// of the park is the worker's estimate, not the store's (which counts from
// the 429's estimated arrival): not compared with the send.
func Test429WithoutRetryAfterUsesDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const x = int64(42)
	e.emu.InjectFault(tgemu.TooManyRequests(0).ForChat(x))
	e.notify(x, "hi", notifier.Reply)
	cfg := e.config()
	cfg.DefaultRetryAfter = time.Second
	e.start(cfg)
	m := e.waitMsgs(x, 1)[0]
	// The emulator stores a message just before it logs its request: wait
	// for the log to hold both sends.
	_, err := e.emu.WaitForRequests(e.ctx, "sendMessage", 2)
	require.NoError(t, err)
	reqs := e.emu.SendRequests()
	require.Len(t, reqs, 2)
	require.Equal(t, 429, reqs[0].HTTPStatus)
	require.GreaterOrEqual(t, m.Time.Sub(reqs[0].Time), 950*time.Millisecond)
	parkedFor, _ := e.parkedLog(x)
	require.Equal(t, cfg.DefaultRetryAfter, parkedFor, "parked for DefaultRetryAfter")
}

// 429s from several distinct chats at once are a global signal: the store is
// paused for the shortest retry_after.
func Test429FromSeveralChatsPausesGlobally(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	for _, c := range []int64{1, 2, 3} {
		e.emu.InjectFault(tgemu.TooManyRequests(2 + int(c)).ForChat(c))
		e.notify(c, "x", notifier.Notification)
	}
	e.start(e.config())
	_, err := e.emu.WaitForRequests(e.ctx, "sendMessage", 3)
	require.NoError(t, err)
	// Paused: a claim on any queue reports the pause's remaining time.
	require.Eventually(t, func() bool {
		c, err := e.store.Claim(e.ctx, lanes.ClaimRequest{Queues: []string{"probe"}, Lease: time.Second, Max: 1})
		require.NoError(t, err)
		return c.RetryIn > time.Second && c.RetryIn <= 3*time.Second
	}, 2*time.Second, 5*time.Millisecond)
	for _, c := range []int64{1, 2, 3} {
		e.waitMsgs(c, 1)
	}
	require.Contains(t, e.logs.String(), "global pause")
}

// 403 (blocked, deactivated, kicked from a group): the job and the chat's
// other pending jobs are dead-lettered with the reason, the chat is marked
// inactive, nothing is retried; a notification to it is then refused with
// the typed error until the chat talks to the bot again (MarkActive, which
// the app calls on every update), after which it is delivered.
func Test403DeadLettersChatAndMarksInactive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		chat   int64
		status tgemu.ChatStatus
		reason string
	}{
		{"blocked", 403, tgemu.ChatBlocked, "forbidden: bot was blocked by the user"},
		{"deactivated", 4031, tgemu.ChatDeactivated, "forbidden: user is deactivated"},
		{"kicked from group", -4032, tgemu.ChatKicked, "forbidden: bot was kicked from the group chat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{})
			x := tc.chat
			e.emu.SetChatStatus(x, tc.status)
			for i := range 3 {
				e.notify(x, "reply "+itoa(i), notifier.Reply)
			}
			for i := range 2 {
				e.notify(x, "note "+itoa(i), notifier.Notification)
			}
			e.start(e.config())
			dead := append(e.waitDead(tgjob.QueueReply, 3), e.waitDead(tgjob.QueueNotify, 2)...)
			require.Len(t, dead, 5)
			attempts := 0
			for _, d := range dead {
				require.Equal(t, tc.reason, d.Reason, "one reason, in Telegram's words without its status text")
				require.Equal(t, itoa(int(x)), d.Group)
				attempts += d.Attempts
			}
			require.Equal(t, len(e.emu.SendRequests()), attempts, "the attempts are the sends tried: the letters never sent read 0")
			in, err := e.n.Chats().IsInactive(e.ctx, x)
			require.NoError(t, err)
			require.True(t, in)

			// Before the chat talks again: a notification is refused with
			// the typed error, nothing is enqueued.
			_, err = e.n.Notify(e.ctx, x, notifier.Message{Text: "more", Class: notifier.Notification})
			require.ErrorIs(t, err, notifier.ErrInactive)
			var ie *notifier.InactiveError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, x, ie.ChatID)
			// No retry: nothing left on the lanes once the 403 is settled
			// (waited for), and past several backoffs (20 ms base) after
			// that, still at most one request per queue.
			require.Eventually(t, func() bool { pending, inflight := e.pending(); return pending == 0 && inflight == 0 },
				20*time.Second, 10*time.Millisecond, "settled")
			time.Sleep(300 * time.Millisecond)
			require.LessOrEqual(t, len(e.emu.SendRequests()), 2, "one request per queue at most, no retry")
			for _, r := range e.emu.SendRequests() {
				require.Equal(t, 403, r.HTTPStatus)
			}
			require.Empty(t, e.emu.Messages(x))

			// The chat comes back and talks to the bot: the app's
			// middleware marks it active; notifications flow again.
			e.emu.SetChatStatus(x, tgemu.ChatActive)
			require.NoError(t, e.n.Chats().MarkActive(e.ctx, x))
			in, err = e.n.Chats().IsInactive(e.ctx, x)
			require.NoError(t, err)
			require.False(t, in)
			e.notify(x, "welcome back", notifier.Notification)
			require.Equal(t, "welcome back", e.waitMsgs(x, 1)[0].Text)
			time.Sleep(100 * time.Millisecond)
			require.Equal(t, []string{"welcome back"}, texts(e.emu.Messages(x)), "the dead-lettered messages are not resent")
			require.Len(t, e.dead(tgjob.QueueReply), 3)
			require.Len(t, e.dead(tgjob.QueueNotify), 2)
		})
	}
}

func Test400ChatNotFoundDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{strictChats: true})
	e.notify(777, "anyone?", notifier.Reply)
	e.start(e.config())
	d := e.waitDead(tgjob.QueueReply, 1)[0]
	require.Equal(t, "chat not found", d.Reason, "Telegram's description adds nothing to the code")
	require.Equal(t, 1, d.Attempts, "the one send tried")
	time.Sleep(100 * time.Millisecond)
	require.Len(t, e.emu.SendRequests(), 1, "no retry")
}

func Test400MessageTooLongDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.enqueueRaw(tgjob.QueueNotify, "42", rawJob(t, tgjob.Job{Chat: 42, Text: strings.Repeat("a", 5000)}))
	e.start(e.config())
	d := e.waitDead(tgjob.QueueNotify, 1)[0]
	require.True(t, strings.HasPrefix(d.Reason, "too long: "), d.Reason)
	require.Len(t, e.emu.SendRequests(), 1)
}

// 400 can't parse entities: resent once as plain text.
func Test400CantParseEntitiesResendsPlain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	_, err := e.n.Notify(e.ctx, 42, notifier.Message{Text: "<b>unclosed", ParseMode: "HTML"})
	require.NoError(t, err)
	e.start(e.config())
	m := e.waitMsgs(42, 1)[0]
	require.Equal(t, "<b>unclosed", m.Text)
	require.Empty(t, m.ParseMode)
	reqs, err := e.emu.WaitForRequests(e.ctx, "sendMessage", 2)
	require.NoError(t, err)
	require.Len(t, reqs, 2)
	require.Equal(t, "HTML", reqs[0].Params["parse_mode"])
	require.Contains(t, reqs[0].Description, "can't parse entities")
}

// ... and dead-lettered when the plain resend is refused the same way.
func Test400CantParseEntitiesTwiceDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.emu.InjectFault(tgemu.HTTPError(400, `{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: boom"}`).ForChat(42).Times(2))
	_, err := e.n.Notify(e.ctx, 42, notifier.Message{Text: "<b>fine</b>", ParseMode: "HTML"})
	require.NoError(t, err)
	e.start(e.config())
	d := e.waitDead(tgjob.QueueReply, 1)[0]
	require.True(t, strings.HasPrefix(d.Reason, "parse entities: "), d.Reason)
	require.Len(t, e.emu.SendRequests(), 2)
	require.Empty(t, e.emu.Messages(42))
}

// 400 migrate_to_chat_id: the lanes (jobs in order) and the chat's weight
// move to the new chat, the alias is recorded, later messages for the old
// id go there.
func Test400MigrateMovesLane(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const old, sup = int64(-555), int64(-1001234567890)
	e.emu.MigrateChat(old, sup)
	require.NoError(t, e.store.Inspector().SetWeight(e.ctx, "-555", 3))
	for i := range 5 {
		e.notify(old, "m"+itoa(i), notifier.Reply)
	}
	e.start(e.config())
	msgs := e.waitMsgs(sup, 5)
	require.Equal(t, []string{"m0", "m1", "m2", "m3", "m4"}, texts(msgs))
	to, err := e.n.Chats().Resolve(e.ctx, old)
	require.NoError(t, err)
	require.Equal(t, sup, to)
	w, err := e.store.Inspector().Weight(e.ctx, "-1001234567890")
	require.NoError(t, err)
	require.Equal(t, 3, w)
	e.notify(old, "later", notifier.Reply)
	require.Equal(t, "later", e.waitMsgs(sup, 6)[5].Text)
	oldReqs := 0
	for _, r := range e.emu.SendRequests() {
		if r.ChatID == old {
			oldReqs++
		}
	}
	require.Equal(t, 1, oldReqs, "only the first send went to the old id")
	require.Empty(t, e.dead(tgjob.QueueReply))
}

// 5xx: retried with backoff, dead-lettered after MaxAttempts.
func Test5xxDeadLettersAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{maxAttempts: 3})
	e.emu.InjectFault(tgemu.InternalServerError().ForChat(42).Times(-1))
	e.notify(42, "doomed", notifier.Reply)
	e.start(e.config())
	d := e.waitDead(tgjob.QueueReply, 1)[0]
	require.True(t, strings.HasPrefix(d.Reason, "transient: "), d.Reason)
	require.Equal(t, 3, d.Attempts)
	require.Len(t, e.emu.SendRequests(), 3)
	reqs := e.emu.SendRequests()
	require.GreaterOrEqual(t, reqs[2].Time.Sub(reqs[1].Time), 30*time.Millisecond, "backoff grows: 20ms, then 40ms ±20%")
}

// A dropped connection and a timeout (the request was written, no answer
// came: the outcome is unknown) are retried once.
func TestDroppedConnectionAndTimeoutAreRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.emu.InjectFault(tgemu.DropConnection().ForChat(42))
	e.emu.InjectFault(tgemu.Delay(5 * time.Second).ForChat(43))
	e.notify(42, "persistent", notifier.Reply)
	e.notify(43, "patient", notifier.Reply)
	cfg := e.config()
	cfg.SendTimeout = 300 * time.Millisecond
	e.start(cfg)
	require.Equal(t, "persistent", e.waitMsgs(42, 1)[0].Text)
	require.Equal(t, "patient", e.waitMsgs(43, 1)[0].Text)
	time.Sleep(100 * time.Millisecond)
	require.Len(t, e.emu.Messages(42), 1)
	require.Len(t, e.emu.Messages(43), 1)
	require.Len(t, e.emu.SendRequests(), 4)
}

// Three 502s then success: delivered exactly once.
func Test502ThriceThenDeliveredOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.emu.InjectFault(tgemu.BadGateway().ForChat(42).Times(3))
	e.notify(42, "eventually", notifier.Reply)
	e.start(e.config())
	e.waitMsgs(42, 1)
	time.Sleep(200 * time.Millisecond)
	require.Len(t, e.emu.Messages(42), 1)
	require.Len(t, e.emu.SendRequests(), 4)
	require.Empty(t, e.dead(tgjob.QueueReply))
}

func TestMalformedJobDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.enqueueRaw(tgjob.QueueReply, "42", []byte("not json"))
	e.enqueueRaw(tgjob.QueueReply, "not-a-chat", rawJob(t, tgjob.Job{Text: "x"}))
	e.start(e.config())
	for _, d := range e.waitDead(tgjob.QueueReply, 2) {
		require.Equal(t, "malformed job", d.Reason)
	}
	require.Empty(t, e.emu.SendRequests())
}

// A chat that blocked the bot with 1,500 pending jobs of one broadcast (a
// text split in 1,500 parts): the 403 dead-letters them all (DeadLane in
// chunks of 1,000) and exactly those jobs are counted in the broadcast's
// progress, so it ends with nothing remaining.
func TestBlockedChatCountsEveryDeadJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	tiny, err := notifier.New(valkeytest.Shared(t).Client(t), e.store, notifier.Config{MaxUnits: 1})
	require.NoError(t, err)
	const blocked, fine = int64(555), int64(556)
	e.emu.SetChatStatus(blocked, tgemu.ChatBlocked)
	const parts = 1500
	id, err := tiny.Broadcast(e.ctx, []int64{blocked}, notifier.Message{Text: strings.Repeat("a", parts)})
	require.NoError(t, err)
	// Unrelated dead letters dead-lettered later in the same queue must not
	// be attributed (nor needed) to the broadcast.
	other, err := e.n.Broadcast(e.ctx, []int64{fine}, notifier.Message{Text: "ok"})
	require.NoError(t, err)
	e.start(e.config())
	var p notifier.Progress
	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, id)
		return err == nil && p.Done()
	}, 30*time.Second, 20*time.Millisecond, "progress %+v", p)
	require.Equal(t, notifier.Progress{ID: id, Total: parts, Queued: parts, Failed: map[string]int{"forbidden": parts}}, p)
	dls, err := e.store.Inspector().DeadLetters(e.ctx, tgjob.QueueNotify, lanes.DeadQuery{Newest: 2 * parts})
	require.NoError(t, err)
	require.Equal(t, parts, len(dls))
	p, err = e.n.Progress(e.ctx, other)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, other)
		return err == nil && p.Done()
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, p.Sent)
	require.Empty(t, p.Failed)
}

// A 429 is counted on the queue of the job Telegram refused
// (codemojex_worker_too_many_requests_total{queue}), so a dashboard shows
// 429s by budget; the other queues' counts are exported at 0 from the
// start (a rate() sees their first 429).
func Test429IsCountedOnTheQueueOfTheRefusedJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{unlimited: "the one 429 counted must be the injected one"})
	const x = int64(5100)
	e.emu.InjectFault(tgemu.TooManyRequests(1).For("sendMessage").ForChat(x))
	e.notify(x, "note to x", notifier.Notification)
	_, stop := e.start(e.config())
	e.waitMsgs(x, 1)
	require.NoError(t, stop())
	want := map[string]float64{}
	for _, q := range tgjob.AllQueues() {
		want[q] = 0
	}
	want[tgjob.QueueNotify] = 1
	got := map[string]float64{}
	mfs, err := e.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "codemojex_worker_too_many_requests_total" {
			for _, m := range mf.GetMetric() {
				require.Len(t, m.GetLabel(), 1)
				got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	require.Equal(t, want, got, "429s by queue")
}
