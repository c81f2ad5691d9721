package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// intakeBench is the go test command of the update intake's benchmark
// (internal/app BenchmarkIntake), run in the main module: it needs the
// app's unexported test helpers, so it stays a Go benchmark there and
// reports its figures with b.ReportMetric.
var intakeBench = []string{"test", "-run", "^$", "-bench", "^BenchmarkIntake$", "-benchtime", "1x", "-count", "1", "./internal/app/"}

// benchIntake runs BenchmarkIntake (its own servers, started by
// internal/valkeytest from the same PATH) and turns its metrics into rows;
// its log lines (the per-run CPU breakdown) go into the report.
func benchIntake(ctx context.Context, cfg config, _ *valkeyserver.Server, t *table) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", intakeBench...)
	cmd.Dir = cfg.repo
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(intakeBench, " "), err, out)
	}
	m, logs, err := parseBenchOutput(out, "BenchmarkIntake")
	if err != nil {
		return err
	}
	cfg.log.Info("intake", "metrics", m)
	need := func(units ...string) error {
		for _, u := range units {
			if _, ok := m[u]; !ok {
				return fmt.Errorf("BenchmarkIntake reported no %q metric (it reported %v)", u, m)
			}
		}
		return nil
	}
	if err := need("handlers", "baseline_updates/s", "1proc_updates/s", "2proc_updates/s", "baseline_valkey_us/update",
		"1proc_valkey_us/update", "baseline_go_us/update", "1proc_go_us/update", "quiet_p100_ms", "quiet_p100_ms_handlers1",
		"webhook_p99_ms", "webhook_posts/s"); err != nil {
		return err
	}
	h := int(m["handlers"])
	ups := func(v float64) string { return commas(int(v+0.5)) + " updates/s" }
	us := func(v float64) string { return fmt.Sprintf("%.0f µs", v) }
	msf := func(v float64) string { return fmt.Sprintf("%.0f ms", v) }
	t.add(fmt.Sprintf("updates recorded -> handled, 6,000 `/help` from 2,000 chats: 1 handler process (`HANDLERS`=%d) vs one handler loop (`HANDLERS=1`)", h),
		ups(m["1proc_updates/s"]), ups(m["baseline_updates/s"]), ratio(m["1proc_updates/s"], m["baseline_updates/s"]))
	t.add(fmt.Sprintf("the same, 2 handler processes (`HANDLERS`=%d each) vs 1", h),
		ups(m["2proc_updates/s"]), ups(m["1proc_updates/s"]), ratio(m["2proc_updates/s"], m["1proc_updates/s"]))
	t.add(fmt.Sprintf("Valkey CPU per handled update (INFO cpu), `HANDLERS`=%d vs `HANDLERS=1` (lower is better)", h),
		us(m["1proc_valkey_us/update"]), us(m["baseline_valkey_us/update"]), ratio(m["1proc_valkey_us/update"], m["baseline_valkey_us/update"]))
	t.add(fmt.Sprintf("handler process CPU per handled update (/proc), `HANDLERS`=%d vs `HANDLERS=1` (lower is better)", h),
		us(m["1proc_go_us/update"]), us(m["baseline_go_us/update"]), ratio(m["1proc_go_us/update"], m["baseline_go_us/update"]))
	t.add(fmt.Sprintf("ten quiet chats' `/start` recorded behind a 3,000-update raid from one group: recorded -> handled, p100, `HANDLERS`=%d vs `HANDLERS=1`", h),
		msf(m["quiet_p100_ms"]), msf(m["quiet_p100_ms_handlers1"]), ratio(m["quiet_p100_ms"], m["quiet_p100_ms_handlers1"]))
	t.add("webhook: 2,000 POSTs (1,800 distinct `update_id`s, 200 resends) from 50 clients, every one answered 200 and 1,800 recorded once each: p99 response time (POSTs/s)",
		fmt.Sprintf("%.1f ms (%.0f/s)", m["webhook_p99_ms"], m["webhook_posts/s"]), "none: a check with its latency", "—")
	if len(logs) > 0 {
		t.note("BenchmarkIntake's log of this run (per throughput run: updates/s, CPU per update of Valkey and of the handler processes, the machine's busy share, scripts, commands and server reads per update, the commands costing most server time):\n\n```\n" +
			strings.Join(logs, "\n") + "\n```")
	}
	return nil
}

// parseBenchOutput reads go test -bench output: the metrics (unit ->
// value) of its one result line, and the benchmark's log
// lines (those b.Logf printed, file:line prefix dropped). Errors: no
// result line, or a value that is not a number.
func parseBenchOutput(out []byte, name string) (map[string]float64, []string, error) {
	var metrics map[string]float64
	var logs []string
	inLog := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case slices.Contains(f, "ns/op") && slices.Index(f, "ns/op") >= 2:
			// BenchmarkIntake-2  1  123 ns/op  975.0 baseline_updates/s ...
			// (only one benchmark runs; output written while it ran may
			// split the name from the figures, so the line is found by
			// its ns/op, and its metrics are the value-unit pairs from
			// there).
			metrics = map[string]float64{}
			for i := slices.Index(f, "ns/op") - 1; i+1 < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: metric %q: %w", name, f[i+1], err)
				}
				metrics[f[i+1]] = v
			}
			inLog = false
		case strings.HasPrefix(line, "--- BENCH: "+name):
			inLog = true
		case inLog && strings.HasPrefix(line, "    "):
			l := strings.TrimPrefix(line, "    ")
			if file, rest, ok := strings.Cut(l, ": "); ok && strings.HasSuffix(strings.SplitN(file, ":", 2)[0], ".go") {
				l = rest
			}
			logs = append(logs, l)
		default:
			inLog = false
		}
	}
	if metrics == nil {
		return nil, nil, fmt.Errorf("no %s result line in the go test output:\n%s", name, out)
	}
	return metrics, logs, nil
}
