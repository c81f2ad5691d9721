package gamestore

import (
	"context"
	"encoding/json"
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
	return s.GuessOnce(ctx, chatID, userID, userName, text, "")
}

// GuessOnce is Guess played at most once for move, the token of what asked
// for it (e.g. "u:<update_id>" of the message, "q:<callback_query_id>" of
// the tap; "" is Guess): a second call with the move whose result is the
// game's latest returns that result and the current state and writes
// nothing (an update handled twice, its lease taken over or its settle
// lost, must not use a second attempt). A replay after the move ended the
// game finds no game (ErrNoGame) and credits nothing again. Errors: as
// Guess.
func (s *Store) GuessOnce(ctx context.Context, chatID, userID int64, userName, text, move string) (game.Result, game.State, error) {
	var (
		res     game.Result
		current game.State
	)
	name := cleanName(userName)
	next, err := s.update(ctx, chatID, move, func(cur game.State) (game.State, credit, error) {
		current = cur
		next, r, err := cur.GuessBy(text, name)
		if err != nil {
			return game.State{}, credit{}, err
		}
		res = r
		c := credit{userID: userID, name: name, points: r.Points}
		if move != "" {
			if c.result, err = json.Marshal(r); err != nil {
				return game.State{}, credit{}, err
			}
		}
		return next, c, nil
	})
	if re, ok := errors.AsType[*replayedError](err); ok {
		var r game.Result
		if jerr := json.Unmarshal([]byte(re.result), &r); jerr != nil {
			return game.Result{}, game.State{}, fmt.Errorf("gamestore: guess in chat %d: replay of %s: %w", chatID, move, jerr)
		}
		return r, next, nil
	}
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
