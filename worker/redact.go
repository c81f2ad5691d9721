package worker

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// Redactor removes a bot token from text. The Bot API puts the token in
// every request URL (https://api.telegram.org/bot<token>/<method>), so any
// error that quotes the URL (a *url.Error from a dropped connection or a
// malformed server URL, the library's debug output) would leak it. Every
// error the worker logs, returns or stores goes through one Redactor.
//
// It replaces, with "<redacted>": the token, its path- and query-escaped
// forms (the ':' becomes "%3A"), and its secret part after the ':' (when 8
// bytes or longer), so a token cut at the ':' or re-encoded is caught too.
// The bot id before the ':' is public (getMe returns it) and is kept.
type Redactor struct {
	secrets []string
}

// Redacted replaces each secret in redacted text.
const Redacted = "<redacted>"

// NewRedactor returns a Redactor for token.
func NewRedactor(token string) *Redactor {
	r := &Redactor{}
	add := func(s string) {
		if len(s) < 8 {
			return
		}
		for _, have := range r.secrets {
			if have == s {
				return
			}
		}
		r.secrets = append(r.secrets, s)
	}
	add(token)
	add(url.PathEscape(token))
	add(url.QueryEscape(token))
	if _, secret, ok := strings.Cut(token, ":"); ok {
		add(secret)
		add(url.PathEscape(secret))
		add(url.QueryEscape(secret))
	}
	return r
}

// String returns s with every secret replaced (longest first, so the whole
// token is replaced before its secret part).
func (r *Redactor) String(s string) string {
	for _, sec := range r.secrets { // token forms were added before the secret part
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return s
}

// Error returns err with its message redacted (nil for nil). The result
// still unwraps to err, so errors.Is / errors.As keep working; only its
// Error() text is safe to print (do not print what errors.As extracts).
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
// errors, Stringers and any other value, formatted) are redacted before h
// sees them: a log line never carries the token, whoever logs it.
func (r *Redactor) Handler(h slog.Handler) slog.Handler { return &redactHandler{r: r, h: h} }

type redactHandler struct {
	r *Redactor
	h slog.Handler
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &redactHandler{r: h.r, h: h.h.WithAttrs(red)}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{r: h.r, h: h.h.WithGroup(name)}
}

func (h *redactHandler) attr(a slog.Attr) slog.Attr {
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
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.String(x.Error()))
		default:
			return slog.String(a.Key, h.r.String(fmt.Sprint(x)))
		}
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
