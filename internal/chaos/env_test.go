package chaos

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// Environment of make chaos: each CHAOS_* variable is set by the make
// variable named in envVar (the Makefile's chaos target).
const (
	envSeed     = "CHAOS_SEED"      // the seed (an unsigned integer)
	envDuration = "CHAOS_DURATION"  // the load's duration (a Go duration, minDuration to maxDuration)
	envRecord   = "CHAOS_RECORD"    // a file the run's figures are appended to (JSON lines)
	envIntake   = "CHAOS_INTAKE"    // how updates come in: poller (the default) or webhook
	envStore    = "CHAOS_STORE"     // the Valkey deployment: standalone (the default: a primary with a replica) or cluster
	envLogLevel = "CHAOS_LOG_LEVEL" // the bot processes' LOG_LEVEL (defaultLogLevel when empty)
	envKeepLogs = "CHAOS_KEEP_LOGS" // 1: write the bot processes' output to a chaos-logs-* directory on a pass too
)

// The bounds of a run's DURATION: below a minute's half the faults have
// no room (settleMargin) and the checker little to read; above a day the
// context's deadline (the load, the settling's cap and 5 minutes) and the
// in-memory history and process output stop being reasonable.
const (
	minDuration = 30 * time.Second
	maxDuration = 24 * time.Hour
)

// defaultLogLevel is the bot processes' LOG_LEVEL unless CHAOS_LOG_LEVEL
// says otherwise: warnings and errors, what a failed run's logs need
// (each process's output is held in the test's memory until the end: a
// 10-minute run at debug holds far more).
const defaultLogLevel = "warn"

// runConfig is one make chaos run as its environment asks for it.
type runConfig struct {
	Seed     uint64
	Duration time.Duration // minDuration to maxDuration
	Intake   string        // intakePoller or intakeWebhook
	Store    string        // storeStandalone or storeCluster
	LogLevel string        // the bot processes' LOG_LEVEL: debug, info, warn or error
	KeepLogs bool          // write the processes' output to a chaos-logs-* directory on a pass too
}

// envVar names CHAOS_* variable env as a user of make chaos meets it:
// "SEED (CHAOS_SEED)", the make variable first (CHAOS_KEEP_LOGS is make
// chaos's own name).
func envVar(env string) string {
	switch env {
	case envSeed:
		return "SEED (" + env + ")"
	case envDuration:
		return "DURATION (" + env + ")"
	case envIntake:
		return "INTAKE (" + env + ")"
	case envStore:
		return "STORE (" + env + ")"
	case envLogLevel:
		return "LOG_LEVEL (" + env + ")"
	}
	return env
}

// badEnv is the one-line error for variable env holding got, which should
// be want: `SEED (CHAOS_SEED): an unsigned whole number, got "-5"`.
func badEnv(env, want, got string) error {
	return fmt.Errorf("%s: %s, got %q", envVar(env), want, got)
}

// parseRunEnv reads a make chaos run's configuration through lookup (as
// os.LookupEnv). set is false when neither CHAOS_SEED nor CHAOS_DURATION
// is set at all (a plain go test: TestChaos skips); once either is set,
// both must hold a value (make chaos always sets both, so an empty SEED=
// or DURATION= fails rather than skipping). CHAOS_INTAKE, CHAOS_STORE and
// CHAOS_LOG_LEVEL empty or unset take their defaults (poller, standalone,
// warn); CHAOS_KEEP_LOGS is a strconv.ParseBool value ("" false). Errors:
// one line per variable that is wrong (badEnv), joined (errors.Join).
func parseRunEnv(lookup func(string) (string, bool)) (cfg runConfig, set bool, err error) {
	s, seedSet := lookup(envSeed)
	d, durSet := lookup(envDuration)
	if !seedSet && !durSet {
		return runConfig{}, false, nil
	}
	var errs []error
	seed, perr := strconv.ParseUint(s, 10, 64)
	if perr != nil {
		errs = append(errs, badEnv(envSeed, "an unsigned whole number", s))
	}
	dur, perr := time.ParseDuration(d)
	if perr != nil || dur < minDuration || dur > maxDuration {
		errs = append(errs, badEnv(envDuration, fmt.Sprintf("a Go duration from %s to %s such as 10m", durText(minDuration), durText(maxDuration)), d))
	}
	get := func(env string) string { v, _ := lookup(env); return v }
	intake := cmp.Or(get(envIntake), intakePoller)
	if !slices.Contains([]string{intakePoller, intakeWebhook}, intake) {
		errs = append(errs, badEnv(envIntake, intakePoller+" or "+intakeWebhook, intake))
	}
	store := cmp.Or(get(envStore), storeStandalone)
	if !slices.Contains([]string{storeStandalone, storeCluster}, store) {
		errs = append(errs, badEnv(envStore, storeStandalone+" or "+storeCluster, store))
	}
	level := cmp.Or(get(envLogLevel), defaultLogLevel)
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, level) {
		errs = append(errs, badEnv(envLogLevel, "debug, info, warn or error", level))
	}
	keep := false
	if k := get(envKeepLogs); k != "" {
		if keep, perr = strconv.ParseBool(k); perr != nil {
			errs = append(errs, badEnv(envKeepLogs, "1 to keep a passing run's logs, or 0", k))
		}
	}
	if len(errs) > 0 {
		return runConfig{}, true, errors.Join(errs...)
	}
	return runConfig{Seed: seed, Duration: dur, Intake: intake, Store: store, LogLevel: level, KeepLogs: keep}, true, nil
}

// durText renders a whole number of seconds, minutes or hours as make
// chaos takes it: 30s, 10m, 24h (time.Duration's String says 24h0m0s).
func durText(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// recordWritable checks before a run that CHAOS_RECORD (path; "": none)
// can be appended to, so a run of minutes is not lost to a record it
// cannot write at its end: it opens the file to append, creating it
// (empty) when missing, and closes it. Errors: one line naming the make
// variable, the path and the cause.
func recordWritable(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("CHAOS_RECORD: cannot append the run's figures to %q: %w", path, err)
	}
	return f.Close()
}
