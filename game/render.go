package game

import (
	"fmt"
	"strings"
)

// Feedback pegs.
const (
	PegGreen  = "🟢"
	PegYellow = "🟡"
	PegNone   = "⚪"
)

// The user-facing texts below are plain text (no Telegram parse_mode
// markup), so they need no escaping.

// Pegs returns the feedback as codeLength pegs: greens, then yellows, then
// ⚪ for the rest, e.g. "🟢🟢🟡⚪".
func (f Feedback) Pegs(codeLength int) string {
	none := max(codeLength-f.Green-f.Yellow, 0)
	return strings.Repeat(PegGreen, f.Green) + strings.Repeat(PegYellow, f.Yellow) + strings.Repeat(PegNone, none)
}

// Line renders one turn, e.g. "🍎🍌🍇🍒  🟢🟢🟡⚪  attempt 3/10".
func (t Turn) Line(attempt, maxAttempts int) string {
	return fmt.Sprintf("%s  %s  attempt %d/%d", strings.Join(t.Guess, ""), t.Pegs(len(t.Guess)), attempt, maxAttempts)
}

// Text renders the reply to a guess: the feedback line, followed on a win by
// the win message and on a loss by the loss message (which reveals the
// code).
func (r Result) Text() string {
	line := r.Line(r.Attempt, r.MaxAttempts)
	switch r.Status {
	case Won:
		return line + "\n" + WinText(r.Attempt, r.MaxAttempts, r.Points)
	case Lost:
		return line + "\n" + LossText(r.Secret)
	default:
		return line
	}
}

// WinText is the win message, e.g. "🎉 Code cracked in 3/10 attempts! +80 points."
func WinText(attempt, maxAttempts, points int) string {
	noun := "attempts"
	if attempt == 1 {
		noun = "attempt"
	}
	return fmt.Sprintf("🎉 Code cracked in %d/%d %s! +%d points.", attempt, maxAttempts, noun, points)
}

// LossText is the loss message revealing the code, e.g.
// "💥 Out of attempts. The code was 🍎🍌🍇🍒."
func LossText(secret []string) string {
	return fmt.Sprintf("💥 Out of attempts. The code was %s.", strings.Join(secret, ""))
}

// GiveUpText is the message for a game given up, revealing the code.
func GiveUpText(secret []string) string {
	return fmt.Sprintf("🏳️ Given up. The code was %s.", strings.Join(secret, ""))
}

// StartText announces a new game: palette, code length and attempts.
func (s State) StartText() string {
	return fmt.Sprintf("🔐 New code: %d emojis from %s (repeats allowed). You have %d attempts. Send your guess!",
		s.Config.CodeLength, strings.Join(s.Config.Palette, " "), s.Config.MaxAttempts)
}

// Board renders the game so far: one Line per turn, then a status line
// ("N attempts left", or the end message revealing the code).
func (s State) Board() string {
	var b strings.Builder
	for i, t := range s.Turns {
		b.WriteString(t.Line(i+1, s.Config.MaxAttempts))
		b.WriteByte('\n')
	}
	switch s.Status {
	case Won:
		n := len(s.Turns)
		b.WriteString(WinText(n, s.Config.MaxAttempts, Points(n, s.Config.MaxAttempts)))
	case Lost:
		b.WriteString(LossText(s.Secret))
	case GaveUp:
		b.WriteString(GiveUpText(s.Secret))
	default:
		fmt.Fprintf(&b, "%d of %d attempts left.", s.AttemptsLeft(), s.Config.MaxAttempts)
	}
	return b.String()
}

// HelpText describes the rules for cfg (defaults applied).
func HelpText(cfg Config) string {
	cfg = cfg.WithDefaults()
	n, m := cfg.CodeLength, cfg.MaxAttempts
	return fmt.Sprintf(`Codemojex: crack the secret code of %d emojis.

The code is drawn from %s; an emoji may appear more than once.
Send a guess as %d emojis from that palette, with or without spaces.
After each guess you get:
%s an emoji that is right and in the right place,
%s an emoji in the code but in another place,
%s no match.
Each emoji of the code counts once: with a code of one 🍎, a guess of two 🍎 scores one peg.
You have %d attempts; a message that is not a valid guess does not use one.
A win earns (attempts left + 1) × 10 points: %d on the first try, 10 on the last.`,
		n, strings.Join(cfg.Palette, " "), n, PegGreen, PegYellow, PegNone, m, Points(1, m))
}
