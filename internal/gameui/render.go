package gameui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/i18n"
)

// The game's texts in a language: package game renders them in English
// (and does no I/O, so it knows no catalog); these render the same texts
// from the catalog (internal/i18n), so that in English they are package
// game's byte for byte (TestEnglishCatalogRendersPackageGamesTexts).

func palette(cfg game.Config) string { return strings.Join(cfg.Palette, " ") }

// turnLine is game.Turn.Line: "🍎🍌🍇🍒  🟢🟢🟡⚪  attempt 3/10".
func turnLine(t i18n.Texts, turn game.Turn, attempt, maxAttempts int) string {
	return t.T("turn_line", map[string]any{"Guess": strings.Join(turn.Guess, ""), "Pegs": turn.Pegs(len(turn.Guess)),
		"Attempt": attempt, "Max": maxAttempts})
}

// winText is game.WinText (plural by attempt).
func winText(t i18n.Texts, attempt, maxAttempts, points int) string {
	return t.N("win", attempt, map[string]any{"Attempt": attempt, "Max": maxAttempts, "Points": points})
}

// lossText is game.LossText; giveUpText game.GiveUpText.
func lossText(t i18n.Texts, secret []string) string {
	return t.T("loss", map[string]any{"Code": strings.Join(secret, "")})
}

func giveUpText(t i18n.Texts, secret []string) string {
	return t.T("give_up", map[string]any{"Code": strings.Join(secret, "")})
}

// attemptsLeft is "N of M attempts left." (plural by N).
func attemptsLeft(t i18n.Texts, s game.State) string {
	n := s.AttemptsLeft()
	return t.N("attempts_left", n, map[string]any{"Left": n, "Max": s.Config.MaxAttempts})
}

// resultText is game.Result.Text: the reply to a guess.
func resultText(t i18n.Texts, r game.Result) string {
	line := turnLine(t, r.Turn, r.Attempt, r.MaxAttempts)
	switch r.Status {
	case game.Won:
		return line + "\n" + winText(t, r.Attempt, r.MaxAttempts, r.Points)
	case game.Lost:
		return line + "\n" + lossText(t, r.Secret)
	default:
		return line
	}
}

// stateBoard is game.State.Board: the turns, then the status line.
func stateBoard(t i18n.Texts, s game.State) string {
	var b strings.Builder
	for i, turn := range s.Turns {
		b.WriteString(turnLine(t, turn, i+1, s.Config.MaxAttempts))
		b.WriteByte('\n')
	}
	b.WriteString(endText(t, s, false))
	if !s.Over() {
		b.WriteString(attemptsLeft(t, s))
	}
	return b.String()
}

// endText is the outcome of a game over ("" while it is played): the win
// (with its player on a group board), the loss or the give-up, each
// revealing the code.
func endText(t i18n.Texts, s game.State, group bool) string {
	switch s.Status {
	case game.Won:
		n := len(s.Turns)
		w := winText(t, n, s.Config.MaxAttempts, game.Points(n, s.Config.MaxAttempts))
		if group && s.Turns[n-1].By != "" {
			w += " (" + s.Turns[n-1].By + ")"
		}
		return w
	case game.Lost:
		return lossText(t, s.Secret)
	case game.GaveUp:
		return giveUpText(t, s.Secret)
	}
	return ""
}

// rulesLine is game.State.RulesLine, rendered once per language and
// config (i18n.Texts.Memo: it heads every board, and its template run was
// a third of a board's rendering).
func rulesLine(t i18n.Texts, cfg game.Config) string {
	pal := palette(cfg)
	return t.Memo("rules_line\x00"+strconv.Itoa(cfg.CodeLength)+"\x00"+pal, func() string {
		return t.N("rules_line", cfg.CodeLength, map[string]any{"N": cfg.CodeLength, "Palette": pal})
	})
}

// boardText is game.State.BoardText: the board message.
func boardText(t i18n.Texts, s game.State, comps []game.Composition, group bool) string {
	var b strings.Builder
	b.WriteString(rulesLine(t, s.Config))
	b.WriteString("\n")
	for i, turn := range s.Turns {
		fmt.Fprintf(&b, "\n%s. %s  %s", t.Num(i+1), strings.Join(turn.Guess, ""), turn.Pegs(len(turn.Guess)))
		if group && turn.By != "" {
			b.WriteString("  " + turn.By)
		}
	}
	if len(s.Turns) > 0 {
		b.WriteString("\n")
	}
	if s.Over() {
		return b.String() + "\n" + endText(t, s, group)
	}
	if !group {
		var c game.Composition
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
	return b.String() + "\n" + attemptsLeft(t, s)
}

// helpText is /help's answer for game config cfg in t's language: the
// rules (game.HelpText), then the commands and how to guess in a group
// (the same for every /help, so New builds it once per language).
func helpText(t i18n.Texts, cfg game.Config) string {
	cfg = cfg.WithDefaults()
	var b strings.Builder
	b.WriteString(t.N("help", cfg.MaxAttempts, map[string]any{"N": cfg.CodeLength, "Palette": palette(cfg), "Max": cfg.MaxAttempts,
		"First": game.Points(1, cfg.MaxAttempts)}))
	b.WriteString(t.T("help_commands", nil))
	for _, c := range commands(t) {
		fmt.Fprintf(&b, "/%s — %s\n", c.Command, c.Description)
	}
	b.WriteString(t.T("help_groups", nil))
	return b.String()
}

// guessErrorText says what is wrong with a rejected guess
// (textInvalidGuess around game.GuessError's Error).
func guessErrorText(t i18n.Texts, ge *game.GuessError) string {
	pal := strings.Join(ge.Palette, " ")
	var why string
	switch ge.Kind {
	case game.WrongCount:
		if ge.Got == 0 {
			why = t.N("err_count_none", ge.Need, map[string]any{"N": ge.Need, "Palette": pal})
		} else {
			why = t.N("err_count", ge.Need, map[string]any{"N": ge.Need, "Got": ge.Got})
		}
	case game.NotInPalette:
		why = t.T("err_not_in_palette", map[string]any{"Symbol": ge.Symbol, "Palette": pal})
	case game.Text:
		why = t.N("err_not_emoji", ge.Need, map[string]any{"Symbol": strconv.Quote(ge.Symbol), "N": ge.Need, "Palette": pal})
	default:
		why = t.T("err_invalid", nil)
	}
	return t.T("invalid_guess", map[string]any{"Reason": why})
}
