package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// machine is what the report says about where it ran.
type machine struct {
	cpus      int    // nproc (the CPUs this process may use)
	model     string // /proc/cpuinfo model name
	kernel    string // /proc/sys/kernel/osrelease
	goVersion string
	server    string // e.g. "Valkey 8.0.1"
	serverBin string // the binary the throwaway server ran
	benchTool string // valkey-benchmark or redis-benchmark: path and version
}

// describeMachine reads the CPU, the kernel, the server's version (INFO
// server: valkey_version, else redis_version) and binary, and the
// benchmark tool the throughput section runs. Errors: the server not
// answering INFO.
func describeMachine(ctx context.Context, srv *valkeyserver.Server) (machine, error) {
	m := machine{cpus: runtime.NumCPU(), model: "unknown CPU", kernel: "unknown", goVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if out, err := exec.CommandContext(ctx, "nproc").Output(); err == nil {
		fmt.Sscan(string(out), &m.cpus)
	}
	if bin, err := valkeyserver.Binary(); err == nil {
		if abs, err := filepath.Abs(bin); err == nil {
			bin = abs
		}
		m.serverBin = bin
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
	m.server = serverVersion(info)
	m.benchTool = "none found"
	if bin, err := benchmarkTool(); err == nil {
		m.benchTool = bin
		if out, err := exec.CommandContext(ctx, bin, "--version").Output(); err == nil {
			m.benchTool += " (" + strings.TrimSpace(string(out)) + ")"
		}
	}
	return m, nil
}

// serverVersion names the server of an INFO server reply: "Valkey 8.0.1"
// when it has valkey_version, else "Redis <redis_version>" (Valkey also
// reports a redis_version, its compatibility level).
func serverVersion(info string) string {
	name, version := "Redis", "unknown version"
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok && name == "Redis" {
			version = v
		}
		if v, ok := strings.CutPrefix(line, "valkey_version:"); ok {
			name, version = "Valkey", v
		}
	}
	return name + " " + version
}

// benchmarkTool is the path of valkey-benchmark, else redis-benchmark, on
// PATH.
func benchmarkTool() (string, error) {
	if p, err := exec.LookPath("valkey-benchmark"); err == nil {
		return p, nil
	}
	p, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return "", fmt.Errorf("neither valkey-benchmark nor redis-benchmark on PATH: %w", err)
	}
	return p, nil
}

// loadAverage is /proc/loadavg's three load averages (1, 5, 15 min), or
// "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// gitCommit is the checkout's HEAD (git rev-parse) and whether tracked
// files differ from it (git status --porcelain --untracked-files=no), run
// in dir.
func gitCommit(ctx context.Context, dir string) (commit string, dirty bool) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown (git rev-parse failed)", false
	}
	st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(strings.TrimSpace(string(st))) > 0
}
