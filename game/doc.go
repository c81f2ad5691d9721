// Package game implements the rules of Codemojex, an emoji code-breaking game
// with Mastermind rules, as pure functions over a plain serializable State.
//
// The package does no I/O: it knows nothing of storage or chat transports.
// Randomness is injected (an io.Reader; nil means crypto/rand), so tests are
// deterministic.
//
// Rules (classic Mastermind, Meirowitz 1970):
//
//   - A secret code of Config.CodeLength symbols (default 4) is drawn
//     uniformly from Config.Palette (default 🍎 🍌 🍇 🍒 🍋 🥝); symbols may
//     repeat.
//   - The players have Config.MaxAttempts guesses (default 10).
//   - Each valid guess is scored: green (🟢) = symbols right and in the right
//     place; yellow (🟡) = sum over palette symbols of
//     min(count in secret, count in guess), minus green. The remaining pegs
//     are shown as ⚪.
//   - An invalid guess (see ParseGuess) is rejected with a *GuessError and
//     does not use an attempt.
//   - The game is won when a guess has CodeLength greens, lost when the last
//     attempt is used without winning (the code is then revealed), or ended
//     by GiveUp.
//   - A win is worth Points(attempt, maxAttempts) = (attempts left after the
//     winning guess + 1) × 10 points: 100 for a first-try win with 10
//     attempts, 10 for a win on the last attempt.
//
// Typical use:
//
//	st, err := game.New(game.DefaultConfig(), nil)
//	st, res, err = st.Guess("🍎 🍌 🍇 🍒")
//	var ge *game.GuessError
//	if errors.As(err, &ge) { /* tell the player ge.Error(); no attempt used */ }
//	fmt.Println(res.Text())
package game
