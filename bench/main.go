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
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

type config struct {
	docs    string // where charts go
	workers int    // concurrency of the throughput runs
	jobs    int    // jobs per throughput run
	quick   bool
	only    string
	debug   bool
	log     *slog.Logger
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-role" && os.Args[2] == "worker" {
		if err := workerMain(os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	flag.StringVar(&cfg.docs, "docs", "../docs", "directory for the PNG charts")
	flag.IntVar(&cfg.workers, "c", 50, "concurrent clients in the throughput runs (redis-benchmark's default is 50)")
	flag.IntVar(&cfg.jobs, "n", 100_000, "jobs per throughput run")
	flag.BoolVar(&cfg.quick, "quick", false, "smaller runs (a smoke test of the command, figures are not meaningful)")
	flag.StringVar(&cfg.only, "only", "", "comma-separated sections to run (throughput,srvtime,latency,fairness,weights,budget,broadcast,memory); empty: all")
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		cfg.log.Error("bench failed", "err", err)
		os.Exit(1)
	}
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

func run(ctx context.Context, cfg config, out io.Writer) error {
	began := time.Now()
	if err := os.MkdirAll(cfg.docs, 0o755); err != nil {
		return fmt.Errorf("docs dir: %w", err)
	}
	srv, err := valkeyserver.Start("standalone", valkeyserver.Options{})
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	defer srv.Stop()
	m, err := describeMachine(ctx, srv)
	if err != nil {
		return err
	}
	cfg.log.Info("server up", "addr", srv.Addr, "version", m.server)
	t := &table{}
	steps := []struct {
		name string
		fn   func(context.Context, config, *valkeyserver.Server, *table) error
	}{
		{"throughput", benchThroughput},
		{"srvtime", benchServerTime},
		{"latency", benchClaimLatency},
		{"fairness", benchFairness},
		{"weights", benchWeights},
		{"budget", benchBudget},
		{"broadcast", benchBroadcast},
		{"memory", benchMemory},
	}
	for _, s := range steps {
		if !cfg.want(s.name) {
			continue
		}
		if err := flush(ctx, srv); err != nil {
			return err
		}
		start := time.Now()
		cfg.log.Info("section", "name", s.name)
		if err := s.fn(ctx, cfg, srv, t); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		cfg.log.Info("section done", "name", s.name, "took", time.Since(start).Round(time.Millisecond))
	}
	fmt.Fprintf(out, "\nMachine: %s\n\n", m)
	t.write(out)
	fmt.Fprintf(out, "\nCharts: %s\nTotal run time: %s\n", filepath.Join(cfg.docs, "bench-*.png"), time.Since(began).Round(time.Second))
	return nil
}
