package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// The cast: chat ids by role.
const (
	groupsFirst   = -100_000 // groups -100000, -100001, ...; three players each
	tappersFirst  = 9100
	flooderID     = 9900
	rushFirst     = 20_000 // rush k, player i: rushFirst + 100k + i
	audienceFirst = 100_000
	groups        = 6
	tappers       = 3
	rushSize      = 20
	floodSize     = 40
	// groupScript is one round of a group's game: 6 guesses (a game has
	// 10 attempts: it cannot be lost), 2 /help, then /giveup, so the next
	// /play starts a new game.
	groupRound = "play guess guess help guess guess help guess guess giveup"
)

// sentUpdate is one injected group message and what its reply must say.
type sentUpdate struct {
	chat  int64
	msgID int
	id    int64  // update_id
	kind  string // play, guess, help, giveup
	round int    // the round of the group's game (groupRound)
	guess int    // 1-based guess number in its round (kind guess)
	at    time.Time
}

// load drives the players and records what they sent.
type load struct {
	st    *stack
	seed  uint64
	d     time.Duration
	logf  func(format string, args ...any)
	mu    sync.Mutex
	group []sentUpdate
	rush  []int64  // rush players (one /start each)
	taps  []string // callback query ids
	flood int      // the flooder's messages
	// The admin's broadcast: its marker (in every copy), whether Send was
	// answered, and the audience it must reach.
	marker    string
	sendTaps  int
	sent      bool
	audienceN int
	// The admin's paid broadcast (allow_paid_broadcast, 💫 Send paid),
	// after the free one: its marker and whether its Send was answered.
	paidMarker string
	paidSent   bool
	// paid is how the paid broadcast goes (drawPaid), and paidAt what the
	// admin saw of it (a halt and the answer to ▶️ Continue free or 🛑 Stop).
	paid   paidScenario
	paidAt paidActs
	// balance is the Stars balance (tenths) the paid broadcast's Send was
	// tapped with: what the emulator may charge for it.
	balance int64
	errs    []string // what the players could not do (an answer never came)
}

func (l *load) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 50 {
		l.errs = append(l.errs, fmt.Sprintf(format, args...))
	}
}

// run plays until ctx ends (the run's duration): every player in its own
// goroutine, all stopped then.
func (l *load) run(ctx context.Context) {
	var wg sync.WaitGroup
	for g := range groups {
		wg.Go(func() { l.groupPlayers(ctx, int64(groupsFirst-g), uint64(g)) })
	}
	for i := range tappers {
		wg.Go(func() { l.tapper(ctx, int64(tappersFirst+i), uint64(100+i)) })
	}
	rng := rand.New(rand.NewPCG(l.seed, 0x72757368))
	rushes := max(2, int(l.d/time.Minute))
	for k := range rushes {
		at := between(rng, 2*time.Second, max(3*time.Second, l.d-settleMargin(l.d)))
		wg.Go(func() { l.startRush(ctx, at, k) })
	}
	floodAt := between(rng, l.d/5, l.d/2)
	wg.Go(func() { l.flooder(ctx, floodAt) })
	wg.Go(func() { l.admin(ctx) })
	wg.Wait()
}

func (l *load) emu() *tgemu.Emulator { return l.st.emu }

// groupPlayers: three players in group chat typing the game's rounds at a
// human pace (0.4-1.4 s between messages), until ctx ends.
func (l *load) groupPlayers(ctx context.Context, chat int64, stream uint64) {
	rng := rand.New(rand.NewPCG(l.seed, stream))
	palette := game.DefaultConfig().Palette
	for round := 1; ; round++ {
		guess := 0
		for kind := range strings.FieldsSeq(groupRound) {
			sleep(ctx, between(rng, 400*time.Millisecond, 1400*time.Millisecond))
			if ctx.Err() != nil {
				return
			}
			user := -chat*10 + int64(rng.IntN(3))
			text := "/" + kind
			su := sentUpdate{chat: chat, kind: kind, round: round}
			if kind == "guess" {
				guess++
				su.guess = guess
				var b strings.Builder
				for range 4 {
					b.WriteString(palette[rng.IntN(len(palette))])
				}
				text += " " + b.String()
			}
			u, err := l.emu().InjectMessage(tgemu.TextMessage{ChatID: chat, Text: text,
				From: models.User{ID: user, FirstName: fmt.Sprintf("P%d", user)}})
			if err != nil {
				l.fail("group %d: inject %q: %v", chat, text, err)
				continue
			}
			su.msgID, su.id, su.at = u.Message.ID, u.ID, time.Now()
			l.mu.Lock()
			l.group = append(l.group, su)
			l.mu.Unlock()
		}
	}
}

// say injects text from user in their private chat.
func (l *load) say(user int64, text string) (models.Update, error) {
	return l.emu().InjectMessage(tgemu.TextMessage{ChatID: user, From: models.User{ID: user, FirstName: fmt.Sprintf("U%d", user)}, Text: text})
}

// waitFor polls cond every 50 ms for at most d; false when it never held.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// board is chat's latest inline keyboard (the last bot message with one,
// as last edited): the message id and each label's callback data.
func board(emu *tgemu.Emulator, chat int64) (int, map[string]string) {
	msgs := emu.Messages(chat)
	for i := len(msgs) - 1; i >= 0; i-- {
		markup := msgs[i].ReplyMarkup
		if n := len(msgs[i].Edits); n > 0 {
			markup = msgs[i].Edits[n-1].ReplyMarkup
		}
		if markup == "" {
			continue
		}
		var kb models.InlineKeyboardMarkup
		if json.Unmarshal([]byte(markup), &kb) != nil {
			return 0, nil
		}
		data := map[string]string{}
		for _, row := range kb.InlineKeyboard {
			for _, b := range row {
				data[b.Text] = b.CallbackData
			}
		}
		return msgs[i].ID, data
	}
	return 0, nil
}

// answered reports whether query id got an accepted answer.
func answered(emu *tgemu.Emulator, id string) bool {
	return slices.ContainsFunc(emu.CallbackAnswers(), func(a tgemu.CallbackAnswer) bool { return a.QueryID == id })
}

// tap presses the first of labels on chat's board and waits up to 10 s
// for the answer; false when there was no such button.
func (l *load) tap(ctx context.Context, chat int64, labels ...string) bool {
	msg, data := board(l.emu(), chat)
	for _, label := range labels {
		if d, ok := data[label]; ok {
			u, err := l.emu().InjectCallbackQuery(tgemu.CallbackQuery{ChatID: chat, MessageID: msg,
				From: models.User{ID: chat, FirstName: fmt.Sprintf("U%d", chat)}, Data: d})
			if err != nil {
				l.fail("chat %d: tap %q: %v", chat, label, err)
				return false
			}
			l.mu.Lock()
			l.taps = append(l.taps, u.CallbackQuery.ID)
			l.mu.Unlock()
			waitFor(ctx, 10*time.Second, func() bool { return answered(l.emu(), u.CallbackQuery.ID) })
			return true
		}
	}
	return false
}

// tapper: a private chat playing with the board's buttons (four palette
// taps, then ✅) at a human pace; /play when the board has no palette.
func (l *load) tapper(ctx context.Context, chat int64, stream uint64) {
	rng := rand.New(rand.NewPCG(l.seed, stream))
	palette := game.DefaultConfig().Palette
	if _, err := l.say(chat, "/start"); err != nil {
		l.fail("tapper %d: %v", chat, err)
	}
	for ctx.Err() == nil {
		before := len(l.emu().Messages(chat))
		if _, err := l.say(chat, "/play"); err != nil {
			l.fail("tapper %d: %v", chat, err)
			return
		}
		if !waitFor(ctx, 20*time.Second, func() bool { return len(l.emu().Messages(chat)) > before }) {
			continue
		}
		for ctx.Err() == nil {
			ok := true
			for range 4 {
				sleep(ctx, between(rng, 300*time.Millisecond, 700*time.Millisecond))
				ok = ok && ctx.Err() == nil && l.tap(ctx, chat, palette[rng.IntN(len(palette))])
			}
			sleep(ctx, between(rng, 300*time.Millisecond, 700*time.Millisecond))
			if !ok || ctx.Err() != nil || !l.tap(ctx, chat, "✅", "☑️") {
				break // the game is over (no palette): a new one
			}
		}
	}
}

// startRush: rushSize new users send /start at once, at.
func (l *load) startRush(ctx context.Context, at time.Duration, k int) {
	sleep(ctx, at)
	if ctx.Err() != nil {
		return
	}
	l.logf("load: /start rush %d of %d users at %.1fs", k, rushSize, at.Seconds())
	for i := range rushSize {
		user := int64(rushFirst + 100*k + i)
		if _, err := l.say(user, "/start"); err != nil {
			l.fail("rush user %d: %v", user, err)
			continue
		}
		l.mu.Lock()
		l.rush = append(l.rush, user)
		l.mu.Unlock()
	}
}

// flooder: one user sends floodSize /help 10 ms apart (the intake's flood
// limits drop most: docs/floods.md).
func (l *load) flooder(ctx context.Context, at time.Duration) {
	sleep(ctx, at)
	l.logf("load: flooder sends %d messages at %.1fs", floodSize, at.Seconds())
	for range floodSize {
		if ctx.Err() != nil {
			return
		}
		if _, err := l.say(flooderID, "/help"); err == nil {
			l.mu.Lock()
			l.flood++
			l.mu.Unlock()
		}
		sleep(ctx, 10*time.Millisecond)
	}
}

// admin: /start, then raises the first group's weight, then previews a
// free broadcast to everyone and taps its ✅ Send free, then previews a
// paid one to everyone and taps its 💫 Send paid, or 💫 N paid, rest free
// (each again if unanswered), l.d/10 apart, as the run's paid scenario
// says (l.paid), and answers its halt (onHalt).
func (l *load) admin(ctx context.Context) {
	if _, err := l.say(adminID, "/start"); err != nil {
		l.fail("admin: %v", err)
	}
	sleep(ctx, l.d/10)
	before := len(l.emu().Messages(adminID))
	if _, err := l.say(adminID, fmt.Sprintf("/weight %d 5", groupsFirst)); err != nil {
		l.fail("admin: %v", err)
	}
	if !waitFor(ctx, 60*time.Second, func() bool { return len(l.emu().Messages(adminID)) > before }) {
		l.fail("admin: /weight never answered")
	}
	sleep(ctx, l.d/10)
	if l.broadcast(ctx, l.marker, "✅ Send free", func() {}) {
		l.mu.Lock()
		l.sent = true
		l.mu.Unlock()
	}
	sleep(ctx, l.d/10)
	if ctx.Err() != nil {
		return
	}
	send, spend := "💫 Send paid", func() {}
	switch l.paid {
	case paidPart:
		// The balance covers part: the preview offers 💫 N paid, rest free.
		l.setBalance(shortBalance(l.audienceN))
		send = paidRestFree
	case paidHaltFree, paidHaltStop:
		// Enough when the preview is made, spent elsewhere before the tap:
		// it runs out mid-broadcast (the halt).
		spend = func() { l.setBalance(shortBalance(l.audienceN)) }
	}
	if l.broadcast(ctx, l.paidMarker, send, spend) {
		l.mu.Lock()
		l.paidSent = true
		l.mu.Unlock()
	}
	l.onHalt(ctx)
}

// setBalance sets the emulator's Stars balance to tenths and records it.
func (l *load) setBalance(tenths int64) {
	l.emu().SetStarBalance(tenths)
	l.mu.Lock()
	l.balance = tenths
	l.mu.Unlock()
}

// paidScenario is how a run's paid broadcast goes, drawn from its seed
// (drawPaid).
type paidScenario string

const (
	// paidCovered: the balance covers every copy (💫 Send paid).
	paidCovered paidScenario = "covered"
	// paidHaltFree: the balance covers every copy when the preview is
	// made and half the audience when 💫 Send paid is tapped: it runs out
	// mid-broadcast, the paid queue halts, the admin taps ▶️ Continue free.
	paidHaltFree paidScenario = "halt-free"
	// paidHaltStop: as paidHaltFree, then 🛑 Stop.
	paidHaltStop paidScenario = "halt-stop"
	// paidPart: the balance covers half the audience when the preview is
	// made: the admin taps 💫 N paid, rest free.
	paidPart paidScenario = "part"
)

// paidScenarios are the scenarios drawPaid draws from, equally likely.
var paidScenarios = []paidScenario{paidCovered, paidHaltFree, paidHaltStop, paidPart}

// paidStreamID is the random stream of a seed (PCG's second word) the
// paid broadcast's scenario is drawn from ("paid"), a stream of its own:
// a seed still draws the faults and the load it drew before.
const paidStreamID = 0x70616964

// drawPaid is seed's paid scenario, each of paidScenarios equally likely.
func drawPaid(seed uint64) paidScenario {
	return paidScenarios[rand.New(rand.NewPCG(seed, paidStreamID)).IntN(len(paidScenarios))]
}

// shortBalance is the Stars balance (tenths of a Star: copies) of the
// scenarios whose balance runs out: half the known audience, so the paid
// broadcast (the audience and the cast) runs out about halfway.
func shortBalance(audience int) int64 { return int64(audience / 2) }

// paidRestFree ends the label of the preview's capped send ("💫 N paid,
// rest free").
const paidRestFree = " paid, rest free"

// paidActs is what the admin saw of the paid broadcast after its Send:
// when the halt notice came (zero: none), and the answer to its ▶️
// Continue free or 🛑 Stop that acted (Ack: when it was accepted; zero
// when none did), its text and which button it was.
type paidActs struct {
	Notice time.Time
	Ack    time.Time
	Answer string
	Choice string
}

// haltNotice begins the bot's notice that the paid queue halted.
const haltNotice = "⚠️ Paid broadcast"

// onHalt: the admin's answer to a halt of the paid broadcast. In the halt
// scenarios it waits for the halt notice (up to 3 minutes, past the
// load's end: a halted broadcast waits for the admin) and taps ▶️
// Continue free, or 🛑 Stop for paidHaltStop; in the others a halt (a
// copy sent paid twice spends the balance meant for another) is answered
// ▶️ Continue free, watched until the paid progress says done.
func (l *load) onHalt(ctx context.Context) {
	if l.paid == paidCovered {
		return
	}
	var notice tgemu.Message
	noticed := func() bool {
		for _, m := range l.emu().Messages(adminID) {
			if strings.HasPrefix(m.Text, haltNotice) {
				notice = m
				return true
			}
			if l.paid == paidPart && strings.Contains(m.Text, "\n💫 Paid") && strings.HasPrefix(m.CurrentText(), "✅ Broadcast done") {
				return true
			}
		}
		return false
	}
	// The rest of the load, then 3 minutes past its end (was: 3 minutes
	// from the paid broadcast's start, so a halt late in a 10-minute run,
	// its notice behind a free broadcast on a bulk budget at its floor,
	// was never answered: chaos row 50).
	found := waitFor(ctx, 24*time.Hour, noticed) || waitFor(context.WithoutCancel(ctx), 3*time.Minute, noticed)
	switch {
	case !found && l.paid != paidPart:
		l.fail("admin: the paid broadcast's halt notice never came (%s)", l.paid)
		return
	case notice.ID == 0:
		return
	}
	l.logf("load: the paid broadcast halted (%s): %q", l.paid, notice.Text)
	choice := "▶️ Continue free"
	if l.paid == paidHaltStop {
		choice = "🛑 Stop"
	}
	l.mu.Lock()
	l.paidAt.Notice, l.paidAt.Choice = notice.Time, choice
	l.mu.Unlock()
	var kb models.InlineKeyboardMarkup
	if json.Unmarshal([]byte(notice.ReplyMarkup), &kb) != nil {
		l.fail("admin: the halt notice's buttons: %q", notice.ReplyMarkup)
		return
	}
	data := ""
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if b.Text == choice {
				data = b.CallbackData
			}
		}
	}
	if data == "" {
		l.fail("admin: the halt notice has no %s: %q", choice, notice.ReplyMarkup)
		return
	}
	// Answered within 3 minutes of the notice, past the load's end too.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	l.answerHalt(actx, notice.ID, choice, data)
}

// answerHalt taps choice (its callback data) on the halt notice msg until
// an answer says it acted (▶️ … continues free, 🛑 … stopped) or that an
// earlier tap did (its answer lost to a fault), at most 10 times, 3 s
// apart when the answer asks to wait (paid copies still being sent) or
// never comes; what acted is recorded in l.paidAt.
func (l *load) answerHalt(ctx context.Context, msg int, choice, data string) {
	for try := 0; try < 10 && ctx.Err() == nil; try++ {
		u, err := l.emu().InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: msg,
			From: models.User{ID: adminID, FirstName: "Admin"}, Data: data})
		if err != nil {
			l.fail("admin: tap %s: %v", choice, err)
			return
		}
		id := u.CallbackQuery.ID
		l.mu.Lock()
		l.taps = append(l.taps, id)
		l.mu.Unlock()
		var a tgemu.CallbackAnswer
		if waitFor(ctx, 20*time.Second, func() bool {
			for _, x := range l.emu().CallbackAnswers() {
				if x.QueryID == id {
					a = x
					return true
				}
			}
			return false
		}) {
			l.logf("load: admin's %s answered (tap %d): %q", choice, try+1, a.Text)
			if strings.Contains(a.Text, "continues free") || strings.Contains(a.Text, "stopped") {
				l.mu.Lock()
				l.paidAt.Ack, l.paidAt.Answer = a.Time, a.Text
				l.mu.Unlock()
				return
			}
		}
		sleep(ctx, 3*time.Second)
	}
	l.fail("admin: %s never acted on the halted paid broadcast", choice)
}

// broadcast previews a broadcast of text and taps the preview's button
// labelled send (at most 3 times, until one tap is answered); true when a
// tap was answered. What does not come is a player's failure (l.fail).
func (l *load) broadcast(ctx context.Context, text, send string, beforeTap func()) bool {
	before := len(l.emu().Messages(adminID))
	l.logf("load: admin previews the broadcast %q", text)
	if _, err := l.say(adminID, "/broadcast "+text); err != nil {
		l.fail("admin: %v", err)
		return false
	}
	var msg int
	var data map[string]string
	if !waitFor(ctx, 60*time.Second, func() bool {
		if len(l.emu().Messages(adminID)) <= before {
			return false
		}
		msg, data = board(l.emu(), adminID)
		return button(data, send) != ""
	}) {
		l.fail("admin: the preview of %q with %s never came (buttons %v)", text, send, slices.Collect(maps.Keys(data)))
		return false
	}
	for label, d := range data {
		if d == button(data, send) {
			send = label // "💫 250 paid, rest free": the label as shown
		}
	}
	beforeTap()
	for try := 0; try < 3 && ctx.Err() == nil; try++ {
		u, err := l.emu().InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: msg,
			From: models.User{ID: adminID, FirstName: "Admin"}, Data: button(data, send)})
		if err != nil {
			l.fail("admin: tap %s: %v", send, err)
			return false
		}
		l.mu.Lock()
		l.taps = append(l.taps, u.CallbackQuery.ID)
		l.sendTaps++
		l.mu.Unlock()
		if waitFor(ctx, 20*time.Second, func() bool { return answered(l.emu(), u.CallbackQuery.ID) }) {
			l.logf("load: admin's %s answered (tap %d)", send, try+1)
			return true
		}
	}
	return false
}

// button is the callback data of the button labelled send in data, or of
// one whose label ends with send ("💫 N paid, rest free" by paidRestFree);
// "" when there is none.
func button(data map[string]string, send string) string {
	if d, ok := data[send]; ok {
		return d
	}
	for label, d := range data {
		if strings.HasSuffix(label, send) {
			return d
		}
	}
	return ""
}
