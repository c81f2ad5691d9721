package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// redacted replaces the bot token wherever it would be printed.
const redacted = "<token>"

// redactor removes the bot token (and its secret part after ':', and their
// escaped forms) from text. The Bot API puts the token in every request URL,
// so any error quoting a URL would leak it.
type redactor struct{ secrets []string }

func newRedactor(token string) *redactor {
	r := &redactor{}
	add := func(s string) {
		if len(s) >= 8 && !strings.Contains(strings.Join(r.secrets, "\x00"), s+"\x00") {
			r.secrets = append(r.secrets, s)
		}
	}
	for _, s := range []string{token, url.PathEscape(token), url.QueryEscape(token)} {
		add(s)
	}
	if _, secret, ok := strings.Cut(token, ":"); ok {
		add(secret)
		add(url.QueryEscape(secret))
	}
	return r
}

// String returns s with every secret replaced.
func (r *redactor) String(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// Error returns err with a redacted message that still unwraps to err.
func (r *redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: r.String(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Handler wraps h so the message and every attribute are redacted: no log
// line carries the token, whoever logs it.
func (r *redactor) Handler(h slog.Handler) slog.Handler { return &redactHandler{r: r, h: h} }

type redactHandler struct {
	r *redactor
	h slog.Handler
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool { out.AddAttrs(h.attr(a)); return true })
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
		if e, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.r.String(e.Error()))
		}
		return slog.String(a.Key, h.r.String(fmt.Sprint(v.Any())))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
