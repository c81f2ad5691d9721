package consumer

import (
	"math/rand/v2"
	"time"
)

// Backoff shapes the waits between retries: retry n (0-based) waits Base ×
// 2^n, at most Max, spread by Jitter. The zero value waits nothing.
type Backoff struct {
	// Base is the first wait; Max caps every wait before the jitter.
	Base, Max time.Duration
	// Jitter is the random share of a wait, 0..1: a wait d is drawn
	// uniformly from [d × (1 - Jitter), d × (1 + Jitter)) [0: none]. 0.2 is
	// ±20%; 1 draws from [0, 2d) (full jitter around d).
	Jitter float64
}

// Delay returns the wait before retry number attempt+1 (attempt: the
// failures so far, from 0): Base × 2^attempt, at most Max, then jittered.
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Base
	for i := 0; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	return b.jitter(min(d, b.Max))
}

// Next returns the wait after one of prev (0 before the first): prev
// doubled, at least Base and at most Max, with no jitter (a caller that
// keeps its last wait rather than a count of failures).
func (b Backoff) Next(prev time.Duration) time.Duration {
	return min(max(prev*2, b.Base), b.Max)
}

func (b Backoff) jitter(d time.Duration) time.Duration {
	if b.Jitter <= 0 || d <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 - b.Jitter + 2*b.Jitter*rand.Float64()))
}
