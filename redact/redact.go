// Package redact removes the bot token from text, errors and log records.
//
// The Bot API puts the token in every request URL
// (https://api.telegram.org/bot<token>/<method>), so any error that quotes
// the URL (a *url.Error from a dropped connection or a malformed server URL,
// the library's debug output) would leak it. The worker and the program
// (internal/app) pass every error they log, return or store through one
// Redactor, and wrap their loggers with Redactor.Handler.
package redact

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces each secret in redacted text.
const Redacted = "<redacted>"

// minSecret is the shortest secret replaced: shorter strings (a token
// without ':' cut to almost nothing) would blank out ordinary text.
const minSecret = 8

// Redactor removes a bot token from text. It replaces, with Redacted: the
// token, its path- and query-escaped forms (the ':' becomes "%3A"), and its
// secret part after the ':' and that part's escaped forms (when 8 bytes or
// longer), so a token cut at the ':' or re-encoded is caught too. The bot
// id before the ':' is public (getMe returns it) and is kept.
//
// A Redactor is immutable and safe for concurrent use; a nil *Redactor
// redacts nothing.
type Redactor struct {
	// secrets, longest first, so a whole token is replaced before its
	// secret part.
	secrets []string
}

// New returns a Redactor for token.
func New(token string) *Redactor {
	r := &Redactor{}
	add := func(s string) {
		if len(s) >= minSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	add(token)
	add(url.PathEscape(token))
	add(url.QueryEscape(token))
	if _, secret, ok := strings.Cut(token, ":"); ok {
		add(secret)
		add(url.PathEscape(secret))
		add(url.QueryEscape(secret))
	}
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return s
}

// Error returns err with its message redacted (nil for nil; an error that
// Error already returned is returned as is). The result still unwraps to
// err, so errors.Is / errors.As keep working; only its Error() text is safe
// to print (do not print what errors.As extracts).
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*redactedError); ok {
		return err
	}
	return &redactedError{msg: r.String(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Handler wraps h so that the message and every attribute value (strings,
// errors, Stringers and any other value, formatted; groups recursively;
// attributes added with WithAttrs too) are redacted before h sees them: a
// log line never carries the token, whoever logs it.
func (r *Redactor) Handler(h slog.Handler) slog.Handler { return &handler{r: r, h: h} }

type handler struct {
	r *Redactor
	h slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &handler{r: h.r, h: h.h.WithAttrs(red)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{r: h.r, h: h.h.WithGroup(name)}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, x := range g {
			red[i] = h.attr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.r.String(err.Error()))
		}
		return slog.String(a.Key, h.r.String(fmt.Sprint(v.Any())))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
