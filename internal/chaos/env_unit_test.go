package chaos

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
)

// TestRunEnvSkipsOnlyWhenUnsetAndNamesTheMakeVariableOfEachBadValue: a
// plain go test (neither CHAOS_SEED nor CHAOS_DURATION set) skips; make
// chaos's values parse to the run, defaults filling INTAKE and STORE; an
// empty SEED or DURATION (make chaos SEED=) fails instead of skipping;
// and each wrong value is one line naming the make variable, its CHAOS_
// variable, what it takes and what it got, DURATION bounded from 30s to
// 24h; the bot processes log at warn unless LOG_LEVEL says otherwise,
// and a pass keeps their logs only with CHAOS_KEEP_LOGS.
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
			runConfig{Seed: 11, Duration: 10 * time.Minute, Intake: intakePoller, Store: storeStandalone, LogLevel: "warn"}, nil},
		{"webhook on a cluster, at debug, logs kept", map[string]string{envSeed: "0", envDuration: "30s", envIntake: "webhook", envStore: "cluster",
			envLogLevel: "debug", envKeepLogs: "1"}, true,
			runConfig{Seed: 0, Duration: 30 * time.Second, Intake: intakeWebhook, Store: storeCluster, LogLevel: "debug", KeepLogs: true}, nil},
		{"the longest", map[string]string{envSeed: "18446744073709551615", envDuration: "24h", envKeepLogs: "0"}, true,
			runConfig{Seed: 1<<64 - 1, Duration: 24 * time.Hour, Intake: intakePoller, Store: storeStandalone, LogLevel: "warn"}, nil},
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
		{"a bad log level and keep", map[string]string{envSeed: "7", envDuration: "1m", envLogLevel: "verbose", envKeepLogs: "yes"}, true, runConfig{},
			[]string{`LOG_LEVEL (CHAOS_LOG_LEVEL): debug, info, warn or error, got "verbose"`, `CHAOS_KEEP_LOGS: 1 to keep a passing run's logs, or 0, got "yes"`}},
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

// TestBotProcessesLogAtTheRunsLogLevel: every bot process's environment
// carries the run's LOG_LEVEL (make chaos LOG_LEVEL=debug), warn when the
// run names none.
func TestBotProcessesLogAtTheRunsLogLevel(t *testing.T) {
	for _, tc := range []struct{ asked, want string }{{"debug", "debug"}, {"error", "error"}, {"", "warn"}} {
		st := &stack{t: t, emu: testkit.NewEmulator(t), addr: "127.0.0.1:1", intake: intakePoller, logLevel: cmp.Or(tc.asked, defaultLogLevel)}
		for _, sl := range []*slot{{name: "poller", role: "poller"}, {name: "worker-1", role: "worker"}} {
			env := st.env(sl)
			require.Contains(t, env, "LOG_LEVEL="+tc.want, "%s", sl.name)
			require.Len(t, slices.DeleteFunc(env, func(e string) bool { return !strings.HasPrefix(e, "LOG_LEVEL=") }), 1, "%s", sl.name)
		}
	}
}

// TestARecordThatCannotBeWrittenStopsTheRunBeforeItStarts: CHAOS_RECORD
// in a directory that does not exist, or a directory, is one line naming
// the variable and the path; a writable path passes, its rows kept, and a
// missing file is created; none set passes.
func TestARecordThatCannotBeWrittenStopsTheRunBeforeItStarts(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "rows.jsonl")
	require.NoError(t, os.WriteFile(kept, []byte("{\"seed\":1}\n"), 0o644))
	tests := []struct {
		name, path string
		bad        bool
	}{
		{"none", "", false},
		{"an existing record", kept, false},
		{"a new file", filepath.Join(dir, "new.jsonl"), false},
		{"a missing directory", filepath.Join(dir, "nonexistent", "rows.jsonl"), true},
		{"a directory", dir, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := recordWritable(tc.path)
			if tc.bad {
				require.ErrorContains(t, err, "CHAOS_RECORD: cannot append the run's figures to \""+tc.path+"\"")
				require.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			if tc.path != "" {
				require.FileExists(t, tc.path)
			}
		})
	}
	b, err := os.ReadFile(kept)
	require.NoError(t, err)
	require.Equal(t, "{\"seed\":1}\n", string(b), "the record's rows are kept")
}
