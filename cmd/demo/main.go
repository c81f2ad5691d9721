// Command demo shows codemojex working end to end without a Telegram token:
// it builds and runs the real bot against a throwaway Valkey and the in-repo
// Bot API emulator, plays a scripted scene (a bursting chat, quiet players,
// an admin weight change, a broadcast, and a rush where the global rate
// binds and a raised weight shows) with a live per-chat table, and exits 1
// when a promise fails (quiet chats starved, messages lost, a weight
// without effect, 429s, taps unanswered or limited). Ctrl-C stops it: it
// prints the figures so far and "interrupted", judges nothing, exits 130.
//
//	go run ./cmd/demo          # or: make demo
//	go run ./cmd/demo -quick   # the short scene the tests play
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/codemojex/codemojex/internal/demo"
)

func main() {
	os.Exit(run())
}

func run() int {
	quick := flag.Bool("quick", false, "play the short scene (under a minute)")
	bot := flag.String("bot", "", "run this bot binary instead of building ./cmd/bot")
	valkeyURL := flag.String("valkey-url", "", "use this empty Valkey/Redis database instead of starting a throwaway server")
	race := flag.Bool("race", false, "build the bot with the race detector")
	plain := flag.Bool("plain", false, "print plain progress lines even on a terminal")
	verbose := flag.Bool("v", false, "log the demo's and the emulator's debug output to stderr")
	consoleAddr := flag.String("console", "", "serve the bot's operator console on this address (e.g. 127.0.0.1:8081), with a token printed at start")
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

	scene := demo.FullScene()
	if *quick {
		scene = demo.QuickScene()
	}
	var buildFlags []string
	if *race {
		buildFlags = []string{"-race"}
	}
	sum, err := demo.Run(ctx, log, demo.Options{
		Scene:       scene,
		BotBinary:   botBin,
		BuildFlags:  buildFlags,
		ValkeyURL:   *valkeyURL,
		ConsoleAddr: *consoleAddr,
		Out:         os.Stdout,
		TTY:         !*plain && demo.IsTerminal(os.Stdout),
	})
	if errors.Is(err, demo.ErrInterrupted) {
		fmt.Fprintln(os.Stderr, "interrupted")
		return 130 // 128 + SIGINT, as a shell reports it
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if !sum.OK() {
		return 1
	}
	return 0
}
