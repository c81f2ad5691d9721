package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// table collects the figures; each has a baseline measured in the same run.
type table struct {
	rows []tableRow
}

type tableRow struct {
	item, measure, value, baseline, ratio string
}

func (t *table) add(item, measure, value, baseline, ratio string) {
	t.rows = append(t.rows, tableRow{item, measure, value, baseline, ratio})
}

func (t *table) write(w io.Writer) {
	fmt.Fprintln(w, "| # | measure | codemojex | baseline | ratio |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|")
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.item, r.measure, r.value, r.baseline, r.ratio)
	}
}

func rate(v float64) string { return fmt.Sprintf("%.0f jobs/s", v) }
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

type machine struct {
	cpus   int
	model  string
	server string
}

func (m machine) String() string {
	return fmt.Sprintf("%d CPUs (nproc), %s, %s", m.cpus, m.model, m.server)
}

func describeMachine(ctx context.Context, srv *valkeyserver.Server) (machine, error) {
	m := machine{cpus: runtime.NumCPU(), model: "unknown CPU"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.model = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.CommandContext(ctx, "nproc").Output(); err == nil {
		fmt.Sscan(string(out), &m.cpus)
	}
	c, err := srv.NewClient()
	if err != nil {
		return m, fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	info, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return m, fmt.Errorf("info: %w", err)
	}
	name, version := "Redis", ""
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			version = v
		}
		if v, ok := strings.CutPrefix(line, "valkey_version:"); ok {
			name, version = "Valkey", v
		}
	}
	m.server = name + " " + version
	return m, nil
}

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
