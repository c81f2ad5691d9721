// Package process is one codemojex process: the app of its role
// (internal/app) and, with CONSOLE_ADDR, the operator console
// (internal/console), run as services (internal/lifecycle) until the
// context ends or one of them fails. cmd/bot loads the configuration and
// calls Run.
package process

import (
	"context"
	"log/slog"

	"github.com/codemojex/codemojex/internal/app"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/console"
	"github.com/codemojex/codemojex/internal/lifecycle"
	"github.com/codemojex/codemojex/redact"
)

// Run builds the process for cfg (validated by config.Load) and runs its
// services: the app's (app.Services, in their order) and then the
// console's, stopped first. log receives every line (the token redacted).
// It returns nil after a graceful stop on ctx's end, or: app.New's error;
// console.New's (a *config.Error when it refuses CONSOLE_TOKEN); the first
// failing service's *lifecycle.Error (errors.Is sees its cause:
// intake.ErrTokenRejected when Telegram refuses the token).
func Run(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	a, err := app.New(cfg, app.WithLogger(log))
	if err != nil {
		return err
	}
	var extra []lifecycle.Service
	if cfg.ConsoleAddr != "" {
		// config.Load has checked CONSOLE_TOKEN. The console's lines go
		// through the token redactor, as the app's do.
		clog := slog.New(redact.New(cfg.Token).Handler(log.Handler())).With("component", "console")
		con, err := console.New(a.Admin(), console.Config{Token: cfg.ConsoleToken, TrustedProxies: cfg.TrustedProxies(), Log: clog})
		if err != nil {
			a.Close()
			return err
		}
		extra = append(extra, con.Service(cfg.ConsoleAddr))
	}
	return a.RunWith(ctx, extra...)
}
