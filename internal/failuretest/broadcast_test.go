package failuretest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// The broadcast scenario's admin and rate: 1,000 bulk messages/s (the
// bot's and the emulator's), so its 50,000 copies take a minute or two,
// not the 1,000 s of the other scenarios' 50/s.
const (
	bcAdmin = 9001
	bcRate  = 1000
)

// testBroadcastKilled: a lazy broadcast to 50,000 chats (issue 27), with
// split roles (a poller, a handler and a worker process): the handler
// that started it is killed with SIGKILL while it is still handling the
// ✅ Send tap (its answerCallbackQuery held by the emulator), and, a
// quarter of the way, the worker that sends the copies and makes them
// (the broadcast filler runs beside it) is killed with sends in flight
// (Telegram answering 500 ms after taking each). A new handler and a new
// worker take over: every chat receives the copy, the duplicates are at
// most the sends in flight at the worker's kill, the tap started one
// broadcast (one progress message), and the counts are those delivered.
// The leases (90 s) outlast every wait's stall limit (stallAfter): the
// killed processes' work is taken over by the recovery of dead claimers.
func testBroadcastKilled(t *testing.T, bin string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{})
	emu := testkit.NewEmulator(t, tgemu.WithLimits(tgemu.ScaledLimits(bcRate, chatRate, 20)), tgemu.WithAllowAnyChat())
	testkit.Require429sAtEnd(t, emu, 0)
	p := newProducer(t, srv)
	const chatsN, first = 50_000, int64(1_000_000)
	testkit.AddAudience(t, p.c, lanes.DefaultTag, nil, first, chatsN-1) // and the admin's chat
	env := append([]string{"TELEGRAM_GLOBAL_RATE=" + strconv.Itoa(bcRate), "ADMIN_IDS=" + strconv.Itoa(bcAdmin)}, longLeases...)
	startBot(t, bin, "poller", "poller", srv, emu, env...)
	h1 := startBot(t, bin, "handler-1", "handler", srv, emu, env...)
	w1 := startBot(t, bin, "worker-1", "worker", srv, emu, env...)

	const text = "📣 through two kills"
	admin := models.User{ID: bcAdmin, FirstName: "Admin"}
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: bcAdmin, From: admin, Text: "/broadcast " + text})
	require.NoError(t, err)
	var pv tgemu.Message
	require.NoError(t, pollStalled(ctx, "the preview", func() (bool, string) {
		for _, m := range emu.Messages(bcAdmin) {
			if strings.HasPrefix(m.Text, "📣 Broadcast preview.") {
				pv = m
				return true, ""
			}
		}
		return false, ""
	}))
	_, buttons := testkit.Keyboard(t, pv.ReplyMarkup)
	require.Contains(t, buttons, "✅ Send")
	// The handler answers the tap last: held there, it is killed with
	// the broadcast started and the tap not finished.
	emu.InjectFault(tgemu.Delay(time.Minute).For("answerCallbackQuery").Times(-1))
	tap, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: bcAdmin, MessageID: pv.ID, From: admin, Data: buttons["✅ Send"]})
	require.NoError(t, err)
	pid := strings.Split(tap.CallbackQuery.Data, "|")[1]
	var id string
	require.NoError(t, pollStalled(ctx, "the broadcast started", func() (bool, string) {
		id, _ = p.c.Do(ctx, p.c.B().Hget().Key(broadcast.NewKeys(lanes.DefaultTag).Preview(pid)).Field("bc").Build()).ToString()
		return id != "", ""
	}))
	h1.Kill()
	tapPending, err := readInbox(ctx, p.c)
	require.NoError(t, err)
	emu.ClearFaults()
	pr, err := p.n.Progress(ctx, id)
	require.NoError(t, err)
	t.Logf("kill -9 of the handler that started broadcast %s: %d of %d copies sent, %d updates unhandled", id, pr.Sent, pr.Total, tapPending.Unhandled)
	require.Equal(t, chatsN, pr.Total)
	require.Positive(t, tapPending.Unhandled, "the kill landed while the tap was being handled")
	startBot(t, bin, "handler-2", "handler", srv, emu, env...)

	// A quarter of the way: sends in flight (answered 500 ms after they
	// are taken), then the worker's kill.
	require.NoError(t, pollProgress(ctx, p.n, id, func(pr notifier.Progress) bool { return pr.Sent >= chatsN/4 }))
	emu.InjectFault(tgemu.Delay(500 * time.Millisecond).For("sendMessage").Processed().Times(-1))
	time.Sleep(300 * time.Millisecond)
	inFlight, err := p.inFlight(ctx)
	require.NoError(t, err)
	w1.Kill()
	emu.ClearFaults()
	if after, err := p.inFlight(ctx); err == nil {
		inFlight = max(inFlight, after)
	}
	pr, err = p.n.Progress(ctx, id)
	require.NoError(t, err)
	t.Logf("kill -9 of the worker: %d of %d copies sent, %d sends in flight, walking %v", pr.Sent, pr.Total, inFlight, pr.Walking)
	require.True(t, pr.Walking, "the worker was killed mid-walk: copies still to be made")
	t0 := time.Now()
	w2 := startBot(t, bin, "worker-2", "worker", srv, emu, env...)

	require.NoError(t, pollProgress(ctx, p.n, id, notifier.Progress.Done))
	dead := p.settled(ctx, t)
	// A dead claimer's send is sent again within recoveryWait of the
	// kill: wait that long before counting duplicates.
	time.Sleep(time.Until(t0.Add(recoveryWait)))
	pr, err = p.n.Progress(ctx, id)
	require.NoError(t, err)
	var lost, dups int
	for i := range int64(chatsN - 1) {
		n := testkit.CopiesIn(emu, first+i, text)
		if n == 0 {
			lost++
		}
		dups += max(n-1, 0)
	}
	adminCopies := testkit.CopiesIn(emu, bcAdmin, text)
	var progress []tgemu.Message
	for _, m := range emu.Messages(bcAdmin) {
		if strings.HasPrefix(m.Text, "📣 Broadcast:") || strings.HasPrefix(m.Text, "✅ Broadcast done:") {
			progress = append(progress, m)
		}
	}
	t.Logf("after the restarts: %d chats, %d lost, %d duplicates (%d sends in flight at the worker's kill), progress sent %d failed %v, dead letters %d",
		chatsN, lost, dups, inFlight, pr.Sent, pr.Failed, dead)
	require.Zero(t, lost, "every chat received the copy")
	require.Equal(t, 1, adminCopies, "the admin's chat too")
	require.LessOrEqual(t, dups, inFlight, "duplicates are at most the sends in flight at the kill")
	require.Equal(t, chatsN, pr.Sent, "each chat's copy counted once")
	require.Empty(t, pr.Failed)
	require.Zero(t, dead, "dead letters")
	require.Len(t, progress, 1, "the tap handled again started nothing more: one progress message")
	final := fmt.Sprintf("✅ Broadcast done: %d sent, 0 failed", chatsN)
	require.NoError(t, pollStalled(ctx, "the progress message's final counts", func() (bool, string) {
		for _, m := range emu.Messages(bcAdmin) {
			if m.ID == progress[0].ID {
				return strings.HasPrefix(m.CurrentText(), final), m.CurrentText()
			}
		}
		return false, ""
	}))
	require.False(t, w2.Exited(), "the new worker is still running: %v", w2.ExitErr())
}

// stallAfter is how long a wait of the broadcast scenario goes without
// progress before it fails: it never fails for the time the whole takes,
// which a loaded machine stretches.
const stallAfter = 30 * time.Second

// pollStalled evaluates cond every 50 ms until it is done; it fails when
// the state cond reports has not changed for stallAfter.
func pollStalled(ctx context.Context, what string, cond func() (done bool, state string)) error {
	var last string
	moved := time.Now()
	for {
		done, state := cond()
		if done {
			return nil
		}
		if state != last {
			last, moved = state, time.Now()
		}
		if time.Since(moved) > stallAfter {
			return fmt.Errorf("%s: no progress for %v: %s", what, stallAfter, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pollProgress waits (pollStalled) until broadcast id's progress satisfies
// done.
func pollProgress(ctx context.Context, n *notifier.Notifier, id string, done func(notifier.Progress) bool) error {
	return pollStalled(ctx, "broadcast "+id, func() (bool, string) {
		p, err := n.Progress(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		return done(p), fmt.Sprintf("%+v", p)
	})
}
