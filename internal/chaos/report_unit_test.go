package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// passing is a run's figures that pass every check: seed 11, a minute.
func passing() figures {
	return figures{Seed: 11, Duration: time.Minute.String(), Intake: intakeWebhook, Faults: map[string]int{faultKill: 1},
		InFlight: 41, Sent: 1800, Limiter429: 1, Settled: true, SettleEnd: settleDrained, SettleSecs: 1.04,
		GoroutinesJudged: 6, MemBefore: 5 << 19, MemAfter: 14260634, verdict: verdict{Duplicates: 3}}
}

// TestTheReportSaysCountsWithUnitsAndEndsWithItsVerdict: the report shows
// counts by name without Go's map syntax, the fault's N with its unit
// (net-slow's ms, tg-429's sends), Valkey's memory in MiB as the docs'
// table does, and ends with a one-line verdict: PASS with the run's
// figures, or FAIL naming what failed and the command that reproduces it
// (the failure above when the figures pass but the test failed).
func TestTheReportSaysCountsWithUnitsAndEndsWithItsVerdict(t *testing.T) {
	const repro = "make chaos SEED=11 DURATION=1m0s INTAKE=webhook"
	lost := passing()
	lost.Lost, lost.Limiter429, lost.Problems = 3, 12, []string{"group -100001: update 9 (guess, round 1) got no reply"}
	tests := []struct {
		name   string
		f      figures
		failed bool
		last   string
	}{
		{"a pass", passing(), false,
			"chaos: PASS seed 11, 1m0s: lost 0, duplicates 3 of 41 allowed, order 0, wrong 0, limiter 429s 1 of 9 allowed, problems 0, settling drained after 1.0s"},
		{"a fail of the figures", lost, true,
			"chaos: FAIL seed 11, 1m0s: lost 3, duplicates 3 of 41 allowed, order 0, wrong 0, limiter 429s 12 of 9 allowed, problems 1, settling drained after 1.0s; " +
				"failing: problems 1, lost 3, limiter 429s 12 of 9 allowed; reproduce: " + repro},
		{"a fail of the test alone", passing(), true,
			"chaos: FAIL seed 11, 1m0s: lost 0, duplicates 3 of 41 allowed, order 0, wrong 0, limiter 429s 1 of 9 allowed, problems 0, settling drained after 1.0s; " +
				"failing: the failure above; reproduce: " + repro},
	}
	faults := []applied{
		{fault: fault{At: 12500 * time.Millisecond, Kind: faultSlow, Target: faultSlow, For: 3200 * time.Millisecond, N: 180}, Began: 12500 * time.Millisecond},
		{fault: fault{At: 40 * time.Second, Kind: fault429, Target: fault429, N: 5}, Began: 40 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.LeftOut = map[string]int{faultRestart: 2, faultCut: 1}
			f.ConsoleFaults = map[string]int{faultKill: 1}
			f.ConsoleOutcomes = map[string]int{"no answer": 3, "200": 80, "303 /": 1}
			f.Failures = map[string]int{"timed out": 1, "refused": 3, "HTTP 500": 1}
			text := reportText(f, faults, nil, nil, tc.failed, repro)
			require.NotContains(t, text, "map[")
			for _, want := range []string{
				"(left out in a cluster run: valkey-restart 2, net-cut 1)",
				"net-slow        for 3.2s 180 ms latency  began 12.5s, 0 sends in flight",
				"tg-429          5 sendMessage  began 40.0s",
				"Valkey used_memory 2.5 MiB → 13.6 MiB",
				"console: 1 faults of its process (kill-9 1)",
				"outcomes 80 × 200, 1 × 303 /, 3 × no answer;",
				"failed (1 × HTTP 500, 3 × refused, 1 × timed out;",
			} {
				require.Contains(t, text, want)
			}
			lines := strings.Split(text, "\n")
			require.Equal(t, tc.last, lines[len(lines)-1])
			require.Equal(t, tc.last, verdictLine(11, time.Minute, &f, tc.failed, repro), "the run's last line says the same")
		})
	}
	require.Equal(t, "chaos: FAIL seed 7, 10m0s: stopped before its checks (the failure above); reproduce: make chaos SEED=7 DURATION=10m0s",
		verdictLine(7, 10*time.Minute, nil, true, "make chaos SEED=7 DURATION=10m0s"))
}
