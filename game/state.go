package game

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// StateVersion is the version of the State JSON layout written by this
// package (State.Version). DecodeState rejects any other.
const StateVersion = 1

// Status is where a game stands. Its values are stable strings, stored in
// the state's JSON.
type Status string

// The statuses of a game.
const (
	Playing Status = "playing"
	Won     Status = "won"
	Lost    Status = "lost"
	GaveUp  Status = "gave_up"
)

// Over reports whether a game with this status has ended.
func (s Status) Over() bool { return s == Won || s == Lost || s == GaveUp }

// Turn is one accepted guess and its feedback.
type Turn struct {
	// Guess holds CodeLength palette symbols, in the palette's spelling.
	Guess []string `json:"guess"`
	Feedback
	// By is the display name of the player who made the guess ("" when
	// not recorded); shown on group boards.
	By string `json:"by,omitempty"`
}

// State is a whole game: a plain value, serializable as JSON with stable
// field names. Its methods are pure transitions returning a new State; they
// never modify the receiver or share its slices with the result.
type State struct {
	// Version is the JSON layout version, StateVersion.
	Version int `json:"version"`
	// ID identifies this game: 16 hex characters drawn at New.
	ID string `json:"id"`
	// Config is the game's palette, code length and attempts, fixed at New.
	Config Config `json:"config"`
	// Secret holds CodeLength palette symbols.
	Secret []string `json:"secret"`
	// Turns are the accepted guesses, in order.
	Turns []Turn `json:"turns"`
	// Status is Playing until the game is won, lost or given up.
	Status Status `json:"status"`
}

// Result is the outcome of one accepted guess.
type Result struct {
	Turn
	// Attempt is the 1-based number of this guess; MaxAttempts the limit.
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"max_attempts"`
	// Status is the game's status after this guess (Playing, Won or Lost).
	Status Status `json:"status"`
	// Points earned by this guess: Points(Attempt, MaxAttempts) on a win,
	// else 0.
	Points int `json:"points"`
	// Secret is revealed when the game ended with this guess (Won or Lost),
	// else nil.
	Secret []string `json:"secret,omitempty"`
}

// New starts a game: cfg with defaults applied (Config.WithDefaults) must be
// valid, and the secret and ID are drawn from rng (nil means crypto/rand).
// The secret is drawn first, one byte per symbol (bytes that would bias the
// draw are skipped), then 8 bytes of ID.
func New(cfg Config, rng io.Reader) (State, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return State{}, err
	}
	rng = source(rng)
	secret := make([]string, cfg.CodeLength)
	for i := range secret {
		k, err := randIndex(rng, len(cfg.Palette))
		if err != nil {
			return State{}, fmt.Errorf("new game: %w", err)
		}
		secret[i] = cfg.Palette[k]
	}
	id, err := randomID(rng)
	if err != nil {
		return State{}, fmt.Errorf("new game: %w", err)
	}
	return State{Version: StateVersion, ID: id, Config: cfg, Secret: secret, Turns: []Turn{}, Status: Playing}, nil
}

// AttemptsUsed returns the number of accepted guesses.
func (s State) AttemptsUsed() int { return len(s.Turns) }

// AttemptsLeft returns the number of guesses still allowed.
func (s State) AttemptsLeft() int { return max(s.Config.MaxAttempts-len(s.Turns), 0) }

// Over reports whether the game has ended.
func (s State) Over() bool { return s.Status.Over() }

// Guess plays text as the next guess. On success it returns the new state and
// the guess's Result. A text that is not a valid guess gives a *GuessError
// (see ParseGuess), and a game already over gives an error wrapping
// ErrGameOver; in both cases the returned state is s unchanged and no attempt
// is used. A state not made by New or DecodeState (such as the zero State)
// gives an error wrapping ErrInvalidState.
func (s State) Guess(text string) (State, Result, error) {
	return s.GuessBy(text, "")
}

// GuessBy is Guess made by player (a display name recorded in the Turn's
// By, shown on group boards; "" for none).
func (s State) GuessBy(text, player string) (State, Result, error) {
	if err := s.playable("guess"); err != nil {
		return s, Result{}, err
	}
	guess, err := ParseGuess(text, s.Config.Palette, s.Config.CodeLength)
	if err != nil {
		return s, Result{}, err
	}
	turn := Turn{Guess: guess, Feedback: Score(s.Secret, guess), By: player}
	next := s.clone()
	next.Turns = append(next.Turns, turn)
	res := Result{Turn: turn, Attempt: len(next.Turns), MaxAttempts: s.Config.MaxAttempts, Status: Playing}
	switch {
	case turn.Green == s.Config.CodeLength:
		next.Status = Won
		res.Points = Points(res.Attempt, res.MaxAttempts)
	case len(next.Turns) >= s.Config.MaxAttempts:
		next.Status = Lost
	}
	res.Status = next.Status
	if next.Over() {
		res.Secret = slices.Clone(s.Secret)
	}
	res.Turn.Guess = slices.Clone(guess)
	return next, res, nil
}

// GiveUp ends a game in progress with status GaveUp (the caller reveals
// Secret). A game already over gives an error wrapping ErrGameOver and s
// unchanged.
func (s State) GiveUp() (State, error) {
	if err := s.playable("give up"); err != nil {
		return s, err
	}
	next := s.clone()
	next.Status = GaveUp
	return next, nil
}

// playable returns nil for a game in progress, an error wrapping
// ErrGameOver for one that ended, and one wrapping ErrInvalidState for a
// state that was never started (such as the zero State).
func (s State) playable(op string) error {
	switch {
	case s.Status == Playing && s.Config.CodeLength > 0:
		return nil
	case s.Over():
		return fmt.Errorf("%s: %w (%s)", op, ErrGameOver, s.Status)
	default:
		return fmt.Errorf("%s: %w: game not started (status %q)", op, ErrInvalidState, s.Status)
	}
}

// clone returns a deep copy of s.
func (s State) clone() State {
	c := s
	c.Config = s.Config.clone()
	c.Secret = slices.Clone(s.Secret)
	c.Turns = make([]Turn, len(s.Turns), len(s.Turns)+1)
	for i, t := range s.Turns {
		c.Turns[i] = Turn{Guess: slices.Clone(t.Guess), Feedback: t.Feedback, By: t.By}
	}
	return c
}

// Validate checks the invariants of a state (for one read back from
// storage): known Version, non-empty ID, valid Config, a secret and guesses
// of CodeLength palette symbols with consistent feedback, no more turns than
// MaxAttempts, and a Status that agrees with the turns. Errors wrap
// ErrInvalidState.
func (s State) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidState, fmt.Sprintf(format, a...))
	}
	if s.Version != StateVersion {
		return bad("version %d, want %d", s.Version, StateVersion)
	}
	if s.ID == "" {
		return bad("empty id")
	}
	if err := s.Config.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	inPalette := func(code []string) bool {
		if len(code) != s.Config.CodeLength {
			return false
		}
		for _, c := range code {
			if !slices.Contains(s.Config.Palette, c) {
				return false
			}
		}
		return true
	}
	if !inPalette(s.Secret) {
		return bad("secret is not %d palette symbols", s.Config.CodeLength)
	}
	if len(s.Turns) > s.Config.MaxAttempts {
		return bad("%d turns, more than %d attempts", len(s.Turns), s.Config.MaxAttempts)
	}
	won := false
	for i, t := range s.Turns {
		if !inPalette(t.Guess) || Score(s.Secret, t.Guess) != t.Feedback {
			return bad("turn %d is not a scored guess of %d palette symbols", i+1, s.Config.CodeLength)
		}
		if won {
			return bad("turn %d follows a win", i+1)
		}
		won = t.Green == s.Config.CodeLength
	}
	lost := !won && len(s.Turns) == s.Config.MaxAttempts
	var ok bool
	switch {
	case won:
		ok = s.Status == Won
	case lost:
		ok = s.Status == Lost
	default:
		ok = s.Status == Playing || s.Status == GaveUp
	}
	if !ok {
		return bad("status %q disagrees with the turns", s.Status)
	}
	return nil
}

// Encode returns the JSON of s.
func (s State) Encode() ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode game state: %w", err)
	}
	return b, nil
}

// DecodeState parses the JSON of a State and validates it (State.Validate).
func DecodeState(data []byte) (State, error) {
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return State{}, fmt.Errorf("decode game state: %w: %w", ErrInvalidState, err)
	}
	if s.Turns == nil {
		s.Turns = []Turn{}
	}
	if err := s.Validate(); err != nil {
		return State{}, fmt.Errorf("decode game state: %w", err)
	}
	return s, nil
}
