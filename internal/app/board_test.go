package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/gameui"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// keyboardOf decodes a board's inline keyboard (testkit.Keyboard): rows
// of button texts and the callback data by text.
func keyboardOf(t testing.TB, markup string) ([][]string, map[string]string) {
	t.Helper()
	return testkit.Keyboard(t, markup)
}

// currentMarkup is the board's keyboard now (after its last edit).
func currentMarkup(m tgemu.Message) string {
	if n := len(m.Edits); n > 0 {
		return m.Edits[n-1].ReplyMarkup
	}
	return m.ReplyMarkup
}

// tap presses the button labelled label on chat's board as from (once the
// board shows it), waits for the answer and returns its toast.
func (h *harness) tap(chat int64, from models.User, label string) string {
	h.t.Helper()
	var (
		b    tgemu.Message
		d    string
		data map[string]string
	)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := h.emu.WaitUntil(ctx, func() bool {
		var ok bool
		if b, ok = h.board(chat); !ok {
			return false
		}
		_, data = keyboardOf(h.t, currentMarkup(b))
		d, ok = data[label]
		return ok
	})
	require.NoError(h.t, err, "button %q on the board of chat %d: %v", label, chat, data)
	return h.tapData(chat, from, b.ID, d)
}

// tapData presses a button with callback data d on message id of chat and
// returns the toast it was answered with.
func (h *harness) tapData(chat int64, from models.User, id int, d string) string {
	h.t.Helper()
	u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: chat, MessageID: id, From: from, Data: d})
	require.NoError(h.t, err)
	return h.answerOf(u.CallbackQuery.ID)
}

func (h *harness) answerOf(id string) string {
	h.t.Helper()
	var got *tgemu.CallbackAnswer
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(h.t, h.emu.WaitUntil(ctx, func() bool {
		for _, a := range h.emu.CallbackAnswers() {
			if a.QueryID == id {
				got = &a
				return true
			}
		}
		return false
	}), "query %s answered", id)
	return got.Text
}

var (
	rowsPlaying = func(submit string) [][]string {
		return [][]string{{"🍎", "🍌", "🍇"}, {"🍒", "🍋", "🥝"}, {"⌫", submit, "🏳️"}}
	}
)

// A private game played by taps alone to a win: after every tap the board
// shows the composition and the keyboard (✅ only with 4 chosen), a submit
// scores like a typed guess, and the win removes the keyboard, shows the
// points and counts on the shared leaderboard.
func TestPrivateGamePlayedByTapsToAWin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.startWithSecret(0, 1, 2, 3)
	ann := user(701, "Ann")
	h.ask(0, ann, "/play")
	b := h.waitBoard(ann.ID, boardRules+"\n\n✏️ _ _ _ _\n10 of 10 attempts left.")
	rows, _ := keyboardOf(t, b.ReplyMarkup)
	require.Equal(t, rowsPlaying("☑️"), rows)

	steps := []struct {
		tap, toast, board, submit string
	}{
		{"🍎", "", "\n\n✏️ 🍎 _ _ _\n10 of 10 attempts left.", "☑️"},
		{"🍌", "", "\n\n✏️ 🍎 🍌 _ _\n10 of 10 attempts left.", "☑️"},
		{"☑️", "Choose 4 emojis first (2/4)", "\n\n✏️ 🍎 🍌 _ _\n10 of 10 attempts left.", "☑️"},
		{"🍒", "", "\n\n✏️ 🍎 🍌 🍒 _\n10 of 10 attempts left.", "☑️"},
		{"🍇", "", "\n\n✏️ 🍎 🍌 🍒 🍇\n10 of 10 attempts left.", "✅"},
		{"🍋", gameui.ToastFull, "\n\n✏️ 🍎 🍌 🍒 🍇\n10 of 10 attempts left.", "✅"},
		{"✅", "🟢🟢🟡🟡", "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ _ _ _ _\n9 of 10 attempts left.", "☑️"},
		{"⌫", gameui.ToastEmpty, "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ _ _ _ _\n9 of 10 attempts left.", "☑️"},
		{"🍎", "", "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ 🍎 _ _ _\n9 of 10 attempts left.", "☑️"},
		{"🍎", "", "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ 🍎 🍎 _ _\n9 of 10 attempts left.", "☑️"},
		{"⌫", "", "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ 🍎 _ _ _\n9 of 10 attempts left.", "☑️"},
		{"🍌", "", "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ 🍎 🍌 _ _\n9 of 10 attempts left.", "☑️"},
		{"🍇", "", "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ 🍎 🍌 🍇 _\n9 of 10 attempts left.", "☑️"},
		{"🍒", "", "\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n\n✏️ 🍎 🍌 🍇 🍒\n9 of 10 attempts left.", "✅"},
	}
	for i, s := range steps {
		require.Equal(t, s.toast, h.tap(ann.ID, ann, s.tap), "step %d: tap %s", i, s.tap)
		b = h.waitBoard(ann.ID, boardRules+s.board)
		rows, _ = keyboardOf(t, currentMarkup(b))
		require.Equal(t, rowsPlaying(s.submit), rows, "step %d: keyboard", i)
	}
	require.Equal(t, "🎉 Cracked! +90 points", h.tap(ann.ID, ann, "✅"))
	b = h.waitBoard(ann.ID, boardRules+"\n\n1. 🍎🍌🍒🍇  🟢🟢🟡🟡\n2. 🍎🍌🍇🍒  🟢🟢🟢🟢\n\n🎉 Code cracked in 2/10 attempts! +90 points.")
	require.Empty(t, currentMarkup(b), "a finished board has no keyboard")
	require.Equal(t, "🏆 Top players\n1. Ann — 90 points", h.ask(0, ann, "/top"), "the leaderboard is shared with typed play")
	require.Len(t, h.emu.Messages(ann.ID), 2, "taps send no messages: the board is edited in place")
}

// A private game played by taps to a loss (2 attempts), and a give-up: the
// code is revealed and the keyboard removed; a tap on a finished board
// answers "game over" and changes nothing.
func TestPrivateGamePlayedByTapsToALossAndAGiveUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil, WithRandom(secretRNG(0, 0, 0, 0)), WithGameConfig(game.Config{MaxAttempts: 2}))
	h.waitLeader(r)
	bob := user(702, "Bob")
	h.ask(0, bob, "/play")
	rules := boardRules
	first, ok := h.board(bob.ID)
	require.True(t, ok)
	_, oldData := keyboardOf(t, first.ReplyMarkup)
	for range 4 {
		require.Empty(t, h.tap(bob.ID, bob, "🍌"))
	}
	require.Equal(t, "⚪⚪⚪⚪", h.tap(bob.ID, bob, "✅"))
	h.waitBoard(bob.ID, rules+"\n\n1. 🍌🍌🍌🍌  ⚪⚪⚪⚪\n\n✏️ _ _ _ _\n1 of 2 attempts left.")
	for _, s := range []string{"🍎", "🍎", "🍎", "🥝"} {
		require.Empty(t, h.tap(bob.ID, bob, s))
	}
	require.Equal(t, "💥 Out of attempts", h.tap(bob.ID, bob, "✅"))
	b := h.waitBoard(bob.ID, rules+"\n\n1. 🍌🍌🍌🍌  ⚪⚪⚪⚪\n2. 🍎🍎🍎🥝  🟢🟢🟢⚪\n\n💥 Out of attempts. The code was 🍎🍎🍎🍎.")
	require.Empty(t, currentMarkup(b))
	edits := len(b.Edits)
	require.Equal(t, gameui.ToastGameOver, h.tapData(bob.ID, bob, b.ID, oldData["🍎"]), "a tap on a finished board")
	h.quiet(bob.ID, 300*time.Millisecond)
	b, _ = h.board(bob.ID)
	require.Len(t, b.Edits, edits, "nothing changed")

	// A new game, given up by tap; the old board's buttons stay dead.
	h.ask(0, bob, "/play")
	require.Equal(t, gameui.ToastGameOver, h.tapData(bob.ID, bob, first.ID, oldData["🍎"]), "a button of a replaced game")
	require.Equal(t, gameui.ToastGaveUp, h.tap(bob.ID, bob, "🏳️"))
	b = h.waitBoard(bob.ID, rules+"\n\n🏳️ Given up. The code was 🍎🍎🍎🍎.")
	require.Empty(t, currentMarkup(b))
}

// Typed guesses and /guess update the same board (and get their reply).
func TestTypedGuessesUpdateTheBoard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.startWithSecret(5, 5, 5, 5)
	const group = int64(-100777)
	ann, bob := user(711, "Ann"), user(712, "Bob")
	h.ask(group, ann, "/play")
	require.Empty(t, h.tap(group, bob, "🍒"))
	require.Equal(t, "🍎🍎🍎🍎  ⚪⚪⚪⚪  attempt 1/10", h.ask(group, ann, "/guess 🍎🍎🍎🍎"))
	h.waitBoard(group, boardRules+"\n\n1. 🍎🍎🍎🍎  ⚪⚪⚪⚪  Ann\n\n✏️ Bob: 🍒 _ _ _\n9 of 10 attempts left.")
	require.Equal(t, "🏳️ Given up. The code was 🥝🥝🥝🥝.", h.ask(group, ann, "/giveup"))
	b := h.waitBoard(group, boardRules+"\n\n1. 🍎🍎🍎🍎  ⚪⚪⚪⚪  Ann\n\n🏳️ Given up. The code was 🥝🥝🥝🥝.")
	require.Empty(t, currentMarkup(b))
	require.NotZero(t, b.ReplyToMessageID, "in a group the board is threaded under /play, like any reply")
}

// In a group each player composes their own guess: Ann's taps never change
// Bob's composition, the board lists both, and each submit is scored under
// its player's name.
func TestGroupPlayersComposeIndependently(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.startWithSecret(0, 1, 2, 3)
	const group = int64(-100778)
	ann, bob := user(721, "Ann"), user(722, "Bob")
	h.ask(group, ann, "/play")
	for i, s := range []string{"🍎", "🍌", "🍇", "🍒"} {
		require.Empty(t, h.tap(group, ann, s))
		require.Empty(t, h.tap(group, bob, []string{"🥝", "🥝", "🍋", "🍋"}[i]))
	}
	h.waitBoard(group, boardRules+"\n\n✏️ Ann: 🍎 🍌 🍇 🍒\n✏️ Bob: 🥝 🥝 🍋 🍋\n10 of 10 attempts left.")
	require.Equal(t, "⚪⚪⚪⚪", h.tap(group, bob, "✅"))
	require.Equal(t, gameui.ToastEmpty, h.tap(group, bob, "⌫"), "Bob's composition was cleared by his submit")
	h.waitBoard(group, boardRules+"\n\n1. 🥝🥝🍋🍋  ⚪⚪⚪⚪  Bob\n\n✏️ Ann: 🍎 🍌 🍇 🍒\n9 of 10 attempts left.")
	require.Equal(t, "🎉 Cracked! +90 points", h.tap(group, ann, "✅"))
	h.waitBoard(group, boardRules+"\n\n1. 🥝🥝🍋🍋  ⚪⚪⚪⚪  Bob\n2. 🍎🍌🍇🍒  🟢🟢🟢🟢  Ann\n\n🎉 Code cracked in 2/10 attempts! +90 points. (Ann)")
	require.Equal(t, "🏆 Top players\n1. Ann — 90 points", h.ask(group, bob, "/top"))
}

// Forged or stale callback data gets a toast and changes nothing: another
// game's id, a bad signature, a wrong length, another version, data signed
// for another chat, an unknown action.
func TestForgedCallbackDataChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.startWithSecret(0, 1, 2, 3)
	cy := user(731, "Cy")
	h.ask(0, cy, "/play")
	b, _ := h.board(cy.ID)
	_, data := keyboardOf(t, b.ReplyMarkup)
	good := data["🍎"]
	cur, err := h.games().Current(context.Background(), cy.ID)
	require.NoError(t, err)
	codec := r.app.codec
	otherGame, err := codec.Encode(tapdata.KindGame, "00000000deadbeef", "p0", cy.ID)
	require.NoError(t, err)
	otherChat, err := codec.Encode(tapdata.KindGame, cur.ID, "p0", cy.ID+1)
	require.NoError(t, err)
	badAction, err := codec.Encode(tapdata.KindGame, cur.ID, "p9", cy.ID)
	require.NoError(t, err)
	otherKind, err := codec.Encode('z', cur.ID, "p0", cy.ID)
	require.NoError(t, err)
	// The same data with its last character changed (its checksum no longer matches).
	flipped := good[:len(good)-1] + "A"
	if good[len(good)-1] == 'A' {
		flipped = good[:len(good)-1] + "B"
	}
	for _, tc := range []struct{ name, data, toast string }{
		{"other game id", otherGame, gameui.ToastGameOver},
		{"bad signature", flipped, tapdata.ToastInvalidButton},
		{"signed for another chat", otherChat, tapdata.ToastInvalidButton},
		{"truncated", good[:len(good)-3], tapdata.ToastInvalidButton},
		{"too long", good + strings.Repeat("x", 40), tapdata.ToastInvalidButton},
		{"empty", "x", tapdata.ToastInvalidButton},
		{"other version", "2" + good[1:], tapdata.ToastOldButton},
		{"unknown action", badAction, tapdata.ToastInvalidButton},
		{"unknown kind", otherKind, tapdata.ToastInvalidButton},
		{"game scope swapped", strings.Replace(good, cur.ID, "00000000deadbeef", 1), tapdata.ToastInvalidButton},
	} {
		require.Equal(t, tc.toast, h.tapData(cy.ID, cy, b.ID, tc.data), tc.name)
	}
	h.quiet(cy.ID, 300*time.Millisecond)
	b, _ = h.board(cy.ID)
	require.Empty(t, b.Edits, "no forged tap changed the board")
	n, err := r.app.c.Do(context.Background(), r.app.c.B().Exists().Key(r.app.ui.Keys().Comp(cy.ID, cur.ID)).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "no composition was written")
	require.Empty(t, h.tap(cy.ID, cy, "🍎"), "the genuine button still works")
}

// A burst of 10 taps by five players in a group, handled while the
// group's lanes are held (parked, as a pace slot or a 429 would hold them),
// costs one board edit (edits still queued are replaced, latest wins: the
// lanes.Coalesce of notifier.EditLatest), and the final board shows every
// player's composition. The test holds the lanes itself and waits for the
// taps to be handled, so the count does not depend on how fast a host
// handles taps against a pace slot: this test allowed 3 edits for taps
// sent within one 500 ms slot until issue 32, and a loaded host that
// handled them over more slots made 5. The pace between edits is the
// notifier's TestStoreOptions' and lanes' (by server time).
func TestGroupTapBurstCoalescesToOneEdit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.startWithSecret(0, 1, 2, 3)
	const group = int64(-100779)
	const slot = 500 * time.Millisecond
	ctx := context.Background()
	in := r.app.Store().Inspector()
	require.NoError(t, in.SetLanePace(ctx, "-100779", lanes.Pace{Limit: 1, Period: slot}))
	players := []models.User{user(741, "Ann"), user(742, "Bob"), user(743, "Cy"), user(744, "Di"), user(745, "Ed")}
	h.ask(group, players[0], "/play")
	b, _ := h.board(group)
	_, data := keyboardOf(t, b.ReplyMarkup)
	for _, q := range tgjob.Queues() {
		_, err := in.Park(ctx, q, "-100779", -1) // until ResumeLane: the edits stay queued
		require.NoError(t, err)
	}

	var ids []string
	var last models.Update
	picks := []string{"🍎", "🍌", "🍇", "🍒", "🍋", "🥝", "🍎", "🍌", "🍇", "🍒"}
	for i, s := range picks {
		u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: group, MessageID: b.ID, From: players[i%5], Data: data[s]})
		require.NoError(t, err)
		ids = append(ids, u.CallbackQuery.ID)
		last = u
	}
	for _, id := range ids {
		require.Empty(t, h.answerOf(id))
	}
	h.waitHandled(r, last) // every tap applied and its edit queued
	b, _ = h.board(group)
	require.Empty(t, b.Edits, "no edit sent while the lanes are held")
	for _, q := range tgjob.Queues() {
		require.NoError(t, in.ResumeLane(ctx, q, "-100779"))
	}
	final := boardRules + "\n\n✏️ Ann: 🍎 🥝 _ _\n✏️ Bob: 🍌 🍎 _ _\n✏️ Cy: 🍇 🍌 _ _\n✏️ Di: 🍒 🍇 _ _\n✏️ Ed: 🍋 🍒 _ _\n10 of 10 attempts left."
	b = h.waitBoard(group, final)
	h.quiet(group, 2*slot)
	b, _ = h.board(group)
	require.Equal(t, final, b.CurrentText(), "no stale frame after the final one")
	edits := b.Edits
	t.Logf("10 taps by 5 players: %d edits", len(edits))
	require.Equal(t, 1, len(edits), "10 taps queued at once: one edit, not one per tap")
}
