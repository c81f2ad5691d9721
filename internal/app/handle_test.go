package app

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/gameui"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// TestCrashBetweenIntakeAndHandling: a process records updates (and so
// confirms them to Telegram) and stops before handling any; a new process
// handles each exactly once.
func TestCrashBetweenIntakeAndHandling(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann := user(901, "Ann")

	first := h.start(nil, WithIntakeOnly(), WithRandom(secretRNG(0, 1, 2, 3)))
	h.waitLeader(first)
	texts := []string{"/play", "🍋🍋🍋🍋", "🐶🐶🐶🐶", "🍎🍌🍒🍇", "/top"}
	var last int64
	for _, s := range texts {
		last = h.say(0, ann, s).ID
	}
	in := first.app.inbox
	require.Eventually(t, func() bool {
		n, err := in.Unhandled(ctx)
		return err == nil && n == int64(len(texts)) && len(h.emu.PendingUpdates()) == 0
	}, wait, 10*time.Millisecond, "recorded in Valkey, then confirmed to Telegram by the next offset")
	off, err := in.Offset(ctx)
	require.NoError(t, err)
	require.Equal(t, last+1, off)
	first.stop() // the "crash": nothing was handled
	require.Empty(t, h.emu.Messages(ann.ID))

	second := h.start(nil, WithRandom(secretRNG(0, 1, 2, 3)))
	got := h.texts(ann.ID, len(texts))
	require.True(t, strings.HasPrefix(got[0], boardRules), "the board: %s", got[0])
	h.waitBoard(ann.ID, boardRules+"\n\n1. 🍋🍋🍋🍋  ⚪⚪⚪⚪\n2. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ _ _ _ _\n8 of 10 attempts left.")
	require.Equal(t, []string{
		"🍋🍋🍋🍋  ⚪⚪⚪⚪  attempt 1/10",
		"❌ Not a valid guess: 🐶 is not in the palette; use only 🍎 🍌 🍇 🍒 🍋 🥝. No attempt used.",
		"🍎🍌🍒🍇  🟢🟢🟡🟡  attempt 2/10",
		gameui.TextTopEmpty,
	}, got[1:])
	st, err := h.games().Current(ctx, ann.ID)
	require.NoError(t, err)
	require.Equal(t, 2, st.AttemptsUsed(), "each guess applied once")
	h.waitHandledID(second, ann.ID, last)
	n, err := second.app.inbox.Unhandled(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	h.quiet(ann.ID, 300*time.Millisecond)

	// Offsets only ever moved forward, and no getUpdates was refused.
	var prev int64
	for _, r := range h.emu.Requests() {
		if !strings.EqualFold(r.Method, "getUpdates") {
			continue
		}
		require.NotEqual(t, http.StatusConflict, r.HTTPStatus)
		o, _ := strconv.ParseInt(r.Params["offset"], 10, 64)
		require.GreaterOrEqual(t, o, prev)
		prev = o
	}
}

// TestReplayAfterCrashMidHandling: an update whose game move was applied
// but which was not marked handled (a crash in between) is handled again
// without applying the move twice; its journalled reply is sent. An update
// already marked handled is skipped.
func TestReplayAfterCrashMidHandling(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann := user(902, "Ann")
	r := h.startWithSecret(0, 1, 2, 3)
	require.Contains(t, h.ask(0, ann, "/play"), "New code")
	games := h.games()
	before, err := games.Current(ctx, ann.ID)
	require.NoError(t, err)

	u := h.say(0, ann, "🍎🍌🍒🍇")
	h.texts(ann.ID, 2)
	a := r.app
	h.waitHandled(r, u)
	after, err := games.Current(ctx, ann.ID)
	require.NoError(t, err)
	require.Equal(t, 1, after.AttemptsUsed())

	// Rewind to the state of a crash right after the move: the update back
	// on the update queue, its chat's handled mark before it, its journal
	// written.
	r.stop()
	h.rewind(a, u)
	require.NoError(t, a.ui.PlanMove(ctx, u.ID, gameui.Fingerprint(before, true),
		[]update.Reply{{ChatID: ann.ID, Text: "🍎🍌🍒🍇  🟢🟢🟡🟡  attempt 1/10"}}))
	// The crash came before the reply was enqueued: its idempotency key was
	// never recorded.
	require.NoError(t, h.c.Do(ctx, h.c.B().Del().Key(onceKey(h, u.ID, "0")).Build()).Error())

	r2 := h.start(nil)
	got := h.texts(ann.ID, 3)
	require.Equal(t, "🍎🍌🍒🍇  🟢🟢🟡🟡  attempt 1/10", got[2], "the journalled reply is sent")
	h.waitHandledAgain(r2, u)
	// And the same update recorded once more (a batch fetched again, a
	// webhook resend) after it was handled: skipped.
	raw, err := jsonOf(u)
	require.NoError(t, err)
	_, err = r2.app.inbox.Accept(ctx, []intake.Update{{ID: u.ID, JSON: []byte(raw)}})
	require.NoError(t, err)
	h.waitHandledAgain(r2, u)
	h.quiet(ann.ID, 300*time.Millisecond)
	cur, err := games.Current(ctx, ann.ID)
	require.NoError(t, err)
	require.Equal(t, 1, cur.AttemptsUsed(), "the move was not applied twice")
	n, err := h.c.Do(ctx, h.c.B().Exists().Key(a.inbox.Keys().Journal(u.ID)).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "the journal is dropped once the update is handled")
	require.Contains(t, h.logs.String(), "update already handled; skipped")
}

// TestReplayOfAPlayWhoseBoardWasNeverQueuedSendsTheBoard: a /play whose
// game was started by a run that stopped before the board (its reply) was
// queued (a store error in the board hook, a crash; chaos seed 11 by
// webhook lost a reply this way) gets its board when the update is handled
// again, though the move itself is only replayed from its journal.
func TestReplayOfAPlayWhoseBoardWasNeverQueuedSendsTheBoard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann := user(903, "Ann")
	r := h.startWithSecret(0, 1, 2, 3)
	u := h.say(0, ann, "/play")
	first := h.texts(ann.ID, 1)[0]
	require.Contains(t, first, "New code")
	a := r.app
	h.waitHandled(r, u)
	before, err := h.games().Current(ctx, ann.ID)
	require.NoError(t, err)

	// Rewind to the state of a run that started the game and stopped
	// before the board: the update back on the update queue, its journal
	// written (no game before; a /play journals no replies: the board is
	// its hook's), no board recorded for the chat, the board's idempotency
	// key never written.
	r.stop()
	h.rewind(a, u)
	require.NoError(t, a.ui.PlanMove(ctx, u.ID, gameui.Fingerprint(game.State{}, false), nil))
	require.NoError(t, h.c.Do(ctx, h.c.B().Del().Key(a.ui.Keys().Board(ann.ID)).Build()).Error())
	require.NoError(t, h.c.Do(ctx, h.c.B().Del().Key(onceKey(h, u.ID, "board")).Build()).Error())

	r2 := h.start(nil)
	got := h.texts(ann.ID, 2)
	require.Equal(t, first, got[1], "the board is sent for the game the first run started")
	h.waitHandledAgain(r2, u)
	h.quiet(ann.ID, 300*time.Millisecond)
	cur, err := h.games().Current(ctx, ann.ID)
	require.NoError(t, err)
	require.Equal(t, before.ID, cur.ID, "the game was not started twice")
	require.Contains(t, h.logs.String(), "move was applied before a restart")
}

// TestReplayAfterRepliesEnqueued: a crash after an update's replies were
// enqueued (and even sent and acked) but before it was marked handled: the
// update is handled again and its replies are not enqueued a second time
// (idempotency keys derived from update_id and the reply's index).
func TestReplayAfterRepliesEnqueued(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann := user(904, "Ann")
	r := h.start(nil)
	h.waitLeader(r)
	u := h.say(0, ann, "/help")
	help := h.texts(ann.ID, 1)[0]
	a := r.app
	h.waitHandled(r, u)
	n, err := h.c.Do(ctx, h.c.B().Exists().Key(onceKey(h, u.ID, "0")).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "the reply's key is deleted with the handled mark, which makes it needless")
	r.stop()
	h.rewind(a, u) // a crash before the mark: the reply's key is there

	h.waitHandledAgain(h.start(nil), u)
	h.quiet(ann.ID, 500*time.Millisecond)
	require.Equal(t, []string{help}, h.texts(ann.ID, 1), "the reply was not sent twice")
	require.Contains(t, help, "Codemojex")
	require.Contains(t, h.ask(0, ann, "/help"), "Codemojex", "a new update gets its reply")
}

// TestUpdateIDResetSurvivesCrash: a poller records the re-based batch and
// stops before handling it; the next poller handles the update once, even
// though its id is below the highest id handled before the reset.
func TestUpdateIDResetSurvivesCrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann, bob := user(943, "Ann"), user(944, "Bob")
	r := h.startWithHighUpdateID(ann)
	h.waitHandledID(r, ann.ID, 900000000)
	r.stop()

	h.emu.SetNextUpdateID(120000000)
	h.say(0, bob, "/help")
	in := h.start(nil, WithIntakeOnly())
	require.Eventually(t, func() bool { o, _ := in.app.inbox.Offset(ctx); return o == 120000001 }, wait, 10*time.Millisecond,
		"the re-based batch is recorded")
	in.stop()
	require.Empty(t, h.emu.Messages(bob.ID), "not handled yet")

	r2 := h.start(nil)
	require.Contains(t, h.texts(bob.ID, 1)[0], "Codemojex")
	require.Eventually(t, func() bool { n, _ := r2.app.inbox.Unhandled(ctx); return n == 0 }, wait, 10*time.Millisecond)
	h.quiet(bob.ID, 500*time.Millisecond)
	require.Len(t, h.emu.Messages(bob.ID), 1, "handled exactly once")

	// A crash after its reply was enqueued (and sent) but before it was
	// finished: handled again, it enqueues nothing twice (the notifier key
	// names the re-base, so it is not confused with an old id).
	u := h.say(0, bob, "/help")
	require.Len(t, h.texts(bob.ID, 2), 2)
	h.waitHandled(r2, u)
	r2.stop()
	h.rewind(r2.app, u)
	h.waitHandledAgain(h.start(nil), u)
	h.quiet(bob.ID, 500*time.Millisecond)
	require.Len(t, h.emu.Messages(bob.ID), 2, "the reply was not sent twice")
	require.Contains(t, h.ask(0, bob, "/help"), "Codemojex")
}

// TestPoisonUpdateIsDeadLetteredAndItsChatGoesOn: an update whose handler
// always panics is tried DefaultMaxAttempts times and dead-lettered with
// the panic as its reason (shown by /dlq); other chats are answered
// meanwhile, and the chat's next update is handled.
func TestPoisonUpdateIsDeadLetteredAndItsChatGoesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	poisoned, others := user(960, "Poison"), []models.User{user(961, "A"), user(962, "B"), user(963, "C")}
	var tries atomic.Int32
	boom := func(u *models.Update) bool { return u.Message != nil && u.Message.Text == "boom" }
	r := h.start(nil, WithHandler(boom, func(context.Context, *update.Request) update.Outcome {
		tries.Add(1)
		panic("boom handler")
	}))
	h.waitLeader(r)
	h.say(0, poisoned, "boom")
	h.say(0, poisoned, "/help")
	for _, o := range others {
		require.Contains(t, h.ask(0, o, "/start"), "Codemojex", "other chats are answered while the poison update waits")
	}
	got := h.texts(poisoned.ID, 1)
	require.Contains(t, got[0], "Commands:", "the chat's next update is handled once the poison update is dead")
	require.EqualValues(t, intake.DefaultMaxAttempts, tries.Load(), "tried the queue's MaxAttempts times, then never again")
	dead, err := r.app.inbox.Store().Inspector().DeadLetters(ctx, intake.QueueName, lanes.DeadQuery{Newest: 10})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, "panic: boom handler", dead[0].Reason)
	require.Equal(t, strconv.FormatInt(poisoned.ID, 10), dead[0].Group)
	dlq := h.ask(0, user(adminID, "Admin"), "/dlq")
	require.Contains(t, dlq, "panic: boom handler")
	require.Contains(t, dlq, "(update)")
	// The /dlq update is settled after its reply is queued: waited for.
	require.Eventually(t, func() bool { n, err := r.app.inbox.Unhandled(ctx); return err == nil && n == 0 }, wait, 10*time.Millisecond,
		"nothing left unhandled")
	h.quiet(poisoned.ID, 300*time.Millisecond)
}

// TestTwoHandlerProcessesKeepEachChatsOrder: one poller, two handler
// processes and a worker: 1,000 updates from 100 chats (a /play and nine
// guesses each) are each handled once, and every chat's replies come in
// the order of its updates (the attempt numbers count up).
func TestTwoHandlerProcessesKeepEachChatsOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const chats, guesses = 100, 9
	poller := h.start([]string{"BOT_ROLE=poller"})
	h.waitLeader(poller)
	rng := WithRandom(secretRNG(5, 5, 5, 5)) // 🥝🥝🥝🥝: 🍎🍎🍎🍎 never wins
	h1 := h.start([]string{"BOT_ROLE=handler", "HANDLERS=4"}, rng)
	h2 := h.start([]string{"BOT_ROLE=handler", "HANDLERS=4"}, rng)
	h.start([]string{"BOT_ROLE=worker"})
	for i := range guesses + 1 {
		for c := range chats {
			text := "/play"
			if i > 0 {
				text = "🍎🍎🍎🍎"
			}
			h.say(0, user(int64(20_000+c), "P"), text)
		}
	}
	// 1,000 replies: the whole takes 5 s on an idle machine and over 20 s
	// at load 10, so the wait fails on a stall, not on the machine's speed.
	h.waitProgress("replies", chats*(guesses+1), func() int { return len(h.emu.AllMessages()) })
	for c := range chats {
		got := h.texts(int64(20_000+c), guesses+1)
		require.Contains(t, got[0], "New code", "chat %d", c)
		for g := 1; g <= guesses; g++ {
			require.Contains(t, got[g], fmt.Sprintf("attempt %d/10", g), "chat %d: reply %d in order", c, g)
		}
	}
	h.quiet(20_000, 300*time.Millisecond)
	for c := range chats {
		require.Len(t, h.emu.Messages(int64(20_000+c)), guesses+1, "chat %d: each update handled once", c)
	}
	ok := func(r *running) float64 {
		var m dto.Metric
		require.NoError(t, r.app.hm.Handled.WithLabelValues("ok").Write(&m))
		return m.GetCounter().GetValue()
	}
	t.Logf("handled: %v by one handler process, %v by the other", ok(h1), ok(h2))
	require.Equal(t, float64(chats*(guesses+1)), ok(h1)+ok(h2))
	require.Positive(t, ok(h1))
	require.Positive(t, ok(h2))
}

// TestSlowBatchIsHandledOnceInOrderWithinItsLease: a chat of weight 5 has
// six updates whose handler takes 0.4 s each, with HANDLER_LEASE=1s: a
// batch of five takes 2 s, twice the lease. The batch's leases are
// extended while it runs, so no other handler claims the chat's updates
// meanwhile: each is handled exactly once, in order, never two at once.
func TestSlowBatchIsHandledOnceInOrderWithinItsLease(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	slowUser := user(970, "Slow")
	env := []string{"HANDLER_LEASE=1s", "HANDLERS=4"}

	first := h.start(env, WithIntakeOnly())
	h.waitLeader(first)
	require.NoError(t, first.app.inbox.Store().Inspector().SetWeight(ctx, tgjob.Group(slowUser.ID), 5))
	const n = 6
	for i := range n {
		h.say(0, slowUser, fmt.Sprintf("slow %d", i+1))
	}
	require.Eventually(t, func() bool {
		k, err := first.app.inbox.Unhandled(ctx)
		return err == nil && k == n && len(h.emu.PendingUpdates()) == 0
	}, wait, 10*time.Millisecond, "all six recorded before any is handled, so one claim takes five")
	first.stop()

	var (
		mu              sync.Mutex
		order           []int
		running, maxRun atomic.Int32
	)
	slow := func(u *models.Update) bool { return u.Message != nil && strings.HasPrefix(u.Message.Text, "slow ") }
	h.start(env, WithHandler(slow, func(_ context.Context, r *update.Request) update.Outcome {
		u := r.Update
		now := running.Add(1)
		defer running.Add(-1)
		for m := maxRun.Load(); now > m && !maxRun.CompareAndSwap(m, now); m = maxRun.Load() {
		}
		time.Sleep(400 * time.Millisecond)
		k, _ := strconv.Atoi(strings.TrimPrefix(u.Message.Text, "slow "))
		mu.Lock()
		order = append(order, k)
		mu.Unlock()
		return update.Outcome{}
	}))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) >= n
	}, wait, 20*time.Millisecond)
	time.Sleep(1500 * time.Millisecond) // a lapsed lease would be claimed again by now
	mu.Lock()
	defer mu.Unlock()
	t.Logf("order %v, at most %d at once", order, maxRun.Load())
	require.Equal(t, []int{1, 2, 3, 4, 5, 6}, order, "each update handled exactly once, in order")
	require.EqualValues(t, 1, maxRun.Load(), "one chat's updates never run concurrently")
}

// TestStoppingHandlerAcksTheUpdateItFinished: a handler's finished update
// is acked by its next claim; a process stopped while an update is being
// handled finishes it and acks it before it exits (nothing is left in
// flight to wait for its lease).
func TestStoppingHandlerAcksTheUpdateItFinished(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann := user(975, "Ann")
	started := make(chan struct{}, 1)
	slow := func(u *models.Update) bool { return u.Message != nil && u.Message.Text == "slow" }
	r := h.start(nil, WithHandler(slow, func(context.Context, *update.Request) update.Outcome {
		started <- struct{}{}
		time.Sleep(300 * time.Millisecond)
		return update.Outcome{}
	}))
	h.waitLeader(r)
	u := h.say(0, ann, "slow")
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the update was not handled")
	}
	r.stop()
	in := r.app.inbox
	_, mark, err := in.Mark(ctx, strconv.FormatInt(ann.ID, 10))
	require.NoError(t, err)
	require.Equal(t, u.ID, mark, "the update in progress was finished")
	bl, err := in.Backlog(ctx)
	require.NoError(t, err)
	require.Zero(t, bl.InFlight, "its job was acked before the process stopped")
	require.Zero(t, bl.Pending)
}

// An update whose handled mark cannot be written for longer than its lease
// (Valkey refuses writes: OOM) is not acked unmarked: once writes are
// accepted again it is claimed again, handled and marked, and nothing is
// left waiting (no recorded time behind, /healthz 200).
func TestUpdateIsNotAckedUntilMarkedHandled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	_, setMaxmemory := h.onNoEvictionServer()
	gate := make(chan struct{})
	entered := make(chan struct{}, 2)
	var runs atomic.Int32
	hold := func(u *models.Update) bool { return u.Message != nil && u.Message.Text == "/hold" }
	r := h.start([]string{"HANDLERS=1", "HANDLER_LEASE=2s"}, WithUpdateWaitLimit(2*time.Second),
		WithHandler(hold, func(context.Context, *update.Request) update.Outcome {
			runs.Add(1)
			entered <- struct{}{}
			<-gate
			return update.Outcome{}
		}))
	h.waitLeader(r)
	h.say(0, user(990, "Holder"), "/hold")
	<-entered
	setMaxmemory("1")
	close(gate)
	time.Sleep(4 * time.Second) // the mark is given up after HANDLER_LEASE
	require.Contains(t, h.logs.String(), "update not settled within its lease")
	setMaxmemory("0")

	require.Eventually(t, func() bool {
		n, err := r.app.inbox.Unhandled(ctx)
		return err == nil && n == 0
	}, wait, 20*time.Millisecond, "no recorded time left behind")
	_, mark, err := r.app.inbox.Mark(ctx, "990")
	require.NoError(t, err)
	require.NotZero(t, mark, "marked handled")
	require.Equal(t, int32(2), runs.Load(), "handled again once, after the unmarked run")
	require.Eventually(t, func() bool { c, _ := h.get(r, "/healthz"); return c == http.StatusOK }, wait, 50*time.Millisecond)
	require.Eventually(t, func() bool { // the lane's ack follows the handled mark
		bl, err := r.app.inbox.Backlog(ctx)
		return err == nil && bl.Pending+bl.InFlight == 0
	}, wait, 10*time.Millisecond, "the update queue empty")
}

// A handled update records its chat in the broadcast audience and clears
// the inactive mark of the chat and of the chat it migrated to (the chat
// bookkeeping, one pipeline before any handler runs).
func TestHandledUpdateRecordsItsChatAndClearsInactiveMarks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann := user(952, "Ann")
	r := h.start(nil)
	chats := r.app.notifier.Chats()
	const moved = int64(-1009520)
	require.NoError(t, chats.SetAlias(ctx, ann.ID, moved))
	for _, id := range []int64{ann.ID, moved, 953} {
		require.NoError(t, chats.MarkInactive(ctx, id))
	}
	known, err := r.app.audience.Chats(ctx)
	require.NoError(t, err)
	require.NotContains(t, known, ann.ID)

	h.waitHandled(r, h.say(0, ann, "hello"))
	known, err = r.app.audience.Chats(ctx)
	require.NoError(t, err)
	require.Contains(t, known, ann.ID)
	for id, want := range map[int64]bool{ann.ID: false, moved: false, 953: true} {
		in, err := chats.IsInactive(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, in, "chat %d inactive", id)
	}
}
