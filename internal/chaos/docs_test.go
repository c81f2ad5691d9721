package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
)

// The docs' table of runs: docs/chaos.md between the markers, made from
// the runs recorded in docs/chaos-runs.jsonl (make chaos
// CHAOS_RECORD=docs/chaos-runs.jsonl appends one; make chaos-table
// rewrites the table).
const (
	runsFile    = "docs/chaos-runs.jsonl"
	docFile     = "docs/chaos.md"
	tableBegin  = "<!-- chaos-runs: made by make chaos-table from docs/chaos-runs.jsonl -->"
	tableEnd    = "<!-- /chaos-runs -->"
	envWriteDoc = "CHAOS_WRITE_DOCS"
)

// TestDocsTableIsTheRecord: docs/chaos.md's table of runs is the one made
// from docs/chaos-runs.jsonl (with CHAOS_WRITE_DOCS=1 it is rewritten so).
func TestDocsTableIsTheRecord(t *testing.T) {
	root := testkit.ModuleRoot(t)
	runs, err := os.ReadFile(filepath.Join(root, runsFile))
	require.NoError(t, err)
	table, err := runsTable(runs)
	require.NoError(t, err)
	path := filepath.Join(root, docFile)
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(doc), tableBegin)
	require.True(t, ok, "%s has the marker %q", docFile, tableBegin)
	_, after, ok := strings.Cut(rest, tableEnd)
	require.True(t, ok, "%s has the marker %q", docFile, tableEnd)
	want := before + tableBegin + "\n" + table + tableEnd + after
	if os.Getenv(envWriteDoc) != "" {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, string(doc), "%s's table is not the record's: make chaos-table", docFile)
}

// runsTable renders the recorded runs (JSON lines of figures) as a
// Markdown table, one row a run in the record's order, numbered from 1 in
// its first column (#) so the docs can cite a row that stays put as runs
// are appended (blank lines take no number).
func runsTable(jsonl []byte) (string, error) {
	var b strings.Builder
	b.WriteString("| # | seed | duration | Valkey | intake | faults by kind | exited on their own | group updates | /start | taps (unanswered) | copies (dead) | lost | flood notices | longest intake wait | duplicates / in flight | order violations | wrong | 429s limiter (allowed) / injected | broadcast progress sent / chats with a copy | paid broadcast: copies (dead), progress sent / chats with a copy, paid sends / accepted paid; its scenario: copies free, chats cancelled, Stars progress / charged | console: its faults; requests well / excused / unexcused; sign-ins / processes; weight set; final counts | goroutines leaks / processes judged | Valkey memory before → after; keys once settled: kept / expiring / left over + unknown | settling | result |\n")
	b.WriteString("|---:|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|---|\n")
	sc := bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	row := 0
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		row++
		var f figures
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return "", fmt.Errorf("%s line %d: %w", runsFile, n, err)
		}
		var kinds, left []string
		for _, k := range faultKinds {
			if f.Faults[k] > 0 {
				kinds = append(kinds, fmt.Sprintf("%s %d", k, f.Faults[k]))
			}
			if f.LeftOut[k] > 0 {
				left = append(left, fmt.Sprintf("%s %d", k, f.LeftOut[k]))
			}
		}
		faults := strings.Join(kinds, ", ")
		if len(left) > 0 {
			faults += "; left out: " + strings.Join(left, ", ")
		}
		// Runs recorded before cluster runs were on a primary with a replica.
		valkeyCell := "primary + replica"
		if f.Store == storeCluster {
			valkeyCell = fmt.Sprintf("cluster of %d primaries + a replica each", clusterPrimaries)
		}
		// Runs recorded before the progress and goroutine checks show "–".
		progress, leaks := "–", "–"
		if f.CopyChats > 0 || f.ProgressSent > 0 {
			progress = fmt.Sprintf("%d / %d", f.ProgressSent, f.CopyChats)
		}
		if f.ProgressOff > 0 {
			progress += " **off**"
		}
		// Runs recorded before the paid broadcast show "–".
		paid := "–"
		if f.PaidCopies > 0 || f.PaidSent > 0 || f.PaidAccepted > 0 {
			paid = fmt.Sprintf("%d (%d), %d / %d, %d / %d", f.PaidCopies, f.PaidDeadCopies, f.PaidProgressSent, f.PaidCopyChats, f.PaidSent, f.PaidAccepted)
		}
		// Runs recorded before the paid scenarios show none.
		if f.PaidScenario != "" {
			paid += fmt.Sprintf("; %s: %d free, %d cancelled, %s / %s", f.PaidScenario, f.PaidFree, f.PaidCancelled, starsText(f.PaidStars), starsText(f.PaidCharged))
		}
		// The checker's verdicts on the paid progress and the halt, as
		// the console's final counts: shown only when off.
		if f.PaidProgressOff > 0 {
			paid += "; progress **off**"
		}
		if f.PaidActOff > 0 {
			paid += "; halt **unanswered**"
		}
		// Runs recorded before the console's slot show "–".
		console := "–"
		if f.ConsoleRequests > 0 {
			var cf []string
			for _, k := range processKinds {
				if f.ConsoleFaults[k] > 0 {
					cf = append(cf, fmt.Sprintf("%s %d", k, f.ConsoleFaults[k]))
				}
			}
			if len(cf) == 0 {
				cf = []string{"none"}
			}
			final := "as the progress"
			if f.ConsoleFinalOff > 0 {
				final = "**off**"
			}
			weight := "–" // runs recorded before the operator's weight change
			if f.ConsoleWeight > 0 {
				weight = strconv.Itoa(f.ConsoleWeight)
			}
			console = fmt.Sprintf("%s; %d / %d / %d; %d / %d; %s; %s", strings.Join(cf, ", "), f.ConsoleOK, f.ConsoleExcused, f.ConsoleUnexcused,
				f.ConsoleSignIns, f.ConsoleStarts, weight, final)
		}
		if f.GoroutinesJudged > 0 || len(f.Leaks) > 0 {
			leaks = fmt.Sprintf("%d / %d", len(f.Leaks), f.GoroutinesJudged)
		}
		// Runs recorded before the settling kept why it ended had a fixed
		// bound (90 s + a tenth of the run): they ended drained or at it.
		end := f.SettleEnd
		if end == "" {
			end = map[bool]settleEnd{true: settleDrained, false: settleCapped}[f.Settled]
		}
		// Runs recorded before the limits check show the limiter's alone.
		limiter := strconv.Itoa(f.Limiter429)
		if f.Allowed429 > 0 {
			limiter = fmt.Sprintf("%d (%d)", f.Limiter429, f.Allowed429)
		}
		// Runs recorded before the key census show the memory alone.
		memory := fmt.Sprintf("%.1f → %.1f MiB", float64(f.MemBefore)/(1<<20), float64(f.MemAfter)/(1<<20))
		if f.CensusKeys != nil {
			memory += fmt.Sprintf("; %d / %d / %d", f.CensusKeys[classKept], f.CensusKeys[classExpiring], f.CensusKeys[classLeftover]+f.CensusKeys[classUnknown])
		}
		result := "pass"
		if !f.Pass {
			result = "**FAIL**"
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s | %d | %d | %d | %d (%d) | %d (%d) | %d | %d | %.1f s | %d / %d | %d | %d | %s / %d | %s | %s | %s | %s | %s | %.1f s, %s | %s |\n",
			row, f.Seed, f.Duration, valkeyCell, hookCell(f.Intake, f.hookFigures), faults, f.SelfExits, f.GroupUpdates, f.Starts, f.Taps, f.TapsUnanswered,
			f.Copies, f.DeadCopies, f.Lost, f.FloodNotices, f.IntakeLag, f.Duplicates, f.InFlight, f.OrderViolations, f.Wrong, limiter, f.Injected429,
			progress, paid, console, leaks, memory, f.SettleSecs, end, result)
	}
	return b.String(), sc.Err()
}

// TestRunsTableNumbersTheRecordedRunsInOrder: the table's # column counts
// the recorded runs from 1 in the record's order, a blank line taking no
// number, so "row N" in the docs names the record's Nth run.
func TestRunsTableNumbersTheRecordedRunsInOrder(t *testing.T) {
	jsonl := []byte(`{"seed": 18, "duration": "1m0s"}` + "\n\n" + `{"seed": 30, "duration": "1m0s", "pass": true}` + "\n")
	table, err := runsTable(jsonl)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	require.Len(t, lines, 4, "header, rule and two runs")
	require.True(t, strings.HasPrefix(lines[0], "| # | seed |"), lines[0])
	require.True(t, strings.HasPrefix(lines[2], "| 1 | 18 | 1m0s |"), lines[2])
	require.True(t, strings.HasPrefix(lines[3], "| 2 | 30 | 1m0s |"), lines[3])
}

// TestRunsTableShowsTheKeyCensusWhereARunRecordedIt: a run with a key
// census shows its kept / expiring / left over + unknown keys after its
// memory; a run recorded before the census shows the memory alone.
func TestRunsTableShowsTheKeyCensusWhereARunRecordedIt(t *testing.T) {
	jsonl := []byte(`{"seed": 1, "duration": "10m0s", "mem_before": 2097152, "mem_after": 4194304}` + "\n" +
		`{"seed": 2, "duration": "10m0s", "mem_before": 2097152, "mem_after": 4194304, "census_keys": {"kept": 709, "expiring": 693, "leftover": 2, "unknown": 1}}` + "\n")
	table, err := runsTable(jsonl)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	require.Len(t, lines, 4, "header, rule and two runs")
	require.Contains(t, lines[2], "| 2.0 → 4.0 MiB |")
	require.Contains(t, lines[3], "| 2.0 → 4.0 MiB; 709 / 693 / 3 |")
}
