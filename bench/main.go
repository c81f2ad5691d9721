// Command bench is codemojex's benchmark (`make bench`): it starts a
// throwaway Valkey/Redis server and the Telegram Bot API emulator, measures
// the lanes queue and the Telegram pipeline, and prints a table in which
// every figure is a ratio against a baseline measured in the same run (the
// machines are shared and noisy: absolute times alone mean little). Charts go
// to docs/ as PNG files.
//
// It lives in its own Go module (bench/go.mod) so that the main module does
// not depend on asynq or gonum.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

type config struct {
	docs    string // where the report (benchmarks.md) and its charts go
	repo    string // the main module's root (the intake bench runs there)
	workers int    // concurrency of the throughput runs
	jobs    int    // jobs per throughput run
	quick   bool
	only    string
	splice  bool // put this partial run's sections into the full report in docs (splice.go)
	debug   bool
	log     *slog.Logger
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-role" {
		roles := map[string]func([]string) error{"worker": workerMain, "start": startMain}
		role, ok := roles[os.Args[2]]
		if !ok {
			fmt.Fprintf(os.Stderr, "bench: -role %s: want worker or start\n", os.Args[2])
			os.Exit(2)
		}
		if err := role(os.Args[3:]); err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: %v\n", os.Args[2], err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	flag.StringVar(&cfg.docs, "docs", "", "directory for the report (benchmarks.md) and its PNG charts; make bench passes ../docs. "+
		"Empty: a new temporary directory. Only a full run (no -only, no -quick) may write a -docs directory")
	flag.StringVar(&cfg.repo, "repo", "..", "the codemojex checkout (its commit goes into the report; the intake section runs go test there)")
	flag.IntVar(&cfg.workers, "c", 50, "concurrent clients in the throughput runs (redis-benchmark's default is 50)")
	flag.IntVar(&cfg.jobs, "n", 100_000, "jobs per throughput run")
	flag.BoolVar(&cfg.quick, "quick", false, "smaller runs (a smoke test of the command, figures are not meaningful)")
	flag.StringVar(&cfg.only, "only", "", "comma-separated sections to run ("+strings.Join(sectionNames(), ",")+"); empty: all")
	flag.BoolVar(&cfg.splice, "splice", false, "with -only and -docs: put this run's sections into the full report already there "+
		"(their rows and explanations in place of theirs, or added in the registry's order; each says its own run), the rest kept")
	verbose := flag.Bool("v", false, "log progress at debug level")
	flag.Parse()
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	cfg.debug = *verbose
	cfg.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if cfg.quick {
		cfg.jobs = 10_000
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		cfg.log.Error("bench failed", "err", err)
		os.Exit(1)
	}
}

// check refuses flags that would make a partial report pass for a full
// one, and unknown -only names; it picks a temporary directory when
// -docs is empty.
func (c *config) check() error {
	known := sectionNames()
	for _, s := range strings.Split(c.only, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(known, s) {
			return fmt.Errorf("-only: no section %q (sections: %s)", s, strings.Join(known, ","))
		}
	}
	if c.splice && (c.only == "" || c.docs == "" || c.quick) {
		return fmt.Errorf("-splice needs -only and -docs (a full report there), and no -quick")
	}
	if c.docs != "" && (c.quick || c.only != "") && !c.splice {
		return fmt.Errorf("-docs %s with -quick or -only: the report there is one full run; drop -docs to write a partial run to a temporary directory, or add -splice to put its sections into that report", c.docs)
	}
	if c.docs == "" {
		dir, err := os.MkdirTemp("", "codemojex-bench-")
		if err != nil {
			return fmt.Errorf("temporary directory: %w", err)
		}
		c.docs = dir
	}
	return nil
}

func (c config) want(section string) bool {
	if c.only == "" {
		return true
	}
	for _, s := range strings.Split(c.only, ",") {
		if strings.TrimSpace(s) == section {
			return true
		}
	}
	return false
}

// run measures every wanted section and writes the report into cfg.docs;
// the table also goes to out.
func run(ctx context.Context, cfg config, out io.Writer) error {
	meta := runMeta{started: time.Now(), loadStart: loadAverage(), args: flagArgs()}
	if err := os.MkdirAll(cfg.docs, 0o755); err != nil {
		return fmt.Errorf("docs dir: %w", err)
	}
	meta.commit, meta.dirty = gitCommit(ctx, cfg.repo)
	srv, err := valkeyserver.Start("standalone", valkeyserver.Options{})
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	defer srv.Stop()
	meta.machine, err = describeMachine(ctx, srv)
	if err != nil {
		return err
	}
	cfg.log.Info("server up", "addr", srv.Addr, "version", meta.machine.server, "binary", meta.machine.serverBin, "load", meta.loadStart)
	results, runErr := runSections(ctx, cfg, srv)
	if len(results) == 0 {
		return runErr
	}
	meta.took, meta.loadEnd = time.Since(meta.started), loadAverage()
	if cfg.splice {
		path, err := spliceInto(cfg, meta, results)
		if err != nil {
			return errors.Join(runErr, err)
		}
		writeTable(out, results)
		fmt.Fprintf(out, "\nSpliced into: %s\nTotal run time: %s\n", path, meta.took.Round(time.Second))
		return runErr
	}
	var b bytes.Buffer
	writeReport(&b, meta, results)
	path := filepath.Join(cfg.docs, "benchmarks.md")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeDocBlocks(cfg.docs, meta, results); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%s, %s; load average %s at the start, %s at the end\n\n", meta.machine.server, meta.machine.model, meta.loadStart, meta.loadEnd)
	writeTable(out, results)
	fmt.Fprintf(out, "\nReport: %s\nTotal run time: %s\n", path, meta.took.Round(time.Second))
	return runErr
}

// flagArgs is the flags set on the command line that change what is
// measured (not -docs, -repo, -v), as they would be typed (for the
// report's command line).
func flagArgs() string {
	var b strings.Builder
	flag.Visit(func(f *flag.Flag) {
		if f.Name != "docs" && f.Name != "repo" && f.Name != "v" {
			fmt.Fprintf(&b, " -%s=%s", f.Name, f.Value)
		}
	})
	return b.String()
}
