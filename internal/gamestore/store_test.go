package gamestore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

const chat = int64(-100123)

// fixture is a Store on the shared server, in a namespace of its own.
type fixture struct {
	store  *Store
	client valkey.Client
	ns     string
	prefix string
}

func newFixture(t *testing.T, opts ...Option) fixture {
	t.Helper()
	srv := valkeytest.Shared(t)
	c := srv.Client(t)
	ns := valkeytest.Namespace(t)
	s, err := New(c, ns, opts...)
	require.NoError(t, err)
	return fixture{store: s, client: c, ns: ns, prefix: "{" + ns + "}:g"}
}

// keys returns every key of the fixture's namespace.
func (f fixture) keys(t *testing.T) []string {
	t.Helper()
	ks, err := valkeytest.Keys(context.Background(), f.client, f.prefix+"*")
	require.NoError(t, err)
	return ks
}

// secretRNG makes game.New draw the given default-palette indices as the
// secret (🍎=0 🍌=1 🍇=2 🍒=3 🍋=4 🥝=5), then a fixed ID.
func secretRNG(idx ...byte) io.Reader {
	return bytes.NewReader(append(append([]byte{}, idx...), 1, 2, 3, 4, 5, 6, 7, 8))
}

func TestStartGuessWinUpdatesLeaderboard(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	st, err := f.store.Start(ctx, chat, game.Config{}, secretRNG(0, 1, 2, 3))
	require.NoError(t, err)
	require.Equal(t, []string{"🍎", "🍌", "🍇", "🍒"}, st.Secret)
	require.Equal(t, []string{f.prefix + ":game:-100123"}, f.keys(t))

	_, err = f.store.Start(ctx, chat, game.Config{}, nil)
	require.ErrorIs(t, err, ErrGameInProgress)

	res, st, err := f.store.Guess(ctx, chat, 7, "Ann", "🍎🍌🍒🍇")
	require.NoError(t, err)
	require.Equal(t, game.Playing, res.Status)
	require.Equal(t, game.Feedback{Green: 2, Yellow: 2}, res.Feedback)
	require.Equal(t, 1, st.AttemptsUsed())

	cur, err := f.store.Current(ctx, chat)
	require.NoError(t, err)
	require.Equal(t, st, cur)

	res, st, err = f.store.Guess(ctx, chat, 8, "  Bob  ", "🍎 🍌 🍇 🍒")
	require.NoError(t, err)
	require.Equal(t, game.Won, res.Status)
	require.Equal(t, game.Won, st.Status)
	require.Equal(t, 2, res.Attempt)
	require.Equal(t, 90, res.Points)

	_, err = f.store.Current(ctx, chat)
	require.ErrorIs(t, err, ErrNoGame)
	_, _, err = f.store.Guess(ctx, chat, 7, "Ann", "🍎🍌🍇🍒")
	require.ErrorIs(t, err, ErrNoGame)

	// A second game, won by Ann on the first try.
	_, err = f.store.Start(ctx, chat, game.Config{}, secretRNG(5, 5, 5, 5))
	require.NoError(t, err)
	res, _, err = f.store.Guess(ctx, chat, 7, "Ann", "🥝🥝🥝🥝")
	require.NoError(t, err)
	require.Equal(t, 100, res.Points)

	top, err := f.store.Top(ctx, chat, 10)
	require.NoError(t, err)
	require.Equal(t, []Entry{
		{Rank: 1, UserID: 7, Name: "Ann", Points: 100},
		{Rank: 2, UserID: 8, Name: "Bob", Points: 90},
	}, top)
	top, err = f.store.Top(ctx, chat, 1)
	require.NoError(t, err)
	require.Len(t, top, 1)
	top, err = f.store.Top(ctx, chat+1, 10)
	require.NoError(t, err)
	require.Empty(t, top)

	// Only the leaderboard and names remain.
	require.ElementsMatch(t, []string{f.prefix + ":top:-100123", f.prefix + ":names:-100123"}, f.keys(t))
}

func TestLossAndGiveUpLeaveNoGameKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	_, err := f.store.Start(ctx, chat, game.Config{MaxAttempts: 2}, secretRNG(0, 0, 0, 0))
	require.NoError(t, err)
	_, _, err = f.store.Guess(ctx, chat, 1, "A", "🍌🍌🍌🍌")
	require.NoError(t, err)
	res, st, err := f.store.Guess(ctx, chat, 1, "A", "🍌🍌🍌🍌")
	require.NoError(t, err)
	require.Equal(t, game.Lost, res.Status)
	require.Equal(t, []string{"🍎", "🍎", "🍎", "🍎"}, res.Secret)
	require.Equal(t, game.Lost, st.Status)
	require.Empty(t, f.keys(t), "a loss credits nobody and deletes the game")

	_, err = f.store.Start(ctx, chat, game.Config{}, nil)
	require.NoError(t, err)
	st, err = f.store.GiveUp(ctx, chat)
	require.NoError(t, err)
	require.Equal(t, game.GaveUp, st.Status)
	require.Len(t, st.Secret, 4)
	require.Empty(t, f.keys(t))

	_, err = f.store.GiveUp(ctx, chat)
	require.ErrorIs(t, err, ErrNoGame)
}

func TestRestartReplacesRunningGame(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	a, err := f.store.Start(ctx, chat, game.Config{}, nil)
	require.NoError(t, err)
	_, _, err = f.store.Guess(ctx, chat, 1, "A", "🍎🍎🍎🍎")
	require.NoError(t, err)
	b, err := f.store.Restart(ctx, chat, game.Config{CodeLength: 3}, nil)
	require.NoError(t, err)
	require.NotEqual(t, a.ID, b.ID)
	cur, err := f.store.Current(ctx, chat)
	require.NoError(t, err)
	require.Equal(t, b, cur)
	require.Empty(t, cur.Turns)

	_, err = f.store.Start(ctx, chat, game.Config{CodeLength: 99}, nil)
	require.ErrorIs(t, err, game.ErrInvalidConfig)
}

func TestInvalidGuessLeavesStateUnchanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	_, err := f.store.Start(ctx, chat, game.Config{}, secretRNG(0, 1, 2, 3))
	require.NoError(t, err)
	_, _, err = f.store.Guess(ctx, chat, 1, "A", "🍋🍋🍋🍋")
	require.NoError(t, err)
	key := f.prefix + ":game:-100123"
	before, err := f.client.Do(ctx, f.client.B().Hgetall().Key(key).Build()).AsStrMap()
	require.NoError(t, err)

	for _, tc := range []struct {
		text string
		kind game.GuessErrorKind
	}{
		{"🍎🍌🍇", game.WrongCount},
		{"🍎🍌🍇🐶", game.NotInPalette},
		{"good luck everyone", game.Text},
	} {
		res, st, err := f.store.Guess(ctx, chat, 1, "A", tc.text)
		ge, ok := errors.AsType[*game.GuessError](err)
		require.True(t, ok, "%q: %v", tc.text, err)
		require.Equal(t, tc.kind, ge.Kind)
		require.Equal(t, game.Result{}, res)
		require.Equal(t, 1, st.AttemptsUsed(), "the current game comes back with the error")
	}
	after, err := f.client.Do(ctx, f.client.B().Hgetall().Key(key).Build()).AsStrMap()
	require.NoError(t, err)
	require.Equal(t, before, after, "state and rev untouched")
	require.Equal(t, "2", after["rev"], "one write for the start, one for the valid guess")
}

func TestGameKeyHasTTL(t *testing.T) {
	t.Parallel()
	f := newFixture(t, WithGameTTL(time.Hour))
	ctx := context.Background()
	_, err := f.store.Start(ctx, chat, game.Config{}, nil)
	require.NoError(t, err)
	ttl, err := f.client.Do(ctx, f.client.B().Pttl().Key(f.prefix+":game:-100123").Build()).AsInt64()
	require.NoError(t, err)
	require.Greater(t, ttl, int64(59*time.Minute/time.Millisecond))
	require.LessOrEqual(t, ttl, int64(time.Hour/time.Millisecond))
}

func TestConcurrentWinnersWinOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.store.Start(ctx, chat, game.Config{}, secretRNG(3, 2, 1, 0))
	require.NoError(t, err)

	const n = 20
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results = make([]game.Result, n)
		errs    = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], _, errs[i] = f.store.Guess(ctx, chat, int64(1000+i), "p", "🍒🍇🍌🍎")
		})
	}
	close(start)
	wg.Wait()

	winners, attempts := 0, 0
	var winner int64
	for i := range n {
		if errs[i] != nil {
			require.ErrorIs(t, errs[i], ErrNoGame, "loser %d", i)
			continue
		}
		winners++
		attempts += results[i].Attempt
		require.Equal(t, game.Won, results[i].Status)
		winner = int64(1000 + i)
	}
	require.Equal(t, 1, winners)
	require.Equal(t, 1, attempts, "the one accepted guess is attempt 1")

	top, err := f.store.Top(ctx, chat, 100)
	require.NoError(t, err)
	require.Equal(t, []Entry{{Rank: 1, UserID: winner, Name: "p", Points: 100}}, top)
	require.ElementsMatch(t, []string{f.prefix + ":top:-100123", f.prefix + ":names:-100123"}, f.keys(t))
}

func TestConcurrentGuessesLoseNoUpdate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, WithMaxTries(1000))
	ctx := context.Background()
	_, err := f.store.Start(ctx, chat, game.Config{MaxAttempts: 30}, secretRNG(0, 0, 0, 0))
	require.NoError(t, err)

	pal := game.DefaultConfig().Palette[1:] // never the secret's 🍎
	const n = 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	attempts := make([]int, n)
	errs := make([]error, n)
	for i := range n {
		guess := pal[i%5] + pal[(i/5)%5] + pal[0] + pal[1]
		wg.Go(func() {
			<-start
			var res game.Result
			res, _, errs[i] = f.store.Guess(ctx, chat, int64(i), "p", guess)
			attempts[i] = res.Attempt
		})
	}
	close(start)
	wg.Wait()

	seen := map[int]bool{}
	for i := range n {
		require.NoError(t, errs[i])
		require.False(t, seen[attempts[i]], "attempt %d given twice", attempts[i])
		seen[attempts[i]] = true
	}
	cur, err := f.store.Current(ctx, chat)
	require.NoError(t, err)
	require.Len(t, cur.Turns, n, "every accepted guess is recorded")
	for a := 1; a <= n; a++ {
		require.True(t, seen[a], "attempt %d", a)
	}
	rev, err := f.client.Do(ctx, f.client.B().Hget().Key(f.prefix+":game:-100123").Field("rev").Build()).AsInt64()
	require.NoError(t, err)
	require.Equal(t, int64(n+1), rev, "one write per start and per guess")
}

func TestConflictIsBoundedAndTyped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, WithMaxTries(3))
	ctx := context.Background()
	_, err := f.store.Start(ctx, chat, game.Config{}, nil)
	require.NoError(t, err)

	// Another writer bumps the rev between every read and write.
	key := f.prefix + ":game:-100123"
	bumps := 0
	f.store.beforeWrite = func() {
		bumps++
		require.NoError(t, f.client.Do(ctx, f.client.B().Hincrby().Key(key).Field("rev").Increment(1).Build()).Error())
	}
	_, _, err = f.store.Guess(ctx, chat, 1, "A", "🍎🍎🍎🍎")
	require.ErrorIs(t, err, ErrConflict)
	require.Equal(t, 3, bumps)
	_, err = f.store.GiveUp(ctx, chat)
	require.ErrorIs(t, err, ErrConflict)

	f.store.beforeWrite = nil
	cur, err := f.store.Current(ctx, chat)
	require.NoError(t, err)
	require.Empty(t, cur.Turns, "the conflicting guess was not applied")
}

func TestCorruptStateIsReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	key := f.prefix + ":game:-100123"
	require.NoError(t, f.client.Do(ctx, f.client.B().Hset().Key(key).FieldValue().
		FieldValue("id", "x").FieldValue("rev", "1").FieldValue("state", "{nope").Build()).Error())
	_, err := f.store.Current(ctx, chat)
	require.ErrorIs(t, err, game.ErrInvalidState)
	_, _, err = f.store.Guess(ctx, chat, 1, "A", "🍎🍎🍎🍎")
	require.ErrorIs(t, err, game.ErrInvalidState)
	_, err = f.store.Start(ctx, chat, game.Config{}, nil)
	require.ErrorIs(t, err, ErrGameInProgress)
	_, err = f.store.Restart(ctx, chat, game.Config{}, nil)
	require.NoError(t, err)
	_, err = f.store.Current(ctx, chat)
	require.NoError(t, err)
}

func TestScriptSurvivesScriptFlush(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	require.NoError(t, f.client.Do(ctx, f.client.B().ScriptFlush().Build()).Error())
	_, err := f.store.Start(ctx, chat, game.Config{}, nil)
	require.NoError(t, err, "EVALSHA falls back to EVAL on NOSCRIPT")
}

// Every key is {T}:g:<kind>:<chat_id>, and a tag that would not be a hash
// tag is refused.
func TestKeysCarryTheTagAndTheGameSegment(t *testing.T) {
	require.Equal(t, "{cm}:g:game:42", newKeys("cm").game(42))
	require.Equal(t, "{cm}:g:top:-1", newKeys("cm").top(-1))
	require.Equal(t, "{bot}:g:names:5", newKeys("bot").names(5))
	for _, tag := range []string{"", "{x}", "a{b"} {
		_, err := New(nil, tag)
		require.ErrorIs(t, err, ErrInvalid, "tag %q", tag)
	}
}

func TestCleanName(t *testing.T) {
	require.Equal(t, "Ann", cleanName("  Ann\n"))
	require.Equal(t, "a\uFFFDb", cleanName("a\xffb"))
	require.Equal(t, MaxNameLen, len([]rune(cleanName(strings.Repeat("é", 100)))))
}

// A move handled twice (its update taken over by another handler, or its
// settle lost) is played once: GuessOnce with the same token returns the
// first result and the current state and uses no second attempt; another
// token plays; a token without a prior move plays; the winning move's
// replay finds no game and credits nothing again.
func TestGuessOncePlaysAMoveHandledTwiceOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.store.Start(ctx, chat, game.Config{}, secretRNG(0, 1, 2, 3))
	require.NoError(t, err)

	first, st, err := f.store.GuessOnce(ctx, chat, 7, "Ann", "🍎🍌🍒🍇", "upd:10:guess")
	require.NoError(t, err)
	require.Equal(t, 1, first.Attempt)
	again, st2, err := f.store.GuessOnce(ctx, chat, 7, "Ann", "🍎🍌🍒🍇", "upd:10:guess")
	require.NoError(t, err)
	require.Equal(t, first, again, "the replay answers the first result")
	require.Equal(t, st, st2)
	require.Equal(t, 1, st2.AttemptsUsed(), "no second attempt")

	next, _, err := f.store.GuessOnce(ctx, chat, 8, "Bob", "🍎🍌🍒🍇", "upd:11:guess")
	require.NoError(t, err)
	require.Equal(t, 2, next.Attempt, "another update plays")

	won, _, err := f.store.GuessOnce(ctx, chat, 8, "Bob", "🍎🍌🍇🍒", "upd:12:guess")
	require.NoError(t, err)
	require.Equal(t, game.Won, won.Status)
	_, _, err = f.store.GuessOnce(ctx, chat, 8, "Bob", "🍎🍌🍇🍒", "upd:12:guess")
	require.ErrorIs(t, err, ErrNoGame, "the winning move's replay: the game is over")
	top, err := f.store.Top(ctx, chat, 10)
	require.NoError(t, err)
	require.Len(t, top, 1)
	require.EqualValues(t, won.Points, top[0].Points, "credited once")
}
