package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// section is one scenario of the benchmark: registered in sections()
// (sections.go), run in that order, numbered in that order in the report.
type section struct {
	name  string // the -only name
	title string // the heading of its explanation in the report
	// about is markdown for the report: what the rows measure, what the
	// baseline is and how the ratio is formed (which side is divided by
	// which; "lower is better" where it is).
	about string
	// run measures the scenario on srv (flushed before it) and adds its
	// rows (and any chart it wrote into cfg.docs) to t.
	run func(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error
}

// sectionResult is one section's run.
type sectionResult struct {
	section
	// num is the section's number in the report (its place in the
	// registry, set when it is spliced into a full report); 0: its place
	// in the run.
	num       int
	table     *table
	took      time.Duration
	loadStart string
	loadEnd   string
	err       error // the section failed: no rows, the error in the report
}

// runMeta is what the report says about the run as a whole.
type runMeta struct {
	started   time.Time
	took      time.Duration
	commit    string
	dirty     bool
	machine   machine
	loadStart string
	loadEnd   string
	args      string // the flags the run was given other than -docs ("" for make bench's)
}

// number is the section's number in a report whose i-th section (from 0)
// it is in the run: num when set.
func (r sectionResult) number(i int) int {
	if r.num > 0 {
		return r.num
	}
	return i + 1
}

// writeTable writes the results as one markdown table, rows numbered by
// section.
func writeTable(w io.Writer, results []sectionResult) {
	fmt.Fprintln(w, "| # | measure | codemojex | baseline | ratio |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|")
	for i, r := range results {
		writeRows(w, r.number(i), r)
	}
}

// writeRows writes r's rows as lines of the report's table, numbered n.
func writeRows(w io.Writer, n int, r sectionResult) {
	for _, row := range r.table.rows {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s |\n", n, cell(row.measure), cell(row.value), cell(row.baseline), cell(row.ratio))
	}
}

// cell keeps a table cell on one line and its pipes escaped.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

// writeReport writes docs/benchmarks.md: how it was made, the machine,
// the table, then per section what it measures and its charts.
func writeReport(w io.Writer, meta runMeta, results []sectionResult) {
	m := meta.machine
	fmt.Fprint(w, "# Benchmarks\n\n")
	fmt.Fprint(w, "<!-- Written by `make bench` (bench/report.go); do not edit by hand. To add a scenario or a row,\n"+
		"     see bench/sections.go. -->\n\n")
	when := meta.started.UTC().Format("2006-01-02 15:04 MST")
	if meta.args == "" {
		fmt.Fprintf(w, "Written by `make bench` (`cd bench && go run . -docs ../docs`) on %s, in %s.\n\n", when, meta.took.Round(time.Second))
	} else {
		fmt.Fprintf(w, "Written by `cd bench && go run .%s` on %s, in %s: not the full run `make bench` makes.\n\n",
			meta.args, when, meta.took.Round(time.Second))
	}
	commit := "`" + meta.commit + "`"
	if meta.dirty {
		commit += " with uncommitted changes to tracked files"
	}
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	fmt.Fprintf(w, "| commit | %s |\n", commit)
	fmt.Fprintf(w, "| CPU | %s, %d cores (nproc) |\n", cell(m.model), m.cpus)
	fmt.Fprintf(w, "| load average (1, 5, 15 min) | %s at the start, %s at the end |\n", meta.loadStart, meta.loadEnd)
	fmt.Fprintf(w, "| server | %s (`%s`) |\n", m.server, m.serverBin)
	fmt.Fprintf(w, "| benchmark tool | `%s` |\n", cell(m.benchTool))
	fmt.Fprintf(w, "| Go, kernel | %s, %s |\n\n", m.goVersion, m.kernel)
	fmt.Fprint(w, howToRead)
	fmt.Fprint(w, "## Results\n\n")
	writeTable(w, results)
	fmt.Fprint(w, "\n## What each row measures\n")
	for i, r := range results {
		writeSection(w, r.number(i), r, "")
	}
}

// writeSection writes section n's explanation: its heading, its run (and
// runNote, a sentence, after it), its about, its error, notes and charts.
func writeSection(w io.Writer, n int, r sectionResult, runNote string) {
	fmt.Fprintf(w, "\n### %d. %s\n\n", n, r.title)
	if runNote != "" {
		runNote = " " + runNote
	}
	fmt.Fprintf(w, "`-only %s`: %s, load average %s at its start, %s at its end.%s\n\n",
		r.name, r.took.Round(100*time.Millisecond), first(r.loadStart), first(r.loadEnd), runNote)
	fmt.Fprintln(w, strings.TrimSpace(r.about))
	if r.err != nil {
		fmt.Fprintf(w, "\n**This section failed in this run**, so it has no rows above:\n\n```\n%s\n```\n", strings.TrimSpace(r.err.Error()))
	}
	for _, note := range r.table.notes {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(note))
	}
	for _, c := range r.table.charts {
		fmt.Fprintf(w, "\n![%s](%s)\n", c.alt, c.file)
	}
}

// first is the first field of a load average line (the 1-minute one).
func first(load string) string {
	if f := strings.Fields(load); len(f) > 0 {
		return f[0]
	}
	return load
}

const howToRead = `The machine is shared and noisy, so no figure stands alone: each is printed beside a baseline
measured in the same run, on the same server, and the **ratio** (codemojex's figure divided by the
baseline's, unless a row says otherwise) is what to compare across runs and machines. A baseline that
is not a measured run says what it is: "limit" (a configured or ideal rate), "projection" (a run
stopped early, extrapolated), "none: a check" (with its goal; the ratio column then says whether this
run met it); a latency that was not measured (a message not delivered by the end) is printed as the
lower bound it is ("≥"). Absolute
rates move with the load average above; a ratio moves much less, though rows whose baseline is
bound by something else (round trips, another library's polling) still move with the load. The
Telegram scenarios run the real notifier and worker against the in-repo Bot API emulator with
Telegram's limits scaled up to keep the run short: 300 messages/s overall (Telegram: about 30)
and 100/s per chat (Telegram: about 1).

`

// runSections runs every wanted section in order on srv (flushed before
// each) and returns their results. A section that fails is kept, with
// its error and without rows, and the others still run (one scenario's
// failure does not throw away the rest of a run of several minutes); the
// error returned names the failed sections. Errors: also a flush failing,
// or ctx ending (both stop the run).
func runSections(ctx context.Context, cfg config, srv *valkeyserver.Server) ([]sectionResult, error) {
	var results []sectionResult
	var failed []string
	for _, s := range sections() {
		if !cfg.want(s.name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return results, err
		}
		if err := flush(ctx, srv); err != nil {
			return results, err
		}
		r := sectionResult{section: s, table: &table{}, loadStart: loadAverage()}
		start := time.Now()
		cfg.log.Info("section", "name", s.name)
		if err := s.run(ctx, cfg, srv, r.table); err != nil {
			cfg.log.Error("section failed", "name", s.name, "err", err)
			r.err, r.table = err, &table{}
			failed = append(failed, s.name)
		}
		r.took, r.loadEnd = time.Since(start), loadAverage()
		cfg.log.Info("section done", "name", s.name, "took", r.took.Round(time.Millisecond))
		results = append(results, r)
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("sections failed: %s (the report says why)", strings.Join(failed, ", "))
	}
	return results, nil
}

// flush empties srv (FLUSHALL).
func flush(ctx context.Context, srv *valkeyserver.Server) error {
	c, err := srv.NewClient()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	if err := c.Do(ctx, c.B().Flushall().Build()).Error(); err != nil {
		return fmt.Errorf("flushall: %w", err)
	}
	return nil
}
