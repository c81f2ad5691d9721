package gamestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codemojex/codemojex/game"
)

// MaxNameLen is the most runes of a display name kept for the leaderboard.
const MaxNameLen = 64

// Guess plays text as userID's guess in the chat's running game, atomically
// with respect to every other move in that chat.
//
// On success it returns the guess's Result and the new state. When the guess
// ends the game, the game is deleted; on a win, Result.Points are added to
// userID's total in the chat's leaderboard and userName (trimmed, at most
// MaxNameLen runes) is recorded for Top, in the same atomic step.
//
// Errors (wrapped; test with errors.Is / errors.As):
//   - *game.GuessError: text is not a valid guess; the returned State is the
//     unchanged current game, and no attempt is used.
//   - ErrNoGame: no game is running (also when another player's guess just
//     ended it).
//   - ErrConflict: too many concurrent moves; the guess was not played.
//   - game.ErrInvalidState: the stored game is corrupt (Restart replaces it).
func (s *Store) Guess(ctx context.Context, chatID, userID int64, userName, text string) (game.Result, game.State, error) {
	var (
		res     game.Result
		current game.State
	)
	name := cleanName(userName)
	next, err := s.update(ctx, chatID, func(cur game.State) (game.State, credit, error) {
		current = cur
		next, r, err := cur.GuessBy(text, name)
		if err != nil {
			return game.State{}, credit{}, err
		}
		res = r
		return next, credit{userID: userID, name: name, points: r.Points}, nil
	})
	if err != nil {
		err = fmt.Errorf("gamestore: guess in chat %d: %w", chatID, err)
		if _, ok := errors.AsType[*game.GuessError](err); ok {
			return game.Result{}, current, err
		}
		return game.Result{}, game.State{}, err
	}
	return res, next, nil
}

// cleanName makes a display name safe to store: valid UTF-8, trimmed, at
// most MaxNameLen runes.
func cleanName(name string) string {
	name = strings.TrimSpace(strings.ToValidUTF8(name, "\uFFFD"))
	if utf8.RuneCountInString(name) <= MaxNameLen {
		return name
	}
	r := []rune(name)
	return string(r[:MaxNameLen])
}
