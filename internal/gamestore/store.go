package gamestore

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/luascript"
)

// Defaults of a Store.
const (
	// DefaultGameTTL is how long a running game is kept without a move.
	DefaultGameTTL = 7 * 24 * time.Hour
	// DefaultMaxTries is how many times a move is tried against concurrent
	// changes before ErrConflict.
	DefaultMaxTries = 16
)

// Store keeps games and leaderboards in Valkey. It is safe for concurrent
// use, and any number of Stores (in any number of processes) may share one
// server and prefix.
type Store struct {
	client   valkey.Client
	keys     keys
	cas      *valkey.Lua
	gameTTL  time.Duration
	maxTries int

	// beforeWrite, when set (tests only), runs between reading a game and
	// writing its next state.
	beforeWrite func()
}

// Option tunes a Store.
type Option func(*Store)

// WithGameTTL sets how long a running game is kept without a move (default
// DefaultGameTTL; values below one millisecond are ignored).
func WithGameTTL(d time.Duration) Option {
	return func(s *Store) {
		if d >= time.Millisecond {
			s.gameTTL = d
		}
	}
}

// WithMaxTries sets how many times a move is tried against concurrent
// changes before ErrConflict (default DefaultMaxTries; values below 1 are
// ignored).
func WithMaxTries(n int) Option {
	return func(s *Store) {
		if n >= 1 {
			s.maxTries = n
		}
	}
}

// New returns a Store over client with keys under hash tag tag (the
// program's, so they share the lanes' cluster slot; see the package doc).
// Errors: ErrInvalid for a tag that is empty or holds '{' or '}'.
func New(client valkey.Client, tag string, opts ...Option) (*Store, error) {
	if tag == "" || strings.ContainsAny(tag, "{}") {
		return nil, fmt.Errorf("%w: hash tag %q: want a non-empty tag without braces", ErrInvalid, tag)
	}
	s := &Store{
		client:   client,
		keys:     newKeys(tag),
		cas:      luascript.Must(luaFS, "cas"),
		gameTTL:  DefaultGameTTL,
		maxTries: DefaultMaxTries,
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Start begins a new game in the chat with cfg (zero fields mean defaults)
// and a secret drawn from rng (nil means crypto/rand). It fails with
// ErrGameInProgress if a game is running there (see Restart), and with
// game.ErrInvalidConfig for a bad cfg.
func (s *Store) Start(ctx context.Context, chatID int64, cfg game.Config, rng io.Reader) (game.State, error) {
	return s.start(ctx, chatID, cfg, rng, modeNew)
}

// Restart begins a new game in the chat like Start, replacing any running
// game (whose moves are discarded; it earns no points).
func (s *Store) Restart(ctx context.Context, chatID int64, cfg game.Config, rng io.Reader) (game.State, error) {
	return s.start(ctx, chatID, cfg, rng, modeAny)
}

func (s *Store) start(ctx context.Context, chatID int64, cfg game.Config, rng io.Reader, mode casMode) (game.State, error) {
	st, err := game.New(cfg, rng)
	if err != nil {
		return game.State{}, fmt.Errorf("gamestore: start in chat %d: %w", chatID, err)
	}
	data, err := st.Encode()
	if err != nil {
		return game.State{}, fmt.Errorf("gamestore: start in chat %d: %w", chatID, err)
	}
	_, ok, err := s.exec(ctx, chatID, casWrite{mode: mode, newID: st.ID, state: data, ttl: s.gameTTL})
	if err != nil {
		return game.State{}, fmt.Errorf("gamestore: start in chat %d: %w", chatID, err)
	}
	if !ok {
		return game.State{}, fmt.Errorf("gamestore: start in chat %d: %w", chatID, ErrGameInProgress)
	}
	return st, nil
}

// Current returns the chat's running game, or ErrNoGame. A stored state
// that does not decode gives an error wrapping game.ErrInvalidState (Restart
// replaces it).
func (s *Store) Current(ctx context.Context, chatID int64) (game.State, error) {
	st, _, err := s.load(ctx, chatID)
	if err != nil {
		return game.State{}, fmt.Errorf("gamestore: current game of chat %d: %w", chatID, err)
	}
	return st, nil
}

// GiveUp ends the chat's running game without a winner and deletes it. It
// returns the final state (Status game.GaveUp, with the Secret to reveal), or
// ErrNoGame.
func (s *Store) GiveUp(ctx context.Context, chatID int64) (game.State, error) {
	st, err := s.update(ctx, chatID, "", func(cur game.State) (game.State, credit, error) {
		next, err := cur.GiveUp()
		return next, credit{}, err
	})
	if err != nil {
		return game.State{}, fmt.Errorf("gamestore: give up in chat %d: %w", chatID, err)
	}
	return st, nil
}

// load reads the chat's game and its rev, or ErrNoGame.
func (s *Store) load(ctx context.Context, chatID int64) (game.State, int64, error) {
	st, rev, _, err := s.loadMove(ctx, chatID)
	return st, rev, err
}

// lastMove is the token and result (JSON) of the move that wrote a game's
// state (cas.lua fields mv, mr); zero when that move carried no token.
type lastMove struct{ token, result string }

// loadMove is load with the last move that wrote the state.
func (s *Store) loadMove(ctx context.Context, chatID int64) (game.State, int64, lastMove, error) {
	st, rev, m, err := s.loadRaw(ctx, chatID)
	return st, rev, lastMove{token: m["mv"], result: m["mr"]}, err
}

func (s *Store) loadRaw(ctx context.Context, chatID int64) (game.State, int64, map[string]string, error) {
	m, err := s.client.Do(ctx, s.client.B().Hgetall().Key(s.keys.game(chatID)).Build()).AsStrMap()
	if err != nil {
		return game.State{}, 0, nil, fmt.Errorf("read game: %w", err)
	}
	if len(m) == 0 {
		return game.State{}, 0, m, ErrNoGame
	}
	rev, err := strconv.ParseInt(m["rev"], 10, 64)
	if err != nil {
		return game.State{}, 0, m, fmt.Errorf("read game: rev %q: %w", m["rev"], game.ErrInvalidState)
	}
	st, err := game.DecodeState([]byte(m["state"]))
	if err != nil {
		return game.State{}, 0, m, fmt.Errorf("read game: %w", err)
	}
	if st.ID != m["id"] {
		return game.State{}, 0, m, fmt.Errorf("read game: id %q but state of game %q: %w", m["id"], st.ID, game.ErrInvalidState)
	}
	return st, rev, m, nil
}
