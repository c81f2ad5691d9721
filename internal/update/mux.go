package update

import (
	"context"
	"runtime/debug"
	"strings"

	"github.com/go-telegram/bot/models"
)

// MatchFunc reports whether a route takes update u.
type MatchFunc func(u *models.Update) bool

type route struct {
	match MatchFunc
	h     Handler
}

// Mux routes each Request to the Handler of the first route (in the order
// added) whose MatchFunc matches its update, or to the default handler
// (none: an empty Outcome), wrapped in the middleware: what
// go-telegram/bot's ProcessUpdate did with handlers registered by
// RegisterHandlerMatchFunc, WithDefaultHandler and WithMiddlewares. The
// route is chosen before the middleware runs. A Mux is built before it
// serves and is not changed after: Handle may then be called concurrently.
type Mux struct {
	routes []route
	def    Handler
	ignore func(*models.Update) Ignored // what def ignores (Ignoring); nil: nothing
	mw     []Middleware
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{} }

// Route adds a route: updates that match go to h.
func (m *Mux) Route(match MatchFunc, h Handler) {
	m.routes = append(m.routes, route{match: match, h: h})
}

// RouteFunc adds a route to handler function f.
func (m *Mux) RouteFunc(match MatchFunc, f HandlerFunc) { m.Route(match, f) }

// Default sets the handler of updates no route matches.
func (m *Mux) Default(h Handler) { m.def = h }

// Ignoring sets what the default handler ignores: ig(u) is why it does not
// act on u ("" when it does), asked only for updates no route matches.
// Without it the default handler acts on every update it is given. See
// Ignores.
func (m *Mux) Ignoring(ig func(u *models.Update) Ignored) { m.ignore = ig }

// Ignores returns why the mux's handlers do not act on u: Acts ("") when a
// route matches it, else what the default handler ignores (Ignoring; Acts
// when it acts on everything), or, with no default handler, u's
// KindIgnored. It is the one answer to "does the bot act on this
// update?": the intake drops what it ignores before recording it, and
// Handle serves such an update nothing. It calls the routes' MatchFuncs
// and the Ignoring function only, so it is safe wherever Handler is.
func (m *Mux) Ignores(u *models.Update) Ignored {
	for _, rt := range m.routes {
		if rt.match(u) {
			return Acts
		}
	}
	switch {
	case m.def == nil:
		return KindIgnored(u)
	case m.ignore == nil:
		return Acts
	}
	return m.ignore(u)
}

// Use appends middleware: the first one added is the outermost (it runs
// first and sees the Outcome last), as go-telegram/bot's WithMiddlewares.
// It wraps every route and the default handler.
func (m *Mux) Use(mw ...Middleware) { m.mw = append(m.mw, mw...) }

// Handler returns the handler r goes to (its route's, else the default),
// without the middleware.
func (m *Mux) Handler(r *Request) Handler {
	for _, rt := range m.routes {
		if rt.match(r.Update) {
			return rt.h
		}
	}
	if m.def != nil {
		return m.def
	}
	return HandlerFunc(func(context.Context, *Request) Outcome { return Outcome{} })
}

// Handle serves r: its handler (Handler) wrapped in the middleware; an
// update the mux ignores (Ignores: recorded before the intake dropped
// such updates, or while the bot's identity was unknown) gets an empty
// Outcome, without the middleware.
func (m *Mux) Handle(ctx context.Context, r *Request) Outcome {
	if m.Ignores(r.Update) != Acts {
		return Outcome{}
	}
	h := m.Handler(r)
	for i := len(m.mw) - 1; i >= 0; i-- {
		h = m.mw[i](h)
	}
	return h.Handle(ctx, r)
}

// Command is a bot command at the start of a message's text:
// "/name[@bot] args".
type Command struct {
	Name string // lower case, without "/" and "@bot"
	Args string // the rest of the text, trimmed
}

// ParseCommand returns the command message m's text starts with (a
// caption is never a command). The name is 1-32 of [A-Za-z0-9_] (Bot API:
// BotCommand.command), compared in lower case; it ends at the first
// space, tab or line break. It accepts "/name@<username>" (any case) and
// rejects "/name@<another bot>", so in a group with several bots only the
// addressed one answers. ok is false when m does not start with a command.
// go-telegram/bot's MatchTypeCommand compares the whole entity
// ("start@codemojex_bot") with the pattern, so it would miss the @username
// form: commands are matched here instead.
func ParseCommand(m *models.Message, username string) (Command, bool) {
	if m == nil || !strings.HasPrefix(m.Text, "/") {
		return Command{}, false
	}
	end := strings.IndexAny(m.Text, " \t\n\r")
	if end < 0 {
		end = len(m.Text)
	}
	head := m.Text[1:end]
	name, mention, hasMention := strings.Cut(head, "@")
	if name == "" || len(name) > 32 {
		return Command{}, false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return Command{}, false
		}
	}
	if hasMention && !strings.EqualFold(mention, username) {
		return Command{}, false
	}
	return Command{Name: strings.ToLower(name), Args: strings.TrimSpace(m.Text[end:])}, true
}

// IsCommand matches a message (not an edited one) whose text starts with
// command name (lower case) for the bot username returns (ParseCommand;
// username is asked at each match: "" until it is known, when only
// "/name" without "@..." matches).
func IsCommand(name string, username func() string) MatchFunc {
	return func(u *models.Update) bool {
		if u.Message == nil {
			return false
		}
		c, ok := ParseCommand(u.Message, username())
		return ok && c.Name == name
	}
}

// HasTextPrefix matches a message whose text starts with prefix
// (go-telegram/bot's HandlerTypeMessageText with MatchTypePrefix).
func HasTextPrefix(prefix string) MatchFunc {
	return func(u *models.Update) bool { return u.Message != nil && strings.HasPrefix(u.Message.Text, prefix) }
}

// IsCallbackQuery matches every callback_query update.
func IsCallbackQuery(u *models.Update) bool { return u.CallbackQuery != nil }

// HasCallbackPrefix matches a callback_query whose data starts with prefix
// (go-telegram/bot's HandlerTypeCallbackQueryData with MatchTypePrefix).
func HasCallbackPrefix(prefix string) MatchFunc {
	return func(u *models.Update) bool {
		return u.CallbackQuery != nil && strings.HasPrefix(u.CallbackQuery.Data, prefix)
	}
}

func stack() []byte { return debug.Stack() }

// IsPrivate reports whether m was sent in a private chat (one with a user;
// a message with no chat type, as some tests and old updates send, counts
// as private when its chat id is positive: users' ids are, groups' are not).
func IsPrivate(m *models.Message) bool {
	return m.Chat.Type == models.ChatTypePrivate || (m.Chat.Type == "" && m.Chat.ID > 0)
}

// ReplyTo is the reply text to message m: in m's chat, threaded under m in
// a group (ReplyTo = m's id), not in a private chat (IsPrivate).
func ReplyTo(m *models.Message, text string) Reply {
	o := Reply{ChatID: m.Chat.ID, Text: text}
	if !IsPrivate(m) {
		o.ReplyTo = m.ID
	}
	return o
}
