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
// main loads the configuration and runs the process (internal/process):
// its services start in order and stop in the reverse order. Besides, it
// takes `healthcheck` (a probe of its own /healthz, for a container image
// without curl: exit 0 healthy, 1 unhealthy, 2 usage), --version and
// --help.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/codemojex/codemojex/internal/app"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/process"
	"github.com/codemojex/codemojex/internal/version"
)

// Exit codes.
const (
	exitOK     = 0
	exitFail   = 1 // a runtime failure
	exitConfig = 2 // a bad configuration value, or a token Telegram rejects
)

func main() { os.Exit(run(os.Args[1:])) }

// usage is what -h/--help prints: the bot is configured by its
// environment; its only arguments are these.
const usage = `codemojex: the codemojex Telegram bot.

Usage:
  codemojex                        run the bot (configured by its environment)
  codemojex healthcheck [-timeout 3s]
                                   GET this bot's /healthz (on HTTP_ADDR): exit 0 when
                                   it answers 200, 1 when not, 2 on a usage error
  codemojex --version              print the version and exit
  codemojex --help                 print this and exit

It reads its configuration from environment variables, with a .env file in
the working directory loaded first (set variables win): TELEGRAM_BOT_TOKEN is
required; BOT_ROLE (all, poller, handler, worker), VALKEY_URL, VALKEY_KEY_TAG,
HTTP_ADDR and the others are listed, with their defaults, in the README's
Configuration section and in .env.example. A bad value exits 2 naming the
variable. SIGINT/SIGTERM stop it gracefully.
`

// run runs the command line args (without the program name) and returns
// the exit code.
func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help", "-help", "help":
			fmt.Print(usage)
			return exitOK
		case "--version", "-version", "version":
			if len(args) == 1 {
				fmt.Println(version.Line())
				return exitOK
			}
		case "healthcheck":
			return healthcheck(args[1:], os.Stdout, os.Stderr)
		}
		fmt.Fprintf(os.Stderr, "codemojex: unexpected argument %q: it takes none but healthcheck, --version and --help (configure it by its environment; codemojex --help)\n", strings.Join(args, " "))
		return exitConfig
	}
	cfg, err := config.Load(".env")
	shadowed := config.EmptyOverrides(".env")
	if err != nil {
		fmt.Fprintf(os.Stderr, "codemojex: configuration error: %v\n", err)
		if len(shadowed) > 0 {
			fmt.Fprintf(os.Stderr, "codemojex: set but empty in the environment, so .env's values were not used: %s (unset them to use .env's)\n", strings.Join(shadowed, ", "))
		}
		return exitConfig
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := app.NewLogger(cfg)
	if len(shadowed) > 0 {
		logger.Warn("set but empty in the environment, so .env's values were not used: unset them to use .env's", slog.Any("vars", shadowed))
	}
	warnFileLimit(logger, cfg)
	if err := process.Run(ctx, cfg, logger); err != nil {
		fmt.Fprintf(os.Stderr, "codemojex: %v\n", err)
		var ce *config.Error
		if errors.As(err, &ce) || errors.Is(err, intake.ErrTokenRejected) {
			return exitConfig
		}
		return exitFail
	}
	return exitOK
}
