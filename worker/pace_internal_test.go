package worker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The claim pacer's bounds hold on its own clock whatever the claim loop's
// delays (timers firing late, a loaded machine, a stall): at 40/s, the
// claims that start within any 250 ms (closed) take at most 10 + claimCredit
// messages besides the last claim's, a claim that starts after m messages
// starts no earlier than (m - claimCredit) / rate after the first, and a
// prompt loop claims exactly at the rate (the spreading costs no
// throughput). The loop sleeps what wait says, then its delay.
func TestClaimPacerBoundsHoldWhateverTheLoopsDelays(t *testing.T) {
	const rate, claims = 40, 400
	per := time.Second / rate
	tests := []struct {
		name  string
		batch int // messages per claim (a lane's turn)
		delay func(i int, r *rand.Rand) time.Duration
	}{
		{"a prompt loop", 1, func(int, *rand.Rand) time.Duration { return 0 }},
		{"a loop late by up to 3 shares at each claim", 1, func(_ int, r *rand.Rand) time.Duration {
			return time.Duration(r.Int64N(int64(3 * per)))
		}},
		{"a loop stalled 1 s every 50 claims", 1, func(i int, _ *rand.Rand) time.Duration {
			if i%50 == 49 {
				return time.Second
			}
			return 0
		}},
		{"a loop prompt or 200 ms late at random", 1, func(_ int, r *rand.Rand) time.Duration {
			if r.IntN(4) == 0 {
				return 200 * time.Millisecond
			}
			return 0
		}},
		{"turns of 3 messages, late at random", 3, func(_ int, r *rand.Rand) time.Duration {
			return time.Duration(r.Int64N(int64(10 * per)))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			p := newClaimPacer(rate)
			now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
			var starts []time.Time // one per message, its claim's start
			for i := range claims {
				now = now.Add(tc.delay(i, r))
				if d := p.wait(now); d > 0 {
					now = now.Add(d)
				}
				require.Equal(t, 0, len(starts)%tc.batch)
				if len(starts) > 0 {
					m := len(starts)
					require.GreaterOrEqual(t, now.Sub(starts[0]), time.Duration(m-claimCredit)*per,
						"claim %d, after %d messages", i, m)
				}
				for range tc.batch {
					starts = append(starts, now)
				}
				p.claimed(now, tc.batch)
			}
			const window = 250 * time.Millisecond
			bound := int(window/per) + claimCredit + tc.batch
			busiest := 0
			for i := range starts {
				in := 0
				for _, s := range starts[i:] {
					if s.Sub(starts[i]) <= window {
						in++
					}
				}
				busiest = max(busiest, in)
				require.LessOrEqual(t, in, bound, "messages claimed in the 250 ms from message %d", i)
			}
			if tc.name == "a prompt loop" {
				// 1 + claimCredit at once, then one per share.
				require.Equal(t, time.Duration(claims-1-claimCredit)*per, starts[len(starts)-1].Sub(starts[0]))
				require.Equal(t, bound, busiest)
			}
		})
	}
}

// Without a rate the pacer never makes a claim wait.
func TestClaimPacerWithoutARateNeverWaits(t *testing.T) {
	p := newClaimPacer(0)
	now := time.Now()
	for range 100 {
		require.LessOrEqual(t, p.wait(now), time.Duration(0))
		p.claimed(now, 16)
	}
}

// At a high rate the credit is claimCreditTime of the rate, not 4
// messages: at 1,000/s a loop late by 100 ms catches up 20 messages at
// once (4 ms would lose the rest of a timer's lateness on a busy host for
// good), then claims one per share; at 40/s it stays claimCredit.
func TestClaimPacerCreditIsTimeAtHighRates(t *testing.T) {
	tests := []struct {
		rate, credit int
	}{
		{40, claimCredit},
		{200, claimCredit},
		{1000, 20},
		{1130, 23},
	}
	for _, tc := range tests {
		p := newClaimPacer(tc.rate)
		require.Equal(t, tc.credit, p.credit, "rate %d", tc.rate)
	}
	p := newClaimPacer(1000)
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	p.claimed(now, 1)
	now = now.Add(100 * time.Millisecond) // late
	prompt := 0
	for p.wait(now) <= 0 {
		p.claimed(now, 1)
		prompt++
	}
	require.Equal(t, 1+20, prompt, "claims at once after the late wake")
	require.Equal(t, time.Millisecond, p.wait(now))
}

// A claim of several lanes starts when the last of its messages is due,
// never ahead of the rate: at 1,000/s, once the credit is spent, a claim
// of one message waits 1 ms and one of five waits 5 ms; after a late wake
// the credit covers a claim of several at once.
func TestClaimPacerStartsAClaimOfSeveralLanesWhenAllItsMessagesAreDue(t *testing.T) {
	p := newClaimPacer(1000)
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for p.wait(now) <= 0 {
		p.claimed(now, 1)
	}
	require.Equal(t, time.Millisecond, p.waitFor(now, 1))
	require.Equal(t, 5*time.Millisecond, p.waitFor(now, 5))
	now = now.Add(5 * time.Millisecond)
	require.LessOrEqual(t, p.waitFor(now, 5), time.Duration(0))
	p.claimed(now, 5)
	p.answered(5, 2) // two lanes served: three messages given back
	require.Equal(t, time.Duration(0), p.waitFor(now, 3))
	require.Equal(t, time.Millisecond, p.waitFor(now, 4))
	now = now.Add(time.Second) // late: the credit (20) covers 16 at once
	require.LessOrEqual(t, p.waitFor(now, 16), time.Duration(0))
}
