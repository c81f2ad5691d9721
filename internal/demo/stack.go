package demo

import (
	"context"
	"log/slog"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// Stack is the system the demo plays its scene against, started for a
// caller that drives it itself (the playground, internal/play): the real
// bot as a child process (BOT_ROLE=all, polling), a throwaway Valkey (or
// Options.ValkeyURL's) and the Bot API emulator at Telegram's limits.
type Stack struct {
	st *stack
}

// StartStack builds and starts everything as Run does (opts.Scene and the
// view's fields are unused; opts.Out gets the setup lines, the console's
// address and token among them) and returns once the bot polls. Close it.
// Errors are those of Run's setup (no Valkey, the bot does not build or
// start, ...), with everything started so far stopped.
func StartStack(ctx context.Context, log *slog.Logger, opts Options) (*Stack, error) {
	opts = opts.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := startStack(ctx, log, opts)
	if err != nil {
		st.close()
		return nil, err
	}
	return &Stack{st: st}, nil
}

// Emulator is the Bot API emulator the bot talks to.
func (s *Stack) Emulator() *tgemu.Emulator { return s.st.emu }

// ValkeyURL is the bot's Valkey.
func (s *Stack) ValkeyURL() string { return s.st.valkeyURL }

// Console is the operator console's base URL ("http://host:port") and its
// sign-in token (a POST of the form field token to URL/login signs in);
// both "" without Options.ConsoleAddr.
func (s *Stack) Console() (url, token string) { return s.st.consoleURL, s.st.consoleTok }

// Metrics is the bot's /metrics URL ("http://host:port/metrics"); ""
// without Options.HTTPAddr.
func (s *Stack) Metrics() string { return s.st.metricsURL }

// BotDone is closed when the bot's process ends.
func (s *Stack) BotDone() <-chan struct{} { return s.st.bot.done }

// BotOutput is the last 16 KiB of the bot's stdout and stderr.
func (s *Stack) BotOutput() string { return s.st.bot.logs.String() }

// Close stops the bot (SIGTERM, killed after 10 s), then Valkey and the
// emulator. Its error says how the bot did not stop cleanly (it had already
// exited, failed, or had to be killed).
func (s *Stack) Close() error {
	s.st.botStopped = true
	err := s.st.bot.stop(stopGrace)
	s.st.close()
	return err
}
