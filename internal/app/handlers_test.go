package app

import (
	"context"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/gameui"
	"github.com/codemojex/codemojex/internal/update"
)

func TestPlayerGetsRepliesToStartPlayAndGuesses(t *testing.T) {
	t.Parallel()
	// A scripted conversation of 13 messages in about 2 s, faster than
	// anyone types: over the default intake limit (10 at once, then 1/s),
	// which TestNormalPlayIsNeverLimited and the flood tests cover.
	h := newHarness(t, "FLOOD_USER_MESSAGES=0")
	h.startWithSecret(0, 1, 2, 3)
	ann := user(501, "Ann")

	require.Contains(t, h.ask(0, ann, "/start"), "Welcome to Codemojex")
	require.Contains(t, h.ask(0, ann, "/help"), "crack the secret code of 4 emojis")
	require.Equal(t, boardRules+"\n\n✏️ _ _ _ _\n10 of 10 attempts left.", h.ask(0, ann, "/play"), "the reply to /play is the board")

	// Invalid guesses: each reply says what is wrong, and no attempt is used.
	for _, tc := range []struct{ name, text, want string }{
		{"text", "hello", `❌ Not a valid guess: "h" is not an emoji; a guess is 4 emojis from 🍎 🍌 🍇 🍒 🍋 🥝, spaces allowed. No attempt used.`},
		{"three emojis", "🍎🍌🍇", "❌ Not a valid guess: a guess needs exactly 4 emojis, and this one has 3. No attempt used."},
		{"five emojis", "🍎 🍌 🍇 🍒 🍋", "❌ Not a valid guess: a guess needs exactly 4 emojis, and this one has 5. No attempt used."},
		{"outside the palette", "🍎🍌🍇🐶", "❌ Not a valid guess: 🐶 is not in the palette; use only 🍎 🍌 🍇 🍒 🍋 🥝. No attempt used."},
	} {
		require.Equal(t, tc.want, h.ask(0, ann, tc.text), tc.name)
	}
	st, err := h.games().Current(context.Background(), ann.ID)
	require.NoError(t, err)
	require.Zero(t, st.AttemptsUsed(), "invalid guesses use no attempt")

	require.Equal(t, "🍎🍌🍒🍇  🟢🟢🟡🟡  attempt 1/10", h.ask(0, ann, "🍎🍌🍒🍇"))
	require.Equal(t, "🍎🍌🍇🍒  🟢🟢🟢🟢  attempt 2/10\n🎉 Code cracked in 2/10 attempts! +90 points.", h.ask(0, ann, "🍎 🍌 🍇 🍒"))
	require.Equal(t, "No game is running here. Send /play to start one.", h.ask(0, ann, "🍎🍌🍇🍒"))
	require.Equal(t, "🏆 Top players\n1. Ann — 90 points", h.ask(0, ann, "/top"))

	// /cmd@thisbot is ours; /cmd@otherbot is not.
	require.Contains(t, h.ask(0, ann, "/start@codemojex_test_bot"), "Welcome")
	h.say(0, ann, "/start@other_bot")
	h.quiet(ann.ID, 500*time.Millisecond)

	// The command menu was registered at start.
	var names []string
	for _, c := range h.emu.MyCommands("", "") {
		names = append(names, c.Command)
	}
	require.ElementsMatch(t, []string{"play", "guess", "giveup", "top", "help", "language", "start"}, names)
}

func TestGroupGuessesByCommandAndReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.startWithSecret(5, 5, 5, 5)
	const group = int64(-1001234567890)
	bob, cat := user(601, "Bob"), user(602, "Cat")

	start := h.ask(group, bob, "/play@codemojex_test_bot")
	require.Contains(t, start, "New code")
	h.say(group, cat, "🍎🍎🍎🍎 just chatting")
	h.quiet(group, 300*time.Millisecond)

	require.Equal(t, gameui.TextGuessUsage, h.ask(group, bob, "/guess"))
	require.Equal(t, "🍎🍎🍎🍎  ⚪⚪⚪⚪  attempt 1/10", h.ask(group, bob, "/guess 🍎🍎🍎🍎"))

	msgs := h.emu.Messages(group)
	before := len(msgs)
	h.replyTo(group, cat, msgs[0].ID, "🥝🥝🥝🥝")
	got := h.texts(group, before+1)
	require.Equal(t, "🥝🥝🥝🥝  🟢🟢🟢🟢  attempt 2/10\n🎉 Code cracked in 2/10 attempts! +90 points.", got[before])
	last := h.emu.Messages(group)[before]
	require.NotZero(t, last.ReplyToMessageID, "group replies are threaded under the message they answer")

	require.Equal(t, "🏆 Top players\n1. Cat — 90 points", h.ask(group, bob, "/top"))
	require.Equal(t, gameui.TextNoGame, h.ask(group, bob, "/giveup"))
	h.ask(group, bob, "/play")
	require.Equal(t, "🏳️ Given up. The code was 🥝🥝🥝🥝.", h.ask(group, cat, "/giveup"))
}

func TestHandlerPanicDoesNotStopTheBot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	boom := func(u *models.Update) bool { return u.Message != nil && u.Message.Text == "/boom" }
	r := h.start(nil, WithHandler(boom, func(context.Context, *update.Request) update.Outcome { panic("kaboom") }))
	h.waitLeader(r)
	ann := user(701, "Ann")
	h.say(0, ann, "/boom")
	require.Contains(t, h.ask(0, ann, "/start"), "Welcome", "a later update is still answered")
	require.Len(t, h.emu.Messages(ann.ID), 1, "the panicking update got no reply")
	require.Contains(t, h.logs.String(), "handler panicked")
}
