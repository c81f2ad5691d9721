package httpserver

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valkey-io/valkey-go"
)

// ValkeyMemoryCollector reads INFO memory of every Valkey node the client
// knows (one for a standalone server; each node of a cluster) on each
// scrape, so an alert can see a node near its maxmemory before writes are
// refused (noeviction): codemojex_valkey_used_memory_bytes and
// codemojex_valkey_maxmemory_bytes (0: no limit set), both by node
// (host:port). A node whose INFO fails (unreachable, INFO denied by an
// ACL) reports neither gauge, and codemojex_valkey_info_up{node} is 0.
// Register it on the registry /metrics serves.
type ValkeyMemoryCollector struct {
	c              valkey.Client
	used, max, upD *prometheus.Desc
}

// NewValkeyMemoryCollector returns the collector of c's nodes' memory.
func NewValkeyMemoryCollector(c valkey.Client) *ValkeyMemoryCollector {
	return &ValkeyMemoryCollector{c: c,
		used: prometheus.NewDesc("codemojex_valkey_used_memory_bytes",
			"Valkey's used_memory (INFO memory) on a node, bytes, read at scrape time.", []string{"node"}, nil),
		max: prometheus.NewDesc("codemojex_valkey_maxmemory_bytes",
			"Valkey's maxmemory (INFO memory) on a node, bytes; 0 when no limit is set (then the host's memory is the limit).", []string{"node"}, nil),
		upD: prometheus.NewDesc("codemojex_valkey_info_up",
			"1 when the last INFO memory of a node succeeded.", []string{"node"}, nil),
	}
}

// Describe sends the gauges' descriptions (prometheus.Collector).
func (v *ValkeyMemoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- v.used
	ch <- v.max
	ch <- v.upD
}

// Collect reads INFO memory of each node (2 s at most in all)
// (prometheus.Collector).
func (v *ValkeyMemoryCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	nodes := v.c.Nodes()
	addrs := make([]string, 0, len(nodes))
	for a := range nodes {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, addr := range addrs {
		n := nodes[addr]
		used, limit, err := valkeyMemory(ctx, n)
		if err != nil {
			ch <- prometheus.MustNewConstMetric(v.upD, prometheus.GaugeValue, 0, addr)
			continue
		}
		ch <- prometheus.MustNewConstMetric(v.used, prometheus.GaugeValue, float64(used), addr)
		ch <- prometheus.MustNewConstMetric(v.max, prometheus.GaugeValue, float64(limit), addr)
		ch <- prometheus.MustNewConstMetric(v.upD, prometheus.GaugeValue, 1, addr)
	}
}

// valkeyMemory returns used_memory and maxmemory (bytes; maxmemory 0: no
// limit) from INFO memory of the server c talks to (one node: a
// standalone client or one of a cluster client's Nodes). Errors: the
// server's; a reply without either field.
func valkeyMemory(ctx context.Context, c valkey.Client) (used, maxmemory int64, err error) {
	info, err := c.Do(ctx, c.B().Info().Section("memory").Build()).ToString()
	if err != nil {
		return 0, 0, fmt.Errorf("httpserver: INFO memory: %w", err)
	}
	return parseInfoMemory(info)
}

// parseInfoMemory reads used_memory and maxmemory from an INFO memory
// reply ("field:value" lines). Errors: either field missing or not an
// integer.
func parseInfoMemory(info string) (used, maxmemory int64, err error) {
	var haveUsed, haveMax bool
	for line := range strings.Lines(info) {
		k, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (k != "used_memory" && k != "maxmemory") {
			continue
		}
		n, perr := strconv.ParseInt(val, 10, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("httpserver: INFO memory: %s %q: %w", k, val, perr)
		}
		if k == "used_memory" {
			used, haveUsed = n, true
		} else {
			maxmemory, haveMax = n, true
		}
	}
	if !haveUsed || !haveMax {
		return 0, 0, fmt.Errorf("httpserver: INFO memory: no used_memory or maxmemory in %d bytes of reply", len(info))
	}
	return used, maxmemory, nil
}
