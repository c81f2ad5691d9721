package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// twoBotsFixture is a run whose figures meet every goal: marks 10 s apart
// (idle 0-10 s and 40-50 s, the broadcast 20-30 s), A's primary at 40 ms/s
// throughout, the empty one at 5 ms/s, B's from 10 to 200 ms/s; each bot's
// keys on its own primary; A's replies 10 ms while B idles, 11 ms while it
// broadcasts.
func twoBotsFixture() (bots [2]*twoBot, keys map[string]map[string]int, r twoBotsResult, nodes []*valkeyserver.Server) {
	nodes = []*valkeyserver.Server{{Addr: "n1"}, {Addr: "n2"}, {Addr: "n3"}}
	bots = [2]*twoBot{{name: "A", tag: "bot-1", slot: 611, primary: "n1"}, {name: "B", tag: "bot-2", slot: 12800, primary: "n3"}}
	keys = map[string]map[string]int{"n1": {"bot-1": 200}, "n2": {}, "n3": {"bot-2": 30_000}}
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	perSecond := [3][2]time.Duration{{40 * ms, 40 * ms}, {5 * ms, 5 * ms}, {10 * ms, 200 * ms}} // idle, busy
	var cpu [3]time.Duration
	for i := range r.marks {
		m := twoBotsMark{at: t0.Add(time.Duration(i) * 10 * time.Second), host: hostCPU{busy: int64(i) * 100, total: int64(i) * 200}}
		for n := range nodes {
			m.nodes, m.calls = append(m.nodes, cpu[n]), append(m.calls, int64(i)*1000)
			busy := 0
			if i == 2 {
				busy = 1 // the span from mark 2 to mark 3 is the broadcast
			}
			cpu[n] += 10 * perSecond[n][busy]
		}
		r.marks[i] = m
	}
	for s := range 50 {
		at := t0.Add(time.Duration(s) * time.Second)
		d := 10 * ms
		if s >= 20 && s < 30 {
			d = 11 * ms
		}
		r.add(at, d, true)
	}
	return bots, keys, r, nodes
}

// TestTwoBotsRowsJudgeTheirGoalsFromTheRun: each of the section's checks
// is computed from the run's figures: the keys' placement (a key of A's tag
// on B's primary, or both tags on one primary, fails it), A's reply p99
// while B broadcasts against while it idles (within 1.2×; an undelivered
// reply's wait counts as its lower bound), and B's primary's share of the
// cluster's added CPU (≥ 90%); the /help sent in the transitions count in
// no phase.
func TestTwoBotsRowsJudgeTheirGoalsFromTheRun(t *testing.T) {
	rows := func(bots [2]*twoBot, keys map[string]map[string]int, r twoBotsResult, nodes []*valkeyserver.Server) []tableRow {
		tb := &table{}
		twoBotsRows(tb, bots, keys, r, nodes)
		require.Len(t, tb.rows, 6)
		return tb.rows
	}
	bots, keys, r, nodes := twoBotsFixture()
	require.Len(t, r.idle.delivered, 20, "idle: 0-10 s and 40-50 s")
	require.Len(t, r.busy.delivered, 10, "the broadcast: 20-30 s; 10-20 s and 30-40 s are transitions")
	ok := rows(bots, keys, r, nodes)
	require.True(t, strings.HasSuffix(ok[0].ratio, ": met"), ok[0].ratio)
	require.Equal(t, "11ms / 11ms", ok[1].value)
	require.Equal(t, "10ms / 10ms", ok[1].baseline)
	require.True(t, strings.HasSuffix(ok[1].ratio, "goal p99 ≤ 1.2×: met"), ok[1].ratio)
	require.Equal(t, "40.0 ms/s", ok[3].value, "A's primary while B broadcasts")
	require.Equal(t, "200.0 ms/s", ok[5].value, "B's primary while B broadcasts")
	require.Equal(t, "10.0 ms/s", ok[5].baseline, "B's primary while B idles")
	require.Contains(t, ok[5].ratio, "100% of the cluster's added CPU (goal ≥ 90%: met)")

	for _, tc := range []struct {
		name   string
		mutate func(bots [2]*twoBot, keys map[string]map[string]int, r *twoBotsResult)
		row    int
		want   string
	}{
		{"a key of A's tag on B's primary", func(_ [2]*twoBot, keys map[string]map[string]int, _ *twoBotsResult) {
			keys["n3"]["bot-1"] = 1
		}, 0, "**not met**"},
		{"both tags on one primary", func(bots [2]*twoBot, keys map[string]map[string]int, _ *twoBotsResult) {
			bots[1].primary = "n1"
			keys["n1"]["bot-2"], keys["n3"] = 30_000, map[string]int{}
		}, 0, "**not met**"},
		{"A's p99 1.3× while B broadcasts", func(_ [2]*twoBot, _ map[string]map[string]int, r *twoBotsResult) {
			r.busy.delivered[9] = 13 * time.Millisecond
		}, 1, "goal p99 ≤ 1.2×: **not met**"},
		{"a reply not delivered while B broadcasts", func(_ [2]*twoBot, _ map[string]map[string]int, r *twoBotsResult) {
			r.busy.delivered = r.busy.delivered[:9]
			r.busy.waited = []time.Duration{12 * time.Millisecond}
		}, 1, "goal p99 ≤ 1.2×: **not met**"},
		{"the added CPU on A's primary", func(_ [2]*twoBot, _ map[string]map[string]int, r *twoBotsResult) {
			for i := 3; i < len(r.marks); i++ {
				r.marks[i].nodes[0] += 2 * time.Second
			}
		}, 5, "(goal ≥ 90%: **not met**)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bots, keys, r, nodes := twoBotsFixture()
			tc.mutate(bots, keys, &r)
			got := rows(bots, keys, r, nodes)[tc.row].ratio
			require.True(t, strings.HasSuffix(got, tc.want), got)
		})
	}
}
