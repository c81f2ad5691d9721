package httpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// gatherValkeyMemory scrapes a registry holding only c's collector and
// returns each gauge's value by metric name and node.
func gatherValkeyMemory(t *testing.T, col prometheus.Collector) map[string]map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(col))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]map[string]float64{}
	for _, mf := range mfs {
		out[mf.GetName()] = map[string]float64{}
		for _, m := range mf.GetMetric() {
			require.Equal(t, dto.MetricType_GAUGE, mf.GetType())
			require.Len(t, m.GetLabel(), 1)
			require.Equal(t, "node", m.GetLabel()[0].GetName())
			out[mf.GetName()][m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}

// The gauges are the server's INFO memory at scrape time: maxmemory as
// configured, used_memory growing by what a write stored; a node that
// stops answering reports info_up 0 and no memory gauges (no stale value).
func TestValkeyMemoryGaugesFollowTheServerAndVanishWhenItIsGone(t *testing.T) {
	const maxmemory = 64 << 20
	srv := valkeytest.Start(t, valkeytest.Options{ExtraArgs: []string{"--maxmemory", "64mb"}})
	c := srv.Client(t)
	col := NewValkeyMemoryCollector(c)

	before := gatherValkeyMemory(t, col)
	require.Len(t, before["codemojex_valkey_maxmemory_bytes"], 1, "one node")
	var node string
	for n := range before["codemojex_valkey_maxmemory_bytes"] {
		node = n
	}
	require.Equal(t, srv.Addr, node, "labelled by the node's address")
	require.Equal(t, float64(maxmemory), before["codemojex_valkey_maxmemory_bytes"][node])
	require.Equal(t, 1.0, before["codemojex_valkey_info_up"][node])
	require.Positive(t, before["codemojex_valkey_used_memory_bytes"][node])

	const value = 4 << 20
	require.NoError(t, c.Do(context.Background(), c.B().Set().Key("big").Value(strings.Repeat("x", value)).Build()).Error())
	after := gatherValkeyMemory(t, col)
	require.GreaterOrEqual(t, after["codemojex_valkey_used_memory_bytes"][node]-before["codemojex_valkey_used_memory_bytes"][node], float64(value),
		"used memory grew by the 4 MiB value stored")

	srv.Kill()
	gone := gatherValkeyMemory(t, col)
	require.Equal(t, map[string]float64{node: 0}, gone["codemojex_valkey_info_up"])
	require.Empty(t, gone["codemojex_valkey_used_memory_bytes"], "no stale used memory")
	require.Empty(t, gone["codemojex_valkey_maxmemory_bytes"], "no stale maxmemory")
}

func TestParseInfoMemoryReadsBothFieldsOrFails(t *testing.T) {
	tests := []struct {
		name       string
		info       string
		used, max  int64
		errContain string
	}{
		{name: "both", info: "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n", used: 1 << 20},
		{name: "a limit", info: "used_memory:10\nmaxmemory:2000\n", used: 10, max: 2000},
		{name: "no maxmemory", info: "used_memory:10\r\n", errContain: "no used_memory or maxmemory"},
		{name: "no used_memory", info: "used_memory_rss:10\r\nmaxmemory:5\r\n", errContain: "no used_memory or maxmemory"},
		{name: "not a number", info: "used_memory:ten\r\nmaxmemory:5\r\n", errContain: `used_memory "ten"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			used, maxmemory, err := parseInfoMemory(tt.info)
			if tt.errContain != "" {
				require.ErrorContains(t, err, tt.errContain)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.used, used)
			require.Equal(t, tt.max, maxmemory)
		})
	}
}
