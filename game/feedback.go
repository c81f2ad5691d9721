package game

// Feedback is the score of one guess against the secret.
type Feedback struct {
	// Green is the number of symbols right and in the right place (🟢).
	Green int `json:"green"`
	// Yellow is the number of symbols right but in the wrong place (🟡).
	Yellow int `json:"yellow"`
}

// Score returns the Mastermind feedback of guess against secret (same
// length, symbols compared as they are): Green counts equal positions, and
// Yellow = Σ over symbols of min(count in secret, count in guess) − Green, so
// each secret symbol is matched at most once and greens take priority.
func Score(secret, guess []string) Feedback {
	var fb Feedback
	counts := make(map[string]int, len(secret))
	for i, s := range secret {
		if i < len(guess) && guess[i] == s {
			fb.Green++
		}
		counts[s]++
	}
	common := 0
	for _, g := range guess {
		if counts[g] > 0 {
			counts[g]--
			common++
		}
	}
	fb.Yellow = common - fb.Green
	return fb
}

// Points returns the points earned by a win on the given attempt (1-based)
// out of maxAttempts: (maxAttempts − attempt + 1) × 10, i.e. (attempts left
// after the winning guess + 1) × 10. With 10 attempts: 100 for a win on the
// first guess, 10 for a win on the tenth. It is 0 for an attempt out of range.
func Points(attempt, maxAttempts int) int {
	if attempt < 1 || attempt > maxAttempts {
		return 0
	}
	return (maxAttempts - attempt + 1) * 10
}
