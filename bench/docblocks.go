package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// writeDocBlocks fills, in every markdown file of dir but benchmarks.md,
// each block "<!-- bench:NAME -->" ... "<!-- /bench:NAME -->" whose NAME is
// a section of this run with that section's rows (issue 32: the docs quote
// the report, no page keeps figures of its own that a run could contradict).
// A block of a section not in the run is left as it was. Errors: a file
// unreadable or unwritable, a block opened and not closed (the file is then
// left alone).
func writeDocBlocks(dir string, meta runMeta, results []sectionResult) error {
	blocks := map[string]string{}
	for i, r := range results {
		blocks[r.name] = docBlock(r.number(i), meta, r)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return fmt.Errorf("docs blocks: %w", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "benchmarks.md" {
			continue
		}
		doc, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("docs blocks: %w", err)
		}
		out, err := fillBlocks(doc, blocks)
		if err != nil {
			return fmt.Errorf("docs blocks: %s: %w", f, err)
		}
		if !bytes.Equal(out, doc) {
			if err := os.WriteFile(f, out, 0o644); err != nil {
				return fmt.Errorf("docs blocks: %w", err)
			}
		}
	}
	return nil
}

// fillBlocks replaces the inside of each block of doc named in blocks
// (markers on lines of their own, kept) with blocks[name]. Errors: a start
// marker without its end marker.
func fillBlocks(doc []byte, blocks map[string]string) ([]byte, error) {
	s := string(doc)
	var b strings.Builder
	for {
		i := strings.Index(s, "<!-- bench:")
		if i < 0 {
			b.WriteString(s)
			return []byte(b.String()), nil
		}
		j := strings.Index(s[i:], " -->")
		if j < 0 {
			return nil, fmt.Errorf("unterminated marker %q", firstLine(s[i:]))
		}
		name := s[i+len("<!-- bench:") : i+j]
		start := i + j + len(" -->")
		endMarker := "<!-- /bench:" + name + " -->"
		k := strings.Index(s[start:], endMarker)
		if k < 0 {
			return nil, fmt.Errorf("block %q has no %s", name, endMarker)
		}
		b.WriteString(s[:start])
		if content, ok := blocks[name]; ok {
			b.WriteString("\n" + content + "\n")
		} else {
			b.WriteString(s[start : start+k])
		}
		b.WriteString(endMarker)
		s = s[start+k+len(endMarker):]
	}
}

// docBlock is section n's rows as a docs page quotes them: a line naming
// the run and the report's section, then the rows as the report's table.
func docBlock(n int, meta runMeta, r sectionResult) string {
	var b strings.Builder
	commit := meta.commit
	if len(commit) > 10 {
		commit = commit[:10]
	}
	fmt.Fprintf(&b, "<!-- Written by make bench (bench/docblocks.go) from its section %q; do not edit by hand. -->\n\n", r.name)
	fmt.Fprintf(&b, "Section %d of [the benchmark report](benchmarks.md#%s), `make bench` of %s at `%s` (how each row is measured: there):\n\n",
		n, anchor(fmt.Sprintf("%d. %s", n, r.title)), meta.started.UTC().Format("2006-01-02 15:04 MST"), commit)
	if r.err != nil {
		fmt.Fprintf(&b, "**This section failed in that run**: see the report.\n")
		return b.String()
	}
	fmt.Fprintln(&b, "| measure | codemojex | baseline | ratio |")
	fmt.Fprint(&b, "|---|---:|---:|---:|")
	for _, row := range r.table.rows {
		fmt.Fprintf(&b, "\n| %s | %s | %s | %s |", cell(row.measure), cell(row.value), cell(row.baseline), cell(row.ratio))
	}
	return b.String()
}

// anchor is the id GitHub gives a heading: lower case, letters, digits,
// '-' and '_' kept, spaces made '-', the rest dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
