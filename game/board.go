package game

import (
	"fmt"
	"strings"
)

// Composition is a guess a player is putting together on the board's
// keyboard: up to CodeLength palette symbols, in order.
type Composition struct {
	// Player is the display name shown in front of it on a group board
	// ("" on a private board).
	Player string
	// Symbols are the palette symbols chosen so far.
	Symbols []string
}

// Placeholder marks a position of a composition not chosen yet.
const Placeholder = "_"

// Slots renders c for a code of n symbols: the chosen symbols then
// Placeholder for each one missing, separated by spaces ("🍎 🍌 _ _").
func (c Composition) Slots(n int) string {
	parts := make([]string, 0, max(n, len(c.Symbols)))
	parts = append(parts, c.Symbols...)
	for len(parts) < n {
		parts = append(parts, Placeholder)
	}
	return strings.Join(parts, " ")
}

// RulesLine is the first line of a board: what to find and what the pegs
// mean.
func (s State) RulesLine() string {
	return fmt.Sprintf("🔐 New code: %d emojis from %s (repeats allowed). Tap or type a guess: %s right place, %s wrong place, %s no match.",
		s.Config.CodeLength, strings.Join(s.Config.Palette, " "), PegGreen, PegYellow, PegNone)
}

// BoardText renders the game board, one message kept up to date in place:
// the rules line, every guess with its feedback (numbered, and with its
// player when group is true), then, while playing, the compositions in
// progress (a private board always shows one, "🍎 🍌 _ _"; a group board
// one line per player composing, "Ann: 🍎 _ _ _") and the attempts left;
// once over, the outcome with the code and the points (WinText, LossText,
// GiveUpText).
func (s State) BoardText(comps []Composition, group bool) string {
	var b strings.Builder
	b.WriteString(s.RulesLine())
	b.WriteString("\n")
	for i, t := range s.Turns {
		fmt.Fprintf(&b, "\n%d. %s  %s", i+1, strings.Join(t.Guess, ""), t.Pegs(len(t.Guess)))
		if group && t.By != "" {
			b.WriteString("  " + t.By)
		}
	}
	if len(s.Turns) > 0 {
		b.WriteString("\n")
	}
	switch s.Status {
	case Won:
		n := len(s.Turns)
		b.WriteString("\n" + WinText(n, s.Config.MaxAttempts, Points(n, s.Config.MaxAttempts)))
		if group && s.Turns[n-1].By != "" {
			b.WriteString(" (" + s.Turns[n-1].By + ")")
		}
		return b.String()
	case Lost:
		b.WriteString("\n" + LossText(s.Secret))
		return b.String()
	case GaveUp:
		b.WriteString("\n" + GiveUpText(s.Secret))
		return b.String()
	}
	if !group {
		var c Composition
		if len(comps) > 0 {
			c = comps[0]
		}
		b.WriteString("\n✏️ " + c.Slots(s.Config.CodeLength))
	}
	for _, c := range comps {
		if group && len(c.Symbols) > 0 {
			b.WriteString("\n✏️ " + c.Player + ": " + c.Slots(s.Config.CodeLength))
		}
	}
	fmt.Fprintf(&b, "\n%d of %d attempts left.", s.AttemptsLeft(), s.Config.MaxAttempts)
	return b.String()
}
