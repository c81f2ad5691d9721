package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/chatstate"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
	"github.com/codemojex/codemojex/worker"
)

// The worker records the message id of each sent Editable message (and of
// no other: a message never edited leaves nothing once delivered); an edit
// through the queue replaces the text, in order with the chat's other
// messages.
func TestEditThroughQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const chat = int64(77)
	ids, err := e.n.Notify(e.ctx, chat, notifier.Message{Text: "progress 0/3", Editable: true})
	require.NoError(t, err)
	_, ok, err := e.n.Chats().SentMessageID(e.ctx, ids[0])
	require.NoError(t, err)
	require.False(t, ok, "not sent yet")
	e.start(e.config())
	first := e.waitMsgs(chat, 1)[0]
	require.Equal(t, first.ID, e.sentID(ids[0]))

	// Edit, then a new message: the edit reaches Telegram first.
	eids, err := e.n.Edit(e.ctx, chat, first.ID, notifier.Message{Text: "progress <b>3/3</b>", ParseMode: "HTML"})
	require.NoError(t, err)
	require.Len(t, eids, 1)
	after, err := e.n.Notify(e.ctx, chat, notifier.Message{Text: "after", Class: notifier.Reply})
	require.NoError(t, err)
	msgs := e.waitMsgs(chat, 2)
	require.Equal(t, []string{"progress 0/3", "after"}, texts(msgs))
	require.Len(t, msgs[0].Edits, 1)
	require.Equal(t, "progress <b>3/3</b>", msgs[0].CurrentText())
	require.Equal(t, "HTML", msgs[0].Edits[0].ParseMode)
	require.True(t, msgs[0].Edits[0].Time.Before(msgs[1].Time) || msgs[0].Edits[0].Time.Equal(msgs[1].Time), "edit ordered before the later message")
	_, ok, err = e.n.Chats().SentMessageID(e.ctx, eids[0])
	require.NoError(t, err)
	require.False(t, ok, "an edit records no message id of its own")
	e.requireMetric(1, "codemojex_worker_edited_total", "queue", "reply")
	e.requireMetric(2, "codemojex_worker_sent_total", "queue", "reply")
	_, ok, err = e.n.Chats().SentMessageID(e.ctx, after[0]) // counted as sent: settled
	require.NoError(t, err)
	require.False(t, ok, "a message not Editable records no message id")
}

// 400 "message is not modified" counts as success; 400 "message to edit not
// found" dead-letters; a 5xx on an edit is retried; a markup error is
// resent as plain text. The lane goes on after each.
func TestEditErrorRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const chat = int64(78)
	ids, err := e.n.Notify(e.ctx, chat, notifier.Message{Text: "same", Editable: true})
	require.NoError(t, err)
	e.start(e.config())
	msg := e.waitMsgs(chat, 1)[0]
	id := e.sentID(ids[0])

	_, err = e.n.Edit(e.ctx, chat, id, notifier.Message{Text: "same"}) // not modified
	require.NoError(t, err)
	_, err = e.n.Edit(e.ctx, chat, id+1000, notifier.Message{Text: "nowhere"}) // not found
	require.NoError(t, err)
	e.emu.InjectFault(tgemu.InternalServerError().For("editMessageText").ForChat(chat))
	_, err = e.n.Edit(e.ctx, chat, id, notifier.Message{Text: "retried"})
	require.NoError(t, err)
	_, err = e.n.Edit(e.ctx, chat, id, notifier.Message{Text: "<b>bad markup", ParseMode: "HTML"})
	require.NoError(t, err)
	e.notify(chat, "end", notifier.Reply)
	msgs := e.waitMsgs(chat, 2)
	require.Equal(t, "end", msgs[1].Text)
	got, err := e.emu.WaitForEdits(e.ctx, chat, msg.ID, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"retried", "<b>bad markup"}, []string{got.Edits[0].Text, got.Edits[1].Text})
	require.Empty(t, got.Edits[1].ParseMode, "resent as plain text")

	dead := e.dead(tgjob.QueueReply)
	require.Len(t, dead, 1)
	require.True(t, strings.HasPrefix(dead[0].Reason, "edit not found: "), dead[0].Reason)
	j, err := tgjob.Decode(dead[0].Payload)
	require.NoError(t, err)
	require.Equal(t, id+1000, j.MessageID)
	require.Equal(t, 1, e.countEdits(chat, "message to edit not found"), "dead-lettered, not retried")
	require.Equal(t, 1, e.countEdits(chat, "message is not modified"), "acked, not retried")
	e.requireMetric(1, "codemojex_worker_dead_lettered_total", "reason", "edit not found")
	e.requireMetric(3, "codemojex_worker_edited_total", "queue", "reply")
}

func TestEditValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	for _, tc := range []struct {
		chat int64
		id   int
		msg  notifier.Message
	}{
		{0, 1, notifier.Message{Text: "x"}},
		{1, 0, notifier.Message{Text: "x"}},
		{1, -3, notifier.Message{Text: "x"}},
		{1, 1, notifier.Message{Text: " "}},
		{1, 1, notifier.Message{Text: "x", ParseMode: "BBCode"}},
		{1, 1, notifier.Message{Text: strings.Repeat("y", tgtext.MaxTextUnits+1)}},
	} {
		_, err := e.n.Edit(e.ctx, tc.chat, tc.id, tc.msg)
		require.ErrorIs(t, err, notifier.ErrInvalid, "%+v", tc)
	}
	_, _, err := e.n.Chats().SentMessageID(e.ctx, "job_nope")
	require.ErrorIs(t, err, chatstate.ErrInvalid)
	require.NoError(t, e.n.Chats().MarkInactive(e.ctx, 9))
	_, err = e.n.Edit(e.ctx, 9, 1, notifier.Message{Text: "x", Class: notifier.Notification})
	require.ErrorIs(t, err, notifier.ErrInactive)
}

// A send slower than the lease: the sender renews the lease (Extend every
// Lease/3) while Telegram takes its time, so a second worker on the same
// store never re-claims the job. Without the renewal the lease would lapse
// after 300 ms, the other worker would claim the job again and send it a
// second time (undelayed), and the chat would get it twice.
func TestSlowSendRenewsLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const x = int64(3003)
	const lease, delay = 300 * time.Millisecond, time.Second
	e.emu.InjectFault(tgemu.Delay(delay).For("sendMessage").ForChat(x))
	e.notify(x, "slow", notifier.Reply)
	e.notify(x, "next", notifier.Reply)
	e.notify(x+1, "other chat", notifier.Reply)
	start := time.Now()
	for range 2 {
		cfg := e.config()
		cfg.Lease = lease
		cfg.SendTimeout = 3 * delay
		cfg.Registerer = e.reg // shared: collectors are reused
		e.start(cfg)
	}
	e.waitMsgs(x+1, 1)
	e.waitMsgs(x, 2)
	// Past the slow send's end, and well past a lapsed lease's reclaim and
	// a second (undelayed) send.
	time.Sleep(time.Until(start.Add(delay + 2*lease)))
	require.Equal(t, []string{"slow", "next"}, texts(e.emu.Messages(x)), "each delivered once, in order")
	var reqs []tgemu.Request
	for _, r := range e.emu.SendRequests() {
		if r.ChatID == x {
			reqs = append(reqs, r)
		}
	}
	require.Len(t, reqs, 2, "one sendMessage per job: the slow one was not re-claimed")
	for _, r := range reqs {
		require.True(t, r.Accepted())
		if r.Params["text"] == "slow" {
			require.Equal(t, tgemu.FaultDelay, r.Fault, "the slow send was delayed")
		}
	}
	require.Empty(t, e.dead(tgjob.QueueReply))
	require.Empty(t, e.dead(tgjob.QueueNotify))
	// Delivered, then acked: the ack of "next" may follow its delivery
	// (with two busy loops it was still in flight here).
	require.Eventually(t, func() bool { pending, inflight := e.pending(); return pending == 0 && inflight == 0 },
		20*time.Second, 10*time.Millisecond, "both acked")
	logs := e.logs.String()
	require.NotContains(t, logs, "lease extend failed")
	require.NotContains(t, logs, "ack failed after delivery")
}

// TestHeldResponseIsSettledAtOnce: Telegram delivers a sendMessage but the
// response never comes (the connection is held, then closed). The send
// times out with an unknown outcome; the job is settled right away with a
// context of its own (not the one that expired with the send): its retry
// is recorded (a nack, no failed one), and the chat's next message arrives
// while the held job's lease still had over a minute to run (its 2 min
// lease would hold the lane until 108 s after the failed call; the test
// waits 45 s); the held message arrives at most twice, and the unknown
// outcome is counted.
func TestHeldResponseIsSettledAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.emu.InjectFault(tgemu.HeldResponse(90 * time.Second).ForChat(51))
	e.notify(51, "first", notifier.Reply)
	e.notify(51, "second", notifier.Reply)
	cfg := e.config()
	cfg.Lease = 2 * time.Minute        // a lease left to expire would hold the lane past the test's wait
	cfg.SendTimeout = 12 * time.Second // longer than a settling call may take (10 s), as the 20 s default is
	e.start(cfg)

	msgs := e.waitMsgs(51, 1)
	failedAt := msgs[0].Time.Add(cfg.SendTimeout) // when the client gave up
	var second time.Time
	require.Eventually(t, func() bool {
		for _, m := range e.emu.Messages(51) {
			if m.Text == "second" {
				second = m.Time
				return true
			}
		}
		return false
	}, 45*time.Second, 20*time.Millisecond, "the next message arrives before the held job's lease would have ended")
	t.Logf("next message %v after the failed call; copies of the held message: %d",
		second.Sub(failedAt).Round(time.Millisecond), e.copiesOf(51, "first"))
	logs := e.logs.String()
	require.Contains(t, logs, "transient failure, retrying", "the held job was nacked for its retry")
	require.NotContains(t, logs, "nack failed")
	require.LessOrEqual(t, e.copiesOf(51, "first"), 2, "at most two copies")
	e.requireMetric(1, "codemojex_worker_unknown_outcome_total", "", "")
}

// TestUnknownOutcomeTwiceIsDeadLettered: a message whose send has no
// answer twice is not sent a third time: it is dead-lettered with reason
// "unknown outcome".
func TestUnknownOutcomeTwiceIsDeadLettered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.emu.InjectFault(tgemu.HeldResponse(time.Minute).ForChat(52).Times(-1))
	e.notify(52, "never answered", notifier.Reply)
	cfg := e.config()
	cfg.SendTimeout = 300 * time.Millisecond
	e.start(cfg)
	d := e.waitDead(tgjob.QueueReply, 1)[0]
	require.True(t, strings.HasPrefix(d.Reason, worker.ReasonUnknownOutcome+": "), d.Reason)
	require.Equal(t, 2, e.copiesOf(52, "never answered"))
	e.requireMetric(2, "codemojex_worker_unknown_outcome_total", "", "")
	e.requireMetric(1, "codemojex_worker_dead_lettered_total", "reason", worker.ReasonUnknownOutcome)
}

// TestAckDuringBusyIsRetried: Valkey answers BUSY for about 6 s (another
// client runs a long script, ended with SCRIPT KILL) while replies are
// being sent; a reply delivered during the stall is acked once the server
// answers again, so no reply is sent twice, even after its lease would have
// expired.
func TestAckDuringBusyIsRetried(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Start(t, valkeytest.Options{ExtraArgs: []string{"--busy-reply-threshold", "100"}})
	e := newEnv(t, envOpts{srv: srv})
	// The first reply is delivered at once and answered 1 s later: the
	// stall starts in between, so its ack meets BUSY.
	e.emu.InjectFault(tgemu.Delay(time.Second).Processed().ForChat(61))
	texts := []string{"r1", "r2", "r3"}
	for _, s := range texts {
		e.notify(61, s, notifier.Reply)
	}
	cfg := e.config()
	cfg.Lease = 12 * time.Second
	e.start(cfg)
	e.waitMsgs(61, 1)

	busy, err := srv.NewClient()
	require.NoError(t, err)
	defer busy.Close()
	killer, err := srv.NewClient()
	require.NoError(t, err)
	defer killer.Close()
	scriptDone := make(chan error, 1)
	go func() {
		scriptDone <- busy.Do(context.Background(), busy.B().Eval().Script("while true do end").Numkeys(0).Build()).Error()
	}()
	require.Eventually(t, func() bool {
		err := killer.Do(e.ctx, killer.B().Ping().Build()).Error()
		return err != nil && strings.HasPrefix(err.Error(), "BUSY")
	}, 5*time.Second, 10*time.Millisecond, "the server answers BUSY")
	time.Sleep(6 * time.Second)
	require.NoError(t, killer.Do(e.ctx, killer.B().ScriptKill().Build()).Error())
	killedAt := time.Now()
	require.Error(t, <-scriptDone, "the script was killed")

	msgs := e.waitMsgs(61, len(texts))
	last := msgs[len(texts)-1].Time
	t.Logf("last reply %v after SCRIPT KILL", last.Sub(killedAt).Round(time.Millisecond))
	time.Sleep(cfg.Lease + 2*time.Second) // past the lease: a job left unacked would be sent again by now
	dups := 0
	for _, s := range texts {
		dups += e.copiesOf(61, s) - 1
	}
	t.Logf("duplicates after a 6 s BUSY stall: %d (%d messages)", dups, len(e.emu.Messages(61)))
	require.Zero(t, dups, "no reply sent twice")
	// Each once, in order: the next replies followed r1's ack (the lane
	// is ordered), not its lease's end (which sends r1 again first).
	var got []string
	for _, m := range e.emu.Messages(61) {
		got = append(got, m.Text)
	}
	require.Equal(t, texts, got, "the chat's replies, each once, in order")
	require.Contains(t, e.logs.String(), "failed; retrying with a fresh context", "settling met BUSY and was retried")
}
