package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLatencyQuantilesBoundWhatWasNotDelivered: a quantile is exact while
// its rank falls on delivered messages whatever the undelivered ones' waits;
// where it falls among undelivered ones it is only a lower bound (their
// wait by the end), printed as one, never a constant; ratios of bounds are
// bounds.
func TestLatencyQuantilesBoundWhatWasNotDelivered(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	for _, tc := range []struct {
		name     string
		lat      latencies
		q        float64
		want     bound
		wantText string
	}{
		{"all delivered", latencies{delivered: ms(40, 10, 30, 20)}, 0.5, bound{lo: 30 * time.Millisecond, hi: 30 * time.Millisecond}, "30ms"},
		{"rank among the undelivered", latencies{delivered: ms(10, 20), waited: ms(7000, 5000)}, 0.99, bound{lo: 7000 * time.Millisecond, inf: true}, "≥ 7s (not delivered by the end)"},
		{"an undelivered wait below the rank", latencies{delivered: ms(10, 20, 30), waited: ms(15)}, 0.5, bound{lo: 20 * time.Millisecond, hi: 30 * time.Millisecond}, "20ms–30ms"},
		{"none", latencies{}, 0.5, bound{}, "0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.lat.quantile(tc.q)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantText, got.String())
		})
	}
	exact := func(d time.Duration) bound { return bound{lo: d, hi: d} }
	for _, tc := range []struct {
		a, b bound
		want string
	}{
		{exact(93 * time.Millisecond), exact(186 * time.Millisecond), "0.50×"},
		{exact(93 * time.Millisecond), bound{lo: 4650 * time.Millisecond, inf: true}, "≤ 0.02×"},
		{bound{lo: time.Second, inf: true}, exact(100 * time.Millisecond), "≥ 10.00×"},
		{bound{lo: time.Second, hi: 2 * time.Second}, exact(time.Second), "1.00×–2.00×"},
		{bound{lo: time.Second, inf: true}, bound{lo: time.Second, inf: true}, "n/a (neither side measured)"},
	} {
		require.Equal(t, tc.want, boundRatio(tc.a, tc.b), "%v ÷ %v", tc.a, tc.b)
	}
}

// floodMetrics are BenchmarkFlood metrics that meet every goal.
func floodMetrics() map[string]float64 {
	return map[string]float64{
		"flood_handled": 13, "flood_dropped": 2987, "flood_replies_queued": 14, "flood_bytes/dropped": 4.9, "flood_next_ms": 147,
		"flood_keys_left": 0, "rest_chats": 100000, "rest_bytes/chat": 166, "rest_bytes/chat_1min": 48, "msg_bytes/delivered": 126,
		"msg_bytes/delivered_1min": 0, "limit_on_updates/s": 54905, "limit_off_updates/s": 67776, "limit_on_valkey_us/update": 9.9,
		"limit_off_valkey_us/update": 9.0, "path_on_updates/s": 6060, "path_off_updates/s": 5965, "path_on_valkey_us/update": 122.4,
		"path_off_valkey_us/update": 115.9, "path_valkey_us_ratio": 0.99, "path_updates_ratio": 1.03, "limit_valkey_us_ratio": 1.16,
		"chatter_ignored": 3000, "chatter_bytes": 0, "chatter_valkey_us/message": 3.0, "chatter_replies": 0,
	}
}

// TestFloodRowsJudgeTheirGoalsFromTheRun: a check row's verdict comes from
// the run's figures (a figure past its goal turns it to "not met"), and no
// baseline cell carries a figure the run did not measure (the typed
// "without the limits 3,000 / 0 / 3,000" and "was about 208 B" are gone).
func TestFloodRowsJudgeTheirGoalsFromTheRun(t *testing.T) {
	rows := func(m map[string]float64) []tableRow {
		tb := &table{}
		floodRows(tb, m)
		return tb.rows
	}
	ok := rows(floodMetrics())
	require.Len(t, ok, 10)
	require.Equal(t, "met", ok[9].ratio, ok[9].measure)
	for _, r := range ok[:5] {
		require.Equal(t, "met", r.ratio, r.measure)
		require.True(t, strings.HasPrefix(r.baseline, "none: a check ("), r.baseline)
		require.NotContains(t, r.baseline, "was ")
		require.NotContains(t, r.baseline, "without the limits")
	}
	require.True(t, strings.HasSuffix(ok[6].ratio, "goal met"), ok[6].ratio)
	for _, tc := range []struct {
		metric string
		value  float64
		row    int
	}{
		{"flood_dropped", 2986, 0},
		{"flood_keys_left", 1, 1},
		{"flood_bytes/dropped", 100, 1},
		{"flood_next_ms", 2000, 2},
		{"rest_bytes/chat", 201, 3},
		{"rest_bytes/chat_1min", 201, 3},
		{"msg_bytes/delivered_1min", 41, 4},
		{"chatter_ignored", 2999, 9},
		{"chatter_bytes", 1, 9},
		{"chatter_replies", 1, 9},
	} {
		m := floodMetrics()
		m[tc.metric] = tc.value
		require.Equal(t, "**not met**", rows(m)[tc.row].ratio, "%s = %v", tc.metric, tc.value)
	}
	m := floodMetrics()
	m["path_valkey_us_ratio"] = 1.06
	require.True(t, strings.HasSuffix(rows(m)[6].ratio, "goal **not met**"), rows(m)[6].ratio)
}

// TestDocBlocksQuoteTheRun: a docs page's block named after a section of
// the run gets that section's rows and a link to its place in the report;
// a block of a section not in the run, and the text around the blocks,
// stay as they were; benchmarks.md is not touched; a block without its end
// marker is an error and leaves the file alone.
func TestDocBlocksQuoteTheRun(t *testing.T) {
	tb := &table{}
	tb.add("bytes | per chat", "166 B", "none: a check (goal <= 200 B)", verdict(true))
	results := []sectionResult{
		{section: section{name: "memory", title: "Memory"}, table: &table{}},
		{section: section{name: "floods", title: "Floods: the intake limits"}, table: tb},
	}
	meta := runMeta{started: time.Date(2026, 12, 4, 19, 0, 0, 0, time.UTC), commit: "0123456789abcdef"}
	dir := t.TempDir()
	page := "# Floods\n\nBefore.\n\n<!-- bench:floods -->\nold typed figures: 154 B\n<!-- /bench:floods -->\n\n" +
		"<!-- bench:paid -->\nkept\n<!-- /bench:paid -->\nAfter.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floods.md"), []byte(page), 0o644))
	report := "<!-- bench:floods -->\n<!-- /bench:floods -->\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(report), 0o644))
	require.NoError(t, writeDocBlocks(dir, meta, results))
	got, err := os.ReadFile(filepath.Join(dir, "floods.md"))
	require.NoError(t, err)
	require.Equal(t, "# Floods\n\nBefore.\n\n<!-- bench:floods -->\n"+
		"<!-- Written by make bench (bench/docblocks.go) from its section \"floods\"; do not edit by hand. -->\n\n"+
		"Section 2 of [the benchmark report](benchmarks.md#2-floods-the-intake-limits), `make bench` of 2026-12-04 19:00 UTC at `0123456789` (how each row is measured: there):\n\n"+
		"| measure | codemojex | baseline | ratio |\n|---|---:|---:|---:|\n"+
		"| bytes \\| per chat | 166 B | none: a check (goal <= 200 B) | met |\n"+
		"<!-- /bench:floods -->\n\n<!-- bench:paid -->\nkept\n<!-- /bench:paid -->\nAfter.\n", string(got))
	same, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	require.NoError(t, err)
	require.Equal(t, report, string(same))

	broken := "<!-- bench:floods -->\nno end\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "floods.md"), []byte(broken), 0o644))
	require.ErrorContains(t, writeDocBlocks(dir, meta, results), "has no <!-- /bench:floods -->")
	left, err := os.ReadFile(filepath.Join(dir, "floods.md"))
	require.NoError(t, err)
	require.Equal(t, broken, string(left))
}

// TestDocsPagesBlocksNameSections: every block in the docs pages is closed
// and names a section of the bench, so make bench fills each of them.
func TestDocsPagesBlocksNameSections(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	require.NoError(t, err)
	found := map[string]bool{}
	for _, f := range files {
		doc, err := os.ReadFile(f)
		require.NoError(t, err)
		blocks := map[string]string{}
		for _, name := range sectionNames() {
			blocks[name] = "FILLED " + name
		}
		out, err := fillBlocks(doc, blocks)
		require.NoError(t, err, f)
		for _, line := range strings.Split(string(doc), "\n") {
			if name, ok := strings.CutPrefix(line, "<!-- bench:"); ok {
				name = strings.TrimSuffix(name, " -->")
				require.Contains(t, sectionNames(), name, "%s: block %q names no section", f, name)
				require.Contains(t, string(out), "FILLED "+name, f)
				found[filepath.Base(f)+":"+name] = true
			}
		}
	}
	require.Subset(t, keys(found), []string{"floods.md:floods", "delivery.md:delivery", "delivery.md:paid", "delivery.md:replies"})
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLanguageRowsJudgeTheGoalFromTheRun: the languages section's first
// row judges the goal (within 5%) from the run's pairs' median,
// and the catalog's row gives its cost per guess as a share of an English
// update's handler CPU.
func TestLanguageRowsJudgeTheGoalFromTheRun(t *testing.T) {
	m := map[string]float64{"lang_updates": 10000, "lang_pairs": 5, "lang_en_go_us/update": 400, "lang_loc_go_us/update": 410,
		"lang_go_ratio": 1.05, "lang_en_valkey_us/update": 200, "lang_loc_valkey_us/update": 210, "lang_valkey_ratio": 1.05}
	ns := map[string]float64{"game": 4000, "catalog_en": 16000, "catalog_ru": 14000, "catalog_fa": 20000}
	rows := func() []tableRow {
		tb := &table{}
		languageRows(tb, m, ns)
		return tb.rows
	}
	r := rows()
	require.Len(t, r, 3)
	require.True(t, strings.HasSuffix(r[0].ratio, "goal met"), r[0].ratio)
	require.Equal(t, "Persian +16.0 µs a guess: 4.0% of an English update's handler CPU (English +12.0 µs a guess: 3.0% of an English update's handler CPU; medians of 5 rounds)", r[2].ratio)
	m["lang_go_ratio"] = 1.06
	require.True(t, strings.HasSuffix(rows()[0].ratio, "goal **not met**"), rows()[0].ratio)
}
