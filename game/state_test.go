package game

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewIsDeterministicWithInjectedRandomness(t *testing.T) {
	a, err := New(DefaultConfig(), rand.NewChaCha8([32]byte{1}))
	require.NoError(t, err)
	b, err := New(DefaultConfig(), rand.NewChaCha8([32]byte{1}))
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Len(t, a.ID, 16)
	require.Len(t, a.Secret, 4)
	require.Equal(t, Playing, a.Status)
	require.Equal(t, StateVersion, a.Version)
	require.NoError(t, a.Validate())
}

func TestNewDefaultRandomness(t *testing.T) {
	a, err := New(Config{}, nil)
	require.NoError(t, err)
	require.Equal(t, DefaultConfig(), a.Config, "zero config means defaults")
	b, err := New(Config{}, nil)
	require.NoError(t, err)
	require.NotEqual(t, a.ID, b.ID)
}

func TestNewSkipsBiasedBytes(t *testing.T) {
	// 6 symbols: bytes ≥ 252 are rejected; 253 then 7 gives index 1.
	st, err := New(DefaultConfig(), bytes.NewReader([]byte{253, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
	require.NoError(t, err)
	require.Equal(t, []string{"🍌", "🍎", "🍎", "🍎"}, st.Secret)
}

func TestNewErrors(t *testing.T) {
	_, err := New(Config{Palette: []string{"🍎"}}, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = New(DefaultConfig(), bytes.NewReader([]byte{1, 2}))
	require.Error(t, err, "short randomness")
}

func TestWinOnFirstAttempt(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	st, res := play(t, st, "🍎 🍌 🍇 🍒")
	require.Equal(t, Won, st.Status)
	require.Equal(t, Result{
		Turn:        Turn{Guess: []string{"🍎", "🍌", "🍇", "🍒"}, Feedback: Feedback{Green: 4}},
		Attempt:     1,
		MaxAttempts: 10,
		Status:      Won,
		Points:      100,
		Secret:      []string{"🍎", "🍌", "🍇", "🍒"},
	}, res)
	require.Equal(t, "🍎🍌🍇🍒  🟢🟢🟢🟢  attempt 1/10\n🎉 Code cracked in 1/10 attempt! +100 points.", res.Text())
	require.NoError(t, st.Validate())
}

func TestWinOnLastAttempt(t *testing.T) {
	st := newGame(t, "🥝🥝🍋🍋")
	wrong := make([]string, 9)
	for i := range wrong {
		wrong[i] = "🍎🍎🍎🍎"
	}
	st, res := play(t, st, wrong...)
	require.Equal(t, Playing, st.Status)
	require.Equal(t, 1, st.AttemptsLeft())
	require.Equal(t, Feedback{}, res.Feedback)
	require.Nil(t, res.Secret, "secret not revealed while playing")
	st, res = play(t, st, "🥝🥝🍋🍋")
	require.Equal(t, Won, st.Status)
	require.Equal(t, 10, res.Attempt)
	require.Equal(t, 10, res.Points)
	require.Contains(t, res.Text(), "+10 points")
}

func TestLossRevealsCode(t *testing.T) {
	st := newGame(t, "🍒🍒🍇🍎")
	guesses := make([]string, 10)
	for i := range guesses {
		guesses[i] = "🍇🍒🍌🍌"
	}
	st, res := play(t, st, guesses...)
	require.Equal(t, Lost, st.Status)
	require.Equal(t, Lost, res.Status)
	require.Equal(t, 0, res.Points)
	require.Equal(t, Feedback{Green: 1, Yellow: 1}, res.Feedback)
	require.Equal(t, []string{"🍒", "🍒", "🍇", "🍎"}, res.Secret)
	require.Equal(t, "🍇🍒🍌🍌  🟢🟡⚪⚪  attempt 10/10\n💥 Out of attempts. The code was 🍒🍒🍇🍎.", res.Text())
	require.True(t, strings.HasSuffix(st.Board(), "The code was 🍒🍒🍇🍎."))
	require.NoError(t, st.Validate())

	_, _, err := st.Guess("🍒🍒🍇🍎")
	require.ErrorIs(t, err, ErrGameOver)
}

func TestGiveUp(t *testing.T) {
	st := newGame(t, "🍋🍌🍋🍌")
	st, _ = play(t, st, "🍎🍎🍎🍎")
	over, err := st.GiveUp()
	require.NoError(t, err)
	require.Equal(t, GaveUp, over.Status)
	require.Equal(t, Playing, st.Status, "receiver unchanged")
	require.Equal(t, "🏳️ Given up. The code was 🍋🍌🍋🍌.", GiveUpText(over.Secret))
	require.Contains(t, over.Board(), "Given up")
	require.NoError(t, over.Validate())

	_, err = over.GiveUp()
	require.ErrorIs(t, err, ErrGameOver)
	_, _, err = over.Guess("🍋🍌🍋🍌")
	require.ErrorIs(t, err, ErrGameOver)
}

func TestInvalidGuessesDoNotUseAttempts(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	st, _ = play(t, st, "🍋🍋🍋🍋")
	before, err := st.Encode()
	require.NoError(t, err)
	for _, g := range []string{"🍎🍌🍇", "🍎🍌🍇🍒🍋", "hi", "🍎🍌🍇🐶", "", "👍🏽👍🏽👍🏽👍🏽"} {
		next, res, err := st.Guess(g)
		var ge *GuessError
		require.True(t, errors.As(err, &ge), "%q: %v", g, err)
		require.Equal(t, Result{}, res)
		require.Equal(t, st, next)
	}
	after, err := st.Encode()
	require.NoError(t, err)
	require.JSONEq(t, string(before), string(after))
	require.Equal(t, 1, st.AttemptsUsed())
	require.Equal(t, 9, st.AttemptsLeft())
}

func TestGuessDoesNotAliasReceiver(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	a, _ := play(t, st, "🍋🍋🍋🍋")
	// Two different continuations of the same state stay independent.
	b1, _ := play(t, a, "🍌🍌🍌🍌")
	b2, _ := play(t, a, "🥝🥝🥝🥝")
	require.Len(t, a.Turns, 1)
	require.Equal(t, "🍌", b1.Turns[1].Guess[0])
	require.Equal(t, "🥝", b2.Turns[1].Guess[0])
	_, res := play(t, a, "🍎🍎🍎🍎")
	res.Guess[0] = "x"
	require.Equal(t, "🍋", a.Turns[0].Guess[0])
}

func TestStateJSONRoundTrip(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	st, _ = play(t, st, "🍋🍋🍇🍇")
	b, err := st.Encode()
	require.NoError(t, err)

	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &fields))
	for _, k := range []string{"version", "id", "config", "secret", "turns", "status"} {
		require.Contains(t, fields, k, "stable field name")
	}
	require.JSONEq(t, `{"palette":["🍎","🍌","🍇","🍒","🍋","🥝"],"code_length":4,"max_attempts":10}`, string(fields["config"]))
	require.JSONEq(t, `[{"guess":["🍋","🍋","🍇","🍇"],"green":1,"yellow":0}]`, string(fields["turns"]))

	got, err := DecodeState(b)
	require.NoError(t, err)
	require.Equal(t, st, got)
}

func TestDecodeStateRejects(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	st, _ = play(t, st, "🍋🍋🍇🍇")
	mutate := func(f func(*State)) []byte {
		c := st.clone()
		f(&c)
		b, err := json.Marshal(c)
		require.NoError(t, err)
		return b
	}
	tests := map[string][]byte{
		"not json":           []byte("{"),
		"future version":     mutate(func(s *State) { s.Version = 2 }),
		"no id":              mutate(func(s *State) { s.ID = "" }),
		"bad config":         mutate(func(s *State) { s.Config.MaxAttempts = 0 }),
		"secret off palette": mutate(func(s *State) { s.Secret[0] = "🐶" }),
		"wrong feedback":     mutate(func(s *State) { s.Turns[0].Green = 3 }),
		"status says won":    mutate(func(s *State) { s.Status = Won }),
		"unknown status":     mutate(func(s *State) { s.Status = "paused" }),
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeState(b)
			require.ErrorIs(t, err, ErrInvalidState)
		})
	}
}

func TestBoardAndStartText(t *testing.T) {
	st := newGame(t, "🍎🍌🍇🍒")
	require.Equal(t, "🔐 New code: 4 emojis from 🍎 🍌 🍇 🍒 🍋 🥝 (repeats allowed). You have 10 attempts. Send your guess!", st.StartText())
	require.Equal(t, "10 of 10 attempts left.", st.Board())
	st, res := play(t, st, "🍎🍇🍌🍋", "🍎🍌🍒🍇")
	require.Equal(t, "🍎🍌🍒🍇  🟢🟢🟡🟡  attempt 2/10", res.Text())
	require.Equal(t, "🍎🍇🍌🍋  🟢🟡🟡⚪  attempt 1/10\n🍎🍌🍒🍇  🟢🟢🟡🟡  attempt 2/10\n8 of 10 attempts left.", st.Board())
}

func TestHelpText(t *testing.T) {
	h := HelpText(Config{})
	for _, want := range []string{"4 emojis", "🍎 🍌 🍇 🍒 🍋 🥝", "🟢", "🟡", "10 attempts", "100 on the first try"} {
		require.Contains(t, h, want)
	}
}

func TestZeroStateIsNotPlayable(t *testing.T) {
	_, _, err := State{}.Guess("")
	require.ErrorIs(t, err, ErrInvalidState)
	_, err = State{}.GiveUp()
	require.ErrorIs(t, err, ErrInvalidState)
}
