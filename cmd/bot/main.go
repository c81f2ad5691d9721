// Command bot is the codemojex Telegram bot: the update poller and handlers,
// the notification workers, or both (BOT_ROLE), with /healthz and /metrics
// on HTTP_ADDR, and the operator console on CONSOLE_ADDR when set
// (internal/console). Configuration comes from the environment, with a .env file
// in the working directory loaded first without overriding set variables
// (see internal/config). A bad value stops it with exit code 2 and a message
// naming the variable; so does a token Telegram rejects (401 Unauthorized
// to getMe or getUpdates: intake.ErrTokenRejected), rather than retrying
// forever: no retry succeeds until the token is changed, and an exit is
// visible in the container's status (with restart: unless-stopped the
// restarts back off by themselves). SIGINT/SIGTERM stop it gracefully.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/codemojex/codemojex/internal/app"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/console"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/redact"
)

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1 // a runtime failure
	exitConfig = 2 // a bad configuration value, or a token Telegram rejects
)

func main() { os.Exit(run()) }

func run() int {
	cfg, err := config.Load(".env")
	if err != nil {
		fmt.Fprintf(os.Stderr, "codemojex: configuration error: %v\n", err)
		return exitConfig
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := app.NewLogger(cfg)
	warnFileLimit(logger, cfg)
	a, err := app.New(cfg, app.WithLogger(logger))
	if err != nil {
		fmt.Fprintf(os.Stderr, "codemojex: %v\n", err)
		return exitFail
	}
	if cfg.ConsoleAddr != "" {
		// The console (CONSOLE_ADDR): config.Load has checked CONSOLE_TOKEN.
		// Its log lines go through the token redactor, as the app's do.
		log := slog.New(redact.New(cfg.Token).Handler(app.NewLogger(cfg).Handler())).With("component", "console")
		con, err := console.New(a.Admin(), console.Config{Token: cfg.ConsoleToken, Log: log})
		if err != nil {
			fmt.Fprintf(os.Stderr, "codemojex: %v\n", err)
			return exitConfig
		}
		ln, err := net.Listen("tcp", cfg.ConsoleAddr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "codemojex: console: CONSOLE_ADDR %s: %v\n", cfg.ConsoleAddr, err)
			return exitFail
		}
		go func() {
			if err := con.Run(ctx, ln); err != nil {
				fmt.Fprintf(os.Stderr, "codemojex: %v\n", err)
			}
		}()
	}
	if err := a.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "codemojex: %v\n", err)
		if errors.Is(err, intake.ErrTokenRejected) {
			return exitConfig
		}
		return exitFail
	}
	return exitOK
}
