package config

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
)

// HTTP is the server of /healthz, /metrics and, in webhook mode, the
// webhook path.
type HTTP struct {
	// HTTPAddr serves /healthz and /metrics (HTTP_ADDR).
	HTTPAddr string `env:"HTTP_ADDR" envDefault:":8080"`
}

// Validate checks that HTTP_ADDR is host:port or :port. Errors: *Error.
func (h HTTP) Validate() error {
	if _, _, err := net.SplitHostPort(h.HTTPAddr); err != nil {
		return &Error{Var: "HTTP_ADDR", Want: fmt.Sprintf("host:port or :port, e.g. :8080; got %q", h.HTTPAddr)}
	}
	return nil
}

// MinConsoleToken is the shortest CONSOLE_TOKEN accepted (characters).
const MinConsoleToken = 32

// Console is the operator console's address and sign-in token.
type Console struct {
	// ConsoleAddr serves the operator console (CONSOLE_ADDR, host:port;
	// "" = off, the default). Bind it to loopback (127.0.0.1:8081) and
	// reach it through an SSH tunnel or a TLS-terminating proxy.
	ConsoleAddr string `env:"CONSOLE_ADDR"`
	// ConsoleToken is the console's sign-in token (CONSOLE_TOKEN), at
	// least MinConsoleToken characters; required with CONSOLE_ADDR.
	ConsoleToken string `env:"CONSOLE_TOKEN"`
}

// Validate checks CONSOLE_ADDR (host:port) and, with it, CONSOLE_TOKEN:
// at least MinConsoleToken characters, not one character repeated. The
// token is never quoted. That it is not the bot token is Config.Validate's
// rule (it spans two sections). Errors: *Error.
func (c Console) Validate() error {
	if c.ConsoleAddr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(c.ConsoleAddr); err != nil {
		return &Error{Var: "CONSOLE_ADDR", Want: fmt.Sprintf("host:port, e.g. 127.0.0.1:8081 (empty: no console); got %q", c.ConsoleAddr)}
	}
	switch {
	case c.ConsoleToken == "":
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("required with CONSOLE_ADDR: at least %d random characters (e.g. openssl rand -base64 32); it is empty, so the console is not started", MinConsoleToken)}
	case len(c.ConsoleToken) < MinConsoleToken:
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("at least %d random characters (e.g. openssl rand -base64 32); the value set has %d (not shown)", MinConsoleToken, len(c.ConsoleToken))}
	case strings.Count(c.ConsoleToken, c.ConsoleToken[:1]) == len(c.ConsoleToken):
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("at least %d random characters, not one character repeated", MinConsoleToken)}
	}
	return nil
}

// Log is the log level.
type Log struct {
	// LogLevel is debug, info, warn or error (LOG_LEVEL).
	LogLevel string `env:"LOG_LEVEL" envDefault:"info"`
}

// Validate checks LOG_LEVEL. Errors: *Error.
func (l Log) Validate() error {
	if _, err := l.SlogLevel(); err != nil {
		return &Error{Var: "LOG_LEVEL", Want: fmt.Sprintf("one of debug, info, warn, error; got %q", l.LogLevel)}
	}
	return nil
}

// SlogLevel returns LogLevel as a slog.Level.
func (l Log) SlogLevel() (slog.Level, error) {
	var lvl slog.Level
	switch strings.ToLower(l.LogLevel) {
	case "debug", "info", "warn", "error":
		err := lvl.UnmarshalText([]byte(l.LogLevel))
		return lvl, err
	}
	return lvl, fmt.Errorf("unknown level %q", l.LogLevel)
}
