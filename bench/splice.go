package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A partial run spliced into the full report (-splice with -only and
// -docs): its sections' rows and explanations take the place of theirs in
// docs/benchmarks.md, or are added in the registry's order, and the rest of
// the report stays as the full run wrote it. Each spliced section says its
// own run, and a line under the report's first paragraph lists them, so no
// figure passes for the full run's.

const (
	resultsHeading = "## Results\n\n"
	whatHeading    = "\n## What each row measures\n"
	splicedMark    = "**Spliced** into this report"
	splicedLine    = "Spliced in later from partial runs (each section says its run): "
)

var (
	rowNumber     = regexp.MustCompile(`^\| (\d+) \| `)
	sectionNumber = regexp.MustCompile(`^\n### (\d+)\. (.*)\n`)
)

// spliceInto splices results into the report in cfg.docs (see
// spliceReport) and fills the docs pages' blocks of those sections.
// Errors: the report unreadable, unwritable or not one spliceReport takes.
func spliceInto(cfg config, meta runMeta, results []sectionResult) (string, error) {
	path := filepath.Join(cfg.docs, "benchmarks.md")
	old, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("splice: %w", err)
	}
	var titles []string
	for i, s := range sections() {
		titles = append(titles, s.title)
		for j := range results {
			if results[j].name == s.name {
				results[j].num = i + 1
			}
		}
	}
	out, err := spliceReport(string(old), meta, results, titles)
	if err != nil {
		return "", fmt.Errorf("splice into %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return "", fmt.Errorf("splice: %w", err)
	}
	return path, writeDocBlocks(cfg.docs, meta, results)
}

// spliceReport returns report old (benchmarks.md as a full run wrote it)
// with results put in: each result's rows (numbered r.num) and explanation
// replace those of the section with that number, or are added in number
// order when old has none; every other row and section is kept as it is.
// titles[k-1] is section k's title in the registry. Errors: old is not a
// report (no Results or What each row measures heading, no first
// paragraph); a section of old whose title is not the registry's (the
// registry changed since that run: its numbers are no longer the
// registry's, a full run is due); a result without a number.
func spliceReport(old string, meta runMeta, results []sectionResult, titles []string) (string, error) {
	ri, wi := strings.Index(old, resultsHeading), strings.Index(old, whatHeading)
	if ri < 0 || wi < ri {
		return "", fmt.Errorf("not a benchmark report: no %q and %q headings", strings.TrimSpace(resultsHeading), strings.TrimSpace(whatHeading))
	}
	lines := strings.Split(strings.TrimRight(old[ri+len(resultsHeading):wi], "\n"), "\n")
	if len(lines) < 2 {
		return "", fmt.Errorf("not a benchmark report: no table")
	}
	rows, err := reportRows(lines[2:])
	if err != nil {
		return "", err
	}
	secs, err := reportSections(old[wi+len(whatHeading):], titles)
	if err != nil {
		return "", err
	}
	for _, r := range results {
		if r.num <= 0 {
			return "", fmt.Errorf("section %q has no number", r.name)
		}
		var rb, sb strings.Builder
		writeRows(&rb, r.num, r)
		rows[r.num] = strings.Split(strings.TrimRight(rb.String(), "\n"), "\n")
		if rb.Len() == 0 {
			rows[r.num] = nil
		}
		writeSection(&sb, r.num, r, spliceNote(meta, r))
		secs[r.num] = sb.String()
	}
	head, err := spliceHead(old[:ri], secs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(head + resultsHeading + lines[0] + "\n" + lines[1] + "\n")
	for _, n := range sortedKeys(rows) {
		for _, l := range rows[n] {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString(whatHeading)
	for _, n := range sortedKeys(secs) {
		b.WriteString(secs[n])
	}
	return b.String(), nil
}

// reportRows groups the report table's rows by their section number, in
// their order. Errors: a line that is not a numbered row.
func reportRows(lines []string) (map[int][]string, error) {
	rows := map[int][]string{}
	for _, l := range lines {
		m := rowNumber.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("not a numbered row of the report's table: %q", firstLine(l))
		}
		n, _ := strconv.Atoi(m[1])
		rows[n] = append(rows[n], l)
	}
	return rows, nil
}

// reportSections splits the report's explanations (what follows its "What
// each row measures" heading) by section number, each with its heading.
// Errors: a section whose title is not titles[number-1]; text before the
// first section.
func reportSections(text string, titles []string) (map[int]string, error) {
	secs := map[int]string{}
	chunks := strings.Split(text, "\n### ")
	if strings.TrimSpace(chunks[0]) != "" {
		return nil, fmt.Errorf("text before the report's first section: %q", firstLine(strings.TrimSpace(chunks[0])))
	}
	for _, c := range chunks[1:] {
		c = "\n### " + c
		m := sectionNumber.FindStringSubmatch(c)
		if m == nil {
			return nil, fmt.Errorf("a section heading without its number: %q", firstLine(strings.TrimPrefix(c, "\n")))
		}
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(titles) || titles[n-1] != m[2] {
			return nil, fmt.Errorf("the report's section %d is %q, not this program's section %d (sections changed since the report's run: run make bench)", n, m[2], n)
		}
		secs[n] = c
	}
	return secs, nil
}

// spliceNote is the sentence a spliced section's run line ends with.
func spliceNote(meta runMeta, r sectionResult) string {
	commit := meta.commit
	if len(commit) > 10 {
		commit = commit[:10]
	}
	if meta.dirty {
		commit += " with uncommitted changes"
	}
	return fmt.Sprintf("%s from a later partial run, `cd bench && go run . -docs ../docs%s`, on %s at `%s`: not the run described at the top.",
		splicedMark, meta.args, meta.started.UTC().Format("2006-01-02 15:04 MST"), commit)
}

// spliceHead is the report's head with the line listing the spliced
// sections (those of secs that say so) under its first paragraph, in place
// of the line there before. Errors: no first paragraph.
func spliceHead(head string, secs map[int]string) (string, error) {
	if i := strings.Index(head, splicedLine); i >= 0 {
		j := strings.Index(head[i:], "\n\n")
		if j < 0 {
			return "", fmt.Errorf("the report's spliced line has no end")
		}
		head = head[:i] + head[i+j+2:]
	}
	var spliced []string
	for _, n := range sortedKeys(secs) {
		if strings.Contains(secs[n], splicedMark) {
			spliced = append(spliced, strconv.Itoa(n))
		}
	}
	if len(spliced) == 0 {
		return head, nil
	}
	i := strings.Index(head, "\nWritten by ")
	j := strings.Index(head[max(i, 0):], "\n\n")
	if i < 0 || j < 0 {
		return "", fmt.Errorf("the report has no first paragraph (Written by ...)")
	}
	at := i + j + 2
	what := "section "
	if len(spliced) > 1 {
		what = "sections "
	}
	return head[:at] + splicedLine + what + strings.Join(spliced, ", ") + ".\n\n" + head[at:], nil
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
