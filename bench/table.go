package main

import (
	"fmt"
)

// table collects one section's figures and charts; every figure has a
// baseline measured in the same run, or one labelled as what it is
// ("limit", "projection", "none: a check" with its goal and a computed
// verdict): issue 32.
type table struct {
	rows   []tableRow
	charts []tableChart
	notes  []string // markdown, under the section's explanation
}

type tableRow struct {
	measure, value, baseline, ratio string
}

type tableChart struct {
	file, alt string // file: a PNG in the report's directory
}

// add appends a row: what it measures (the baseline named after "vs"),
// codemojex's figure, the baseline's figure and their ratio (ratio()).
func (t *table) add(measure, value, baseline, ratio string) {
	t.rows = append(t.rows, tableRow{measure, value, baseline, ratio})
}

// chart records a PNG the section wrote into the report's directory
// (cfg.docs), to be embedded under the section's explanation.
func (t *table) chart(file, alt string) {
	t.charts = append(t.charts, tableChart{file, alt})
}

func rate(v float64) string { return commas(int(v+0.5)) + " jobs/s" }

// reqRate formats a baseline's requests/s.
func reqRate(v float64) string { return commas(int(v+0.5)) + " req/s" }

// ratio formats a/b: two decimals, or the reciprocal for ratios under 0.01.
func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	r := a / b
	if r < 0.01 {
		return fmt.Sprintf("%.4f× (1/%.0f)", r, 1/r)
	}
	return fmt.Sprintf("%.2f×", r)
}

// note adds a markdown paragraph the run produced (e.g. a benchmark's
// log) under the section's explanation.
func (t *table) note(md string) { t.notes = append(t.notes, md) }

// verdict is the ratio column of a check against a goal: "met", or "**not
// met**" (computed from the run's figures, never typed).
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "**not met**"
}
