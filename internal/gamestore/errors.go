package gamestore

import "errors"

// Errors callers branch on (with errors.Is); they are returned wrapped with
// the chat and the operation.
var (
	// ErrGameInProgress: Start found a game running in the chat.
	ErrGameInProgress = errors.New("a game is already running in this chat")
	// ErrNoGame: the chat has no running game (never started, finished,
	// given up, or expired after the game TTL).
	ErrNoGame = errors.New("no game is running in this chat")
	// ErrConflict: the game kept changing under us; the move was retried the
	// configured number of times and not applied.
	ErrConflict = errors.New("too many concurrent changes to this chat's game")
	// ErrInvalid: New was given a bad hash tag.
	ErrInvalid = errors.New("gamestore: invalid argument")
)
