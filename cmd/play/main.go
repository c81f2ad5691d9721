// Command play is the playground (docs/play.md): the real bot against a
// throwaway Valkey and the Bot API emulator, the operator console, and a
// local web page that looks like a Telegram chat list, where simulated
// users in several languages play the bot, and buttons stage a burst, a
// flood, a broadcast, or Telegram slowing down or answering 429. It runs
// until Ctrl-C.
//
//	go run ./cmd/play          # or: make play
//	go run ./cmd/play -addr 127.0.0.1:9000
//	go run ./cmd/play -metrics 127.0.0.1:9090  # a fixed port for the bot's /metrics
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/codemojex/codemojex/internal/demo"
	"github.com/codemojex/codemojex/internal/play"
)

func main() {
	os.Exit(run())
}

func run() int {
	addr := flag.String("addr", play.DefaultAddr, "serve the playground's page on this address")
	consoleAddr := flag.String("console", "", "serve the operator console on this address (default: a free loopback port)")
	metricsAddr := flag.String("metrics", "", "serve the bot's /metrics and /healthz on this address (default: a free loopback port)")
	bot := flag.String("bot", "", "run this bot binary instead of building ./cmd/bot")
	valkeyURL := flag.String("valkey-url", "", "use this empty Valkey/Redis database instead of starting a throwaway server")
	race := flag.Bool("race", false, "build the bot with the race detector")
	verbose := flag.Bool("v", false, "log the playground's and the emulator's debug output to stderr")
	flag.Parse()
	botBin, err := demo.BotFlag(*bot)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var buildFlags []string
	if *race {
		buildFlags = []string{"-race"}
	}
	err = play.Run(ctx, log, play.Options{
		Addr:  *addr,
		Stack: demo.Options{BotBinary: botBin, BuildFlags: buildFlags, ValkeyURL: *valkeyURL, ConsoleAddr: *consoleAddr, HTTPAddr: *metricsAddr},
	}, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "stopped")
	return 0
}
