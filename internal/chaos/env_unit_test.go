package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunEnvSkipsOnlyWhenUnsetAndNamesTheMakeVariableOfEachBadValue: a
// plain go test (neither CHAOS_SEED nor CHAOS_DURATION set) skips; make
// chaos's values parse to the run, defaults filling INTAKE and STORE; an
// empty SEED or DURATION (make chaos SEED=) fails instead of skipping;
// and each wrong value is one line naming the make variable, its CHAOS_
// variable, what it takes and what it got, DURATION bounded from 30s to
// 24h.
func TestRunEnvSkipsOnlyWhenUnsetAndNamesTheMakeVariableOfEachBadValue(t *testing.T) {
	const badDuration = `DURATION (CHAOS_DURATION): a Go duration from 30s to 24h such as 10m, got `
	tests := []struct {
		name string
		env  map[string]string
		set  bool
		want runConfig
		errs []string // the error's lines, in order
	}{
		{"nothing set: go test skips", map[string]string{envIntake: "webhook"}, false, runConfig{}, nil},
		{"make chaos's defaults", map[string]string{envSeed: "11", envDuration: "10m", envIntake: "", envStore: ""}, true,
			runConfig{Seed: 11, Duration: 10 * time.Minute, Intake: intakePoller, Store: storeStandalone}, nil},
		{"webhook on a cluster", map[string]string{envSeed: "0", envDuration: "30s", envIntake: "webhook", envStore: "cluster"}, true,
			runConfig{Seed: 0, Duration: 30 * time.Second, Intake: intakeWebhook, Store: storeCluster}, nil},
		{"the longest", map[string]string{envSeed: "18446744073709551615", envDuration: "24h"}, true,
			runConfig{Seed: 1<<64 - 1, Duration: 24 * time.Hour, Intake: intakePoller, Store: storeStandalone}, nil},
		{"SEED= empty", map[string]string{envSeed: "", envDuration: "60s"}, true, runConfig{},
			[]string{`SEED (CHAOS_SEED): an unsigned whole number, got ""`}},
		{"DURATION= empty", map[string]string{envSeed: "7", envDuration: ""}, true, runConfig{}, []string{badDuration + `""`}},
		{"only SEED set", map[string]string{envSeed: "7"}, true, runConfig{}, []string{badDuration + `""`}},
		{"a negative seed", map[string]string{envSeed: "-5", envDuration: "1m"}, true, runConfig{},
			[]string{`SEED (CHAOS_SEED): an unsigned whole number, got "-5"`}},
		{"a seed past 64 bits", map[string]string{envSeed: "18446744073709551616", envDuration: "1m"}, true, runConfig{},
			[]string{`SEED (CHAOS_SEED): an unsigned whole number, got "18446744073709551616"`}},
		{"a duration without a unit", map[string]string{envSeed: "7", envDuration: "60"}, true, runConfig{}, []string{badDuration + `"60"`}},
		{"a duration under 30s", map[string]string{envSeed: "7", envDuration: "29s"}, true, runConfig{}, []string{badDuration + `"29s"`}},
		{"a duration over 24h", map[string]string{envSeed: "7", envDuration: "24h0m1s"}, true, runConfig{}, []string{badDuration + `"24h0m1s"`}},
		{"a bad intake and store", map[string]string{envSeed: "7", envDuration: "1m", envIntake: "hook", envStore: "replica"}, true, runConfig{},
			[]string{`INTAKE (CHAOS_INTAKE): poller or webhook, got "hook"`, `STORE (CHAOS_STORE): standalone or cluster, got "replica"`}},
		{"every one wrong, each on its line", map[string]string{envSeed: "x", envDuration: "10", envIntake: "x", envStore: "x"}, true, runConfig{},
			[]string{`SEED (CHAOS_SEED): an unsigned whole number, got "x"`, badDuration + `"10"`,
				`INTAKE (CHAOS_INTAKE): poller or webhook, got "x"`, `STORE (CHAOS_STORE): standalone or cluster, got "x"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, set, err := parseRunEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			require.Equal(t, tc.set, set)
			if tc.errs != nil {
				require.Error(t, err)
				require.Equal(t, tc.errs, strings.Split(err.Error(), "\n"))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg)
		})
	}
}
