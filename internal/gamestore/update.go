package gamestore

import (
	"context"
	"fmt"
	"time"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/game"
)

// Back-off between tries of a move: a random wait in [0, min(1 ms · 2^try,
// 50 ms)): full jitter (consumer.Backoff Jitter 1) around half of it.
const (
	backoffBase = 500 * time.Microsecond
	backoffMax  = 25 * time.Millisecond
)

// credit is the points a move awards (none when points is 0).
type credit struct {
	userID int64
	name   string
	points int
	// result is the move's result (JSON), kept with the new state under
	// the move's token (update's move), for a replay.
	result []byte
}

// replayedError says the move was played already: the game's state was
// written by a move of the same token, whose result it carries (JSON).
type replayedError struct{ result string }

func (e *replayedError) Error() string { return "gamestore: the move was played already" }

// transition computes the next state of a freshly read game. An error stops
// the update and is returned as is, with nothing written.
type transition func(cur game.State) (next game.State, c credit, err error)

// update applies fn to the chat's game atomically: read, transition, then
// compare-and-set with cas.lua, retrying on fresh state while another writer
// got in first, at most s.maxTries times (then ErrConflict). A next state
// that is over is deleted rather than written. It returns the next state.
// A move with a token (move, e.g. "u:<update_id>"; "" none) is played once:
// when the state was written by that token's move (a handler that took
// over an update whose move was played, its lease lost or its settle
// failed), nothing is written and a *replayedError with that move's result
// is returned with the current state.
func (s *Store) update(ctx context.Context, chatID int64, move string, fn transition) (game.State, error) {
	for try := range s.maxTries {
		if try > 0 {
			if err := consumer.Sleep(ctx, consumer.Backoff{Base: backoffBase, Max: backoffMax, Jitter: 1}.Delay(try)); err != nil {
				return game.State{}, fmt.Errorf("waiting to retry: %w", err)
			}
		}
		cur, rev, last, err := s.loadMove(ctx, chatID)
		if err != nil {
			return game.State{}, err
		}
		if move != "" && last.token == move {
			return cur, &replayedError{result: last.result}
		}
		next, c, err := fn(cur)
		if err != nil {
			return game.State{}, err
		}
		w := casWrite{mode: modeCAS, wantID: cur.ID, wantRev: rev, newID: next.ID, ttl: s.gameTTL,
			credit: c.userID, points: c.points, name: c.name, move: move, moveResult: c.result}
		if !next.Over() {
			if w.state, err = next.Encode(); err != nil {
				return game.State{}, err
			}
		}
		if s.beforeWrite != nil {
			s.beforeWrite()
		}
		_, ok, err := s.exec(ctx, chatID, w)
		if err != nil {
			return game.State{}, err
		}
		if ok {
			return next, nil
		}
	}
	return game.State{}, fmt.Errorf("%w (%d tries)", ErrConflict, s.maxTries)
}
