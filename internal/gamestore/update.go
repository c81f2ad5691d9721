package gamestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/codemojex/codemojex/game"
)

// Back-off between tries of a move: a random wait in [0, backoffBase·2^try),
// at most backoffMax.
const (
	backoffBase = time.Millisecond
	backoffMax  = 50 * time.Millisecond
)

// credit is the points a move awards (none when points is 0).
type credit struct {
	userID int64
	name   string
	points int
}

// transition computes the next state of a freshly read game. An error stops
// the update and is returned as is, with nothing written.
type transition func(cur game.State) (next game.State, c credit, err error)

// update applies fn to the chat's game atomically: read, transition, then
// compare-and-set with cas.lua, retrying on fresh state while another writer
// got in first, at most s.maxTries times (then ErrConflict). A next state
// that is over is deleted rather than written. It returns the next state.
func (s *Store) update(ctx context.Context, chatID int64, fn transition) (game.State, error) {
	for try := range s.maxTries {
		if try > 0 {
			if err := sleep(ctx, backoff(try)); err != nil {
				return game.State{}, err
			}
		}
		cur, rev, err := s.load(ctx, chatID)
		if err != nil {
			return game.State{}, err
		}
		next, c, err := fn(cur)
		if err != nil {
			return game.State{}, err
		}
		w := casWrite{mode: modeCAS, wantID: cur.ID, wantRev: rev, newID: next.ID, ttl: s.gameTTL,
			credit: c.userID, points: c.points, name: c.name}
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

// backoff returns a random wait before the given retry (1-based).
func backoff(try int) time.Duration {
	ceil := min(backoffBase<<min(try, 16), backoffMax)
	return rand.N(ceil) + 1
}

// sleep waits d or until ctx is done (then returns its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting to retry: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}
