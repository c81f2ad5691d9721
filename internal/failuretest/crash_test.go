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

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// The app's intake keys (docs/keys.md, tag lanes.DefaultTag): read, not
// written, except the poller lease, whose expiry the crash test brings
// forward.
const (
	inboxUnhandled = "{" + lanes.DefaultTag + "}:app:in:rec"
	inboxOffset    = "{" + lanes.DefaultTag + "}:app:in:offset"
	pollerLease    = "{" + lanes.DefaultTag + "}:app:poller"
)

// Group rate of the crash test (messages/min per group): replies in groups
// carry reply_to_message_id, which ties each reply to its update.
const crashGroupRate = 1200

// testKilledMidHandling: the process handling a burst of updates it has
// fetched is killed with SIGKILL (split, a BOT_ROLE=handler process beside
// a poller and a worker process; else the whole bot, BOT_ROLE=all), and
// another one is started: every update is handled exactly once. Each update is a command
// in one of several groups, from several users: /play, /guess (the game's
// attempt counter numbers the guesses actually applied) or /help; every
// reply answers (reply_to_message_id) the message of its update, so replies
// are counted per update. Replies are keyed by update and index, so the
// only duplicates the design allows are sends in flight (delivered, not
// acknowledged) at the kill.
func testKilledMidHandling(t *testing.T, bin string, split bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := valkeytest.StartMode(t, valkeytest.Options{})
	emu := testkit.NewEmulator(t, tgemu.WithLimits(tgemu.ScaledLimits(globalRate, chatRate, crashGroupRate)), tgemu.WithAllowAnyChat())
	testkit.Require429sAtEnd(t, emu, 0)
	p := newProducer(t, srv)
	groupRate := "TELEGRAM_GROUP_RATE=" + strconv.Itoa(crashGroupRate)
	env := append([]string{groupRate}, longLeases...)

	// 6 groups × 10 updates, interleaved: per group /play, then 6 guesses
	// and 3 /help (9 moves < 10 attempts: the game cannot be lost).
	const groups, perGroup = 6, 10
	script := []string{"play", "guess", "help", "guess", "guess", "help", "guess", "guess", "help", "guess"}
	var ups []sentUpdate
	guesses := map[int64]int{}
	for i := range perGroup {
		for g := range groups {
			chat := -100_000 - int64(g)
			user := int64(7000 + 10*g + i%3) // three players per group
			kind := script[i]
			text := "/" + kind
			su := sentUpdate{chat: chat, kind: kind}
			if kind == "guess" {
				text += " 🍎🍎🍎🍎"
				guesses[chat]++
				su.guess = guesses[chat]
			}
			u, err := emu.InjectMessage(tgemu.TextMessage{ChatID: chat, From: models.User{ID: user, FirstName: fmt.Sprintf("P%d", user)}, Text: text})
			require.NoError(t, err)
			su.msgID, su.id = u.Message.ID, u.ID
			ups = append(ups, su)
		}
	}
	last := ups[len(ups)-1].id

	// Telegram answers each sendMessage 300 ms after taking it: the kill
	// lands with replies delivered but not acknowledged.
	emu.InjectFault(tgemu.Delay(300 * time.Millisecond).For("sendMessage").Processed().Times(-1))
	role := "all"
	if split {
		role = "handler"
		startBot(t, bin, "poller", "poller", srv, emu, env...)
		startBot(t, bin, "worker", "worker", srv, emu, env...)
	}
	b1 := startBot(t, bin, "bot-1", role, srv, emu, env...)

	// Kill as soon as 10 updates are handled: the first getUpdates batch
	// (all 60) is recorded, most of it not handled yet.
	const killAt = 10
	var before inboxState
	var err error
	for {
		before, err = readInbox(ctx, p.c)
		if err == nil && before.Offset == last+1 && int64(len(ups))-before.Unhandled >= killAt {
			break
		}
		if b1.Exited() {
			t.Fatalf("bot-1 exited: %v", b1.ExitErr())
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the bot did not handle %d updates: inbox %+v, err %v", killAt, before, err)
		case <-time.After(time.Millisecond):
		}
	}
	b1.Kill()
	emu.ClearFaults()
	atKill, err := readInbox(ctx, p.c)
	require.NoError(t, err)
	sendsInFlight, err := p.inFlight(ctx)
	require.NoError(t, err)
	repliesAtKill := len(emu.AllMessages())
	unconfirmed := len(emu.PendingUpdates())
	handledAtKill := int64(len(ups)) - atKill.Unhandled
	t.Logf("kill -9 of a %s process with %d of %d updates handled (offset %d, %d recorded and not handled; %d not confirmed to Telegram); %d replies delivered, %d sends in flight",
		role, handledAtKill, len(ups), atKill.Offset, atKill.Unhandled, unconfirmed, repliesAtKill, sendsInFlight)
	require.Positive(t, atKill.Unhandled, "the kill landed mid-handling: recorded updates were waiting")

	if !split {
		// The dead process's poller lease runs out (15 s) before another
		// process polls; bring its expiry forward instead of waiting.
		require.NoError(t, p.c.Do(ctx, p.c.B().Pexpire().Key(pollerLease).Milliseconds(1).Build()).Error())
	}
	t0 := time.Now()
	b2 := startBot(t, bin, "bot-2", role, srv, emu, env...)

	replies := func(u sentUpdate) []tgemu.Message {
		var out []tgemu.Message
		for _, m := range emu.Messages(u.chat) {
			if m.ReplyToMessageID == u.msgID {
				out = append(out, m)
			}
		}
		return out
	}
	var missing int
	if err := poll(ctx, func() bool {
		missing = 0
		for _, u := range ups {
			if len(replies(u)) == 0 {
				missing++
			}
		}
		return missing == 0
	}); err != nil {
		t.Fatalf("%d of %d updates got no reply after the restart: %v", missing, len(ups), err)
	}
	took := time.Since(t0)
	dead := p.settled(ctx, t)
	var after inboxState
	require.NoError(t, poll(ctx, func() bool {
		after, err = readInbox(ctx, p.c)
		return err == nil && after.Offset == last+1 && after.Unhandled == 0
	}), "every update handled: %+v, %v", after, err)
	// A dead claimer's send is sent again within recoveryWait of the
	// kill: wait that long before counting duplicates.
	time.Sleep(time.Until(t0.Add(recoveryWait)))

	var lost, dups, wrong, handled int
	var problems []string
	for _, u := range ups {
		rs := replies(u)
		if len(rs) == 0 {
			lost++
			problems = append(problems, fmt.Sprintf("update %d (%s in %d): no reply", u.id, u.kind, u.chat))
			continue
		}
		handled++
		dups += len(rs) - 1
		for _, r := range rs[1:] {
			if r.Text != rs[0].Text {
				wrong++
				problems = append(problems, fmt.Sprintf("update %d: two different replies %q and %q", u.id, rs[0].Text, r.Text))
			}
		}
		txt := rs[0].Text
		var ok bool
		switch u.kind {
		case "play":
			ok = strings.Contains(txt, "New code")
		case "help":
			ok = strings.Contains(txt, "Commands:")
		case "guess":
			// The attempt number is the guess's place among the applied
			// guesses: a guess applied twice or lost shifts the next ones.
			m := attemptRE.FindStringSubmatch(txt)
			ok = m != nil && m[1] == strconv.Itoa(u.guess)
			if !ok && strings.Contains(txt, "🟢🟢🟢🟢") {
				ok = true // the secret was 🍎🍎🍎🍎 (1 in 1296): won
			}
		}
		if !ok {
			wrong++
			problems = append(problems, fmt.Sprintf("update %d (%s #%d in %d): reply %q", u.id, u.kind, u.guess, u.chat, txt))
		}
	}
	t.Logf("after the restart (all replied in %v): %d updates, %d handled, %d lost, %d duplicate replies (%d sends in flight at the kill), %d wrong, dead letters %d",
		took.Round(time.Millisecond), len(ups), handled, lost, dups, sendsInFlight, wrong, dead)
	require.Empty(t, problems)
	require.Zero(t, lost, "lost updates")
	require.Zero(t, wrong, "updates applied twice or answered wrongly")
	require.LessOrEqual(t, dups, sendsInFlight, "duplicate replies are at most the sends in flight at the kill")
	require.Zero(t, dead, "dead letters")
	require.Equal(t, len(ups), len(emu.AllMessages())-dups, "no reply nobody asked for")
	require.NoError(t, poll(ctx, func() bool { return len(emu.PendingUpdates()) == 0 }), "every update confirmed to Telegram")
	require.False(t, b2.Exited(), "the restarted bot is still running: %v", b2.ExitErr())
}
