package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseBenchOutputReadsEveryMetricAndTheLog: the result line's
// value-unit pairs become metrics (also when output written during the
// run split the benchmark's name from its figures), and the b.Logf lines
// come back without their file:line prefix.
func TestParseBenchOutputReadsEveryMetricAndTheLog(t *testing.T) {
	for _, tc := range []struct {
		name, out string
	}{
		{"one line", "goos: linux\nBenchmarkIntake-2   \t       1\t       450.0 ns/op\t         1.763 1proc/baseline\t      3912 1proc_updates/s\t        48.00 handlers\n" +
			"--- BENCH: BenchmarkIntake-2\n    bench_test.go:173: throughput, 6000 /help\n    bench_test.go:179:   HANDLERS=1  1675 updates/s\nPASS\nok  \tgithub.com/x\t15.5s\n"},
		{"name split from the figures", "BenchmarkIntake-2   \tsome log line a process wrote\n       1\t       450.0 ns/op\t         1.763 1proc/baseline\t      3912 1proc_updates/s\t        48.00 handlers\n" +
			"--- BENCH: BenchmarkIntake-2\n    bench_test.go:173: throughput, 6000 /help\n    bench_test.go:179:   HANDLERS=1  1675 updates/s\nPASS\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, logs, err := parseBenchOutput([]byte(tc.out), "BenchmarkIntake")
			require.NoError(t, err)
			require.Equal(t, map[string]float64{"ns/op": 450, "1proc/baseline": 1.763, "1proc_updates/s": 3912, "handlers": 48}, m)
			require.Equal(t, []string{"throughput, 6000 /help", "  HANDLERS=1  1675 updates/s"}, logs)
		})
	}
}

// TestParseBenchOutputFailsWithoutAResultLine: a run that printed no
// figures (a failed or skipped benchmark) is an error, not an empty section.
func TestParseBenchOutputFailsWithoutAResultLine(t *testing.T) {
	_, _, err := parseBenchOutput([]byte("--- FAIL: BenchmarkIntake-2\nFAIL\n"), "BenchmarkIntake")
	require.ErrorContains(t, err, "no BenchmarkIntake result line")
}

// TestReportNumbersRowsBySectionAndExplainsEach: every section's rows are
// numbered by its place in the run, pipes in a cell are escaped, and each
// section gets its title, its about text, its notes and its charts; the
// header names the commit, the machine, the server and the load.
func TestReportNumbersRowsBySectionAndExplainsEach(t *testing.T) {
	a, b := &table{}, &table{}
	a.add("first | row", "1 jobs/s", "2 jobs/s", ratio(1, 2))
	b.add("second", "3 ms", "4 ms", ratio(3, 4))
	b.add("third", "5", "5", ratio(5, 5))
	b.note("a log")
	b.chart("bench-x.png", "the x chart")
	meta := runMeta{started: time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), took: 90 * time.Second, commit: "abc123", dirty: true,
		machine:   machine{cpus: 2, model: "Some CPU", server: "Valkey 8.0.1", serverBin: "/x/valkey-server", benchTool: "/x/valkey-benchmark", goVersion: "go1.26", kernel: "Linux 6"},
		loadStart: "1.00 2.00 3.00", loadEnd: "4.00 5.00 6.00"}
	var buf bytes.Buffer
	writeReport(&buf, meta, []sectionResult{
		{section: section{name: "alpha", title: "Alpha", about: "What alpha measures."}, table: a, took: time.Second, loadStart: "1.5 1 1", loadEnd: "1.7 1 1"},
		{section: section{name: "beta", title: "Beta", about: "What beta measures."}, table: b, took: 2 * time.Second, loadStart: "1.7 1 1", loadEnd: "1.9 1 1"},
	})
	r := buf.String()
	for _, want := range []string{
		"| commit | `abc123` with uncommitted changes to tracked files |",
		"| CPU | Some CPU, 2 cores (nproc) |",
		"| load average (1, 5, 15 min) | 1.00 2.00 3.00 at the start, 4.00 5.00 6.00 at the end |",
		"| server | Valkey 8.0.1 (`/x/valkey-server`) |",
		"on 2026-12-01 21:00 UTC, in 1m30s.",
		"| 1 | first \\| row | 1 jobs/s | 2 jobs/s | 0.50× |",
		"| 2 | second | 3 ms | 4 ms | 0.75× |",
		"| 2 | third | 5 | 5 | 1.00× |",
		"### 1. Alpha\n\n`-only alpha`: 1s, load average 1.5 at its start, 1.7 at its end.\n\nWhat alpha measures.\n",
		"### 2. Beta\n",
		"What beta measures.\n\na log\n\n![the x chart](bench-x.png)\n",
	} {
		require.Contains(t, r, want)
	}
	require.Less(t, strings.Index(r, "### 1. Alpha"), strings.Index(r, "### 2. Beta"))
}

// TestSectionsHaveDistinctNamesAndSayWhatTheyMeasure: the registry is
// what -only and the report read; a name used twice or an empty about
// would make a section unselectable or unexplained.
func TestSectionsHaveDistinctNamesAndSayWhatTheyMeasure(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range sections() {
		require.False(t, seen[s.name], "section %q registered twice", s.name)
		seen[s.name] = true
		require.NotEmpty(t, s.title, s.name)
		require.NotEmpty(t, strings.TrimSpace(s.about), s.name)
		require.NotNil(t, s.run, s.name)
	}
}

// TestServerVersionPrefersValkeysOwnVersion: Valkey reports a
// redis_version too (its compatibility level); the report names Valkey's.
func TestServerVersionPrefersValkeysOwnVersion(t *testing.T) {
	for _, tc := range []struct{ name, info, want string }{
		{"valkey", "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n", "Valkey 8.0.1"},
		{"redis", "# Server\r\nredis_version:7.0.15\r\n", "Redis 7.0.15"},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, serverVersion(tc.info)) })
	}
}

// TestReportSaysWhichSectionFailedAndWhy: a failed section keeps its
// heading and explanation, has no rows, and the report shows its error.
func TestReportSaysWhichSectionFailedAndWhy(t *testing.T) {
	ok := &table{}
	ok.add("fine", "1", "1", ratio(1, 1))
	var buf bytes.Buffer
	writeReport(&buf, runMeta{}, []sectionResult{
		{section: section{name: "alpha", title: "Alpha", about: "A."}, table: ok},
		{section: section{name: "beta", title: "Beta", about: "B."}, table: &table{}, err: errors.New("beta: the bench timed out")},
	})
	r := buf.String()
	require.Contains(t, r, "| 1 | fine | 1 | 1 | 1.00× |")
	require.NotContains(t, r, "| 2 |")
	require.Contains(t, r, "### 2. Beta\n")
	require.Contains(t, r, "B.\n\n**This section failed in this run**, so it has no rows above:\n\n```\nbeta: the bench timed out\n```\n")
}

// TestSpliceReplacesOnlyTheRunsSectionsAndSaysSo: a partial run spliced
// into a full report takes the place of its own sections' rows and
// explanations (or is added in the registry's order), leaves every other
// row and section as the full run wrote it, and says which sections came
// later, once however often it is spliced.
func TestSpliceReplacesOnlyTheRunsSectionsAndSaysSo(t *testing.T) {
	a, b := &table{}, &table{}
	a.add("alpha row", "1", "2", ratio(1, 2))
	b.add("old beta row", "3", "4", ratio(3, 4))
	full := runMeta{started: time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), commit: "abc123"}
	var buf bytes.Buffer
	writeReport(&buf, full, []sectionResult{
		{section: section{name: "alpha", title: "Alpha", about: "What alpha measures."}, table: a},
		{section: section{name: "beta", title: "Beta", about: "Old beta."}, table: b},
	})
	old := buf.String()
	nb, nc := &table{}, &table{}
	nb.add("new beta row", "5", "6", ratio(5, 6))
	nc.add("gamma row", "7", "8", ratio(7, 8))
	later := runMeta{started: time.Date(2026, 12, 5, 20, 0, 0, 0, time.UTC), commit: "def4567890abc", args: " -only=beta,gamma -splice=true"}
	results := []sectionResult{
		{section: section{name: "beta", title: "Beta", about: "New beta."}, num: 2, table: nb},
		{section: section{name: "gamma", title: "Gamma", about: "What gamma measures."}, num: 3, table: nc},
	}
	titles := []string{"Alpha", "Beta", "Gamma"}
	got, err := spliceReport(old, later, results, titles)
	require.NoError(t, err)
	alphaSection := old[strings.Index(old, "\n### 1. Alpha"):strings.Index(old, "\n### 2. Beta")]
	require.Contains(t, got, alphaSection)
	require.Contains(t, got, "| 1 | alpha row | 1 | 2 | 0.50× |\n| 2 | new beta row | 5 | 6 | 0.83× |\n| 3 | gamma row | 7 | 8 | 0.88× |\n")
	require.NotContains(t, got, "old beta row")
	require.NotContains(t, got, "Old beta.")
	require.Contains(t, got, "### 2. Beta\n\n`-only beta`: 0s, load average  at its start,  at its end. "+splicedMark+
		" from a later partial run, `cd bench && go run . -docs ../docs -only=beta,gamma -splice=true`, on 2026-12-05 20:00 UTC at `def4567890`")
	require.Less(t, strings.Index(got, "### 2. Beta"), strings.Index(got, "### 3. Gamma"))
	require.Contains(t, got, "on 2026-12-01 21:00 UTC, in 0s.\n\n"+splicedLine+"sections 2, 3.\n\n| | |")

	again, err := spliceReport(got, later, results[1:], titles)
	require.NoError(t, err)
	require.Equal(t, got, again, "splicing the same run again changes nothing")
}

// TestSpliceRefusesAReportOfOtherSections: when the registry's sections
// are no longer the report's (a section added in the middle renumbers the
// rest), a splice would file rows under the wrong numbers: it is refused.
func TestSpliceRefusesAReportOfOtherSections(t *testing.T) {
	a := &table{}
	a.add("alpha row", "1", "2", ratio(1, 2))
	var buf bytes.Buffer
	writeReport(&buf, runMeta{}, []sectionResult{
		{section: section{name: "alpha", title: "Alpha", about: "A."}, table: a},
		{section: section{name: "beta", title: "Beta", about: "B."}, table: &table{}},
	})
	results := []sectionResult{{section: section{name: "gamma", title: "Gamma", about: "G."}, num: 3, table: &table{}}}
	_, err := spliceReport(buf.String(), runMeta{}, results, []string{"Alpha", "Inserted", "Beta", "Gamma"})
	require.ErrorContains(t, err, `the report's section 2 is "Beta", not this program's section 2`)
	_, err = spliceReport("# Benchmarks\n", runMeta{}, results, []string{"Alpha"})
	require.ErrorContains(t, err, "not a benchmark report")
}
