package update_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/update"
)

func TestParseCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want update.Command
		ok   bool
	}{
		{"/start", update.Command{Name: "start"}, true},
		{"/start@codemojex_test_bot", update.Command{Name: "start"}, true},
		{"/START@Codemojex_Test_Bot", update.Command{Name: "start"}, true},
		{"/start@other_bot", update.Command{}, false},
		{"/guess 🍎 🍌 🍇 🍒", update.Command{Name: "guess", Args: "🍎 🍌 🍇 🍒"}, true},
		{"/guess@codemojex_test_bot\n🍎🍌🍇🍒 ", update.Command{Name: "guess", Args: "🍎🍌🍇🍒"}, true},
		{"/weight  42   5", update.Command{Name: "weight", Args: "42   5"}, true},
		{"hello /start", update.Command{}, false},
		{"/", update.Command{}, false},
		{"/🍎", update.Command{}, false},
		{"🍎🍌🍇🍒", update.Command{}, false},
	} {
		got, ok := update.ParseCommand(&models.Message{Text: tc.text}, "codemojex_test_bot")
		require.Equal(t, tc.ok, ok, tc.text)
		require.Equal(t, tc.want, got, tc.text)
	}
}

// named is a handler that answers with one reply naming it.
func named(name string) update.HandlerFunc {
	return func(context.Context, *update.Request) update.Outcome {
		return update.Outcome{Replies: []update.Reply{{Text: name}}}
	}
}

func msg(text string) *models.Update {
	return &models.Update{ID: 1, Message: &models.Message{Text: text, Chat: models.Chat{ID: 7}}}
}

// TestMuxRoutes: the first matching route in the order added takes an
// update, else the default; commands match with or without this bot's
// @username (any case), never with another bot's, never in a caption or an
// edited message; text and callback data prefixes; match funcs.
func TestMuxRoutes(t *testing.T) {
	t.Parallel()
	username := "codemojex_test_bot"
	m := update.NewMux()
	m.RouteFunc(func(u *models.Update) bool { return u.Message != nil && u.Message.Text == "/start first" }, named("func"))
	m.RouteFunc(update.IsCommand("start", func() string { return username }), named("start"))
	m.RouteFunc(update.IsCommand("guess", func() string { return username }), named("guess"))
	m.RouteFunc(update.HasTextPrefix("!echo"), named("echo"))
	m.RouteFunc(update.HasCallbackPrefix("g:"), named("game tap"))
	m.RouteFunc(update.IsCallbackQuery, named("any tap"))
	m.Default(named("other"))
	for _, tc := range []struct {
		name string
		u    *models.Update
		want string
	}{
		{"command", msg("/start"), "start"},
		{"command with args", msg("/guess 🍎🍌"), "guess"},
		{"command for this bot", msg("/start@codemojex_test_bot"), "start"},
		{"command for this bot, other case", msg("/START@CodeMojex_Test_Bot hi"), "start"},
		{"command for another bot", msg("/start@other_bot"), "other"},
		{"command mid-text", msg("hi /start"), "other"},
		{"unknown command", msg("/nope"), "other"},
		{"earlier route wins", msg("/start first"), "func"},
		{"command in a caption", &models.Update{Message: &models.Message{Caption: "/start"}}, "other"},
		{"edited command", &models.Update{EditedMessage: &models.Message{Text: "/start"}}, "other"},
		{"text prefix", msg("!echo hi"), "echo"},
		{"callback prefix", &models.Update{CallbackQuery: &models.CallbackQuery{Data: "g:1"}}, "game tap"},
		{"other callback", &models.Update{CallbackQuery: &models.CallbackQuery{Data: "b:1"}}, "any tap"},
		{"plain text", msg("🍎🍌🍇🍒"), "other"},
		{"no message", &models.Update{MyChatMember: &models.ChatMemberUpdated{}}, "other"},
	} {
		out := m.Handle(context.Background(), &update.Request{Update: tc.u, ID: 1})
		require.Equal(t, []update.Reply{{Text: tc.want}}, out.Replies, tc.name)
	}
}

// TestMuxWithoutDefault: an update no route matches gets an empty Outcome.
func TestMuxWithoutDefault(t *testing.T) {
	t.Parallel()
	m := update.NewMux()
	m.RouteFunc(update.IsCallbackQuery, named("tap"))
	require.Equal(t, update.Outcome{}, m.Handle(context.Background(), &update.Request{Update: msg("hi")}))
}

// TestMuxMiddlewareOrder: the first middleware added is the outermost; it
// wraps the default handler too, and sees the handler's Outcome.
func TestMuxMiddlewareOrder(t *testing.T) {
	t.Parallel()
	var trace []string
	mw := func(name string) update.Middleware {
		return func(next update.Handler) update.Handler {
			return update.HandlerFunc(func(ctx context.Context, r *update.Request) update.Outcome {
				trace = append(trace, name+" in")
				out := next.Handle(ctx, r)
				trace = append(trace, name+" out")
				out.Replies = append(out.Replies, update.Reply{Text: name})
				return out
			})
		}
	}
	m := update.NewMux()
	m.Use(mw("a"), mw("b"))
	m.RouteFunc(update.HasTextPrefix("x"), func(context.Context, *update.Request) update.Outcome {
		trace = append(trace, "handler")
		return update.Outcome{Replies: []update.Reply{{Text: "handler"}}}
	})
	m.Default(named("default"))
	for _, tc := range []struct {
		text  string
		trace []string
		out   []string
	}{
		{"x", []string{"a in", "b in", "handler", "b out", "a out"}, []string{"handler", "b", "a"}},
		{"y", []string{"a in", "b in", "b out", "a out"}, []string{"default", "b", "a"}},
	} {
		trace = nil
		out := m.Handle(context.Background(), &update.Request{Update: msg(tc.text)})
		require.Equal(t, tc.trace, trace, tc.text)
		var texts []string
		for _, r := range out.Replies {
			texts = append(texts, r.Text)
		}
		require.Equal(t, tc.out, texts, tc.text)
	}
}

// TestMiddlewareStopsTheChain: a middleware that fails returns its
// Outcome; the handler does not run (the chat-recording middleware).
func TestMiddlewareStopsTheChain(t *testing.T) {
	t.Parallel()
	ran := false
	errStore := errors.New("store down")
	m := update.NewMux()
	m.Use(func(update.Handler) update.Handler {
		return update.HandlerFunc(func(context.Context, *update.Request) update.Outcome { return update.Failed(errStore) })
	})
	m.Default(update.HandlerFunc(func(context.Context, *update.Request) update.Outcome { ran = true; return update.Outcome{} }))
	out := m.Handle(context.Background(), &update.Request{Update: msg("hi")})
	require.ErrorIs(t, out.Err, errStore)
	require.False(t, ran)
}

// TestRecover: a panic in a handler, or in a middleware inside Recover,
// becomes Failed(*PanicError) with no replies, hooks or keys, reported to
// onPanic once; a handler that does not panic passes unchanged.
func TestRecover(t *testing.T) {
	t.Parallel()
	boom := func(ctx context.Context, r *update.Request) update.Outcome {
		var out update.Outcome
		out.Reply(update.Reply{ChatID: 7, Text: "lost"})
		out.Key(r, "board")
		out.Then(func(context.Context, *update.Outcome) error { return nil })
		panic("kaboom")
	}
	panicky := func(update.Handler) update.Handler {
		return update.HandlerFunc(func(context.Context, *update.Request) update.Outcome { panic(errors.New("in middleware")) })
	}
	for _, tc := range []struct {
		name  string
		mw    []update.Middleware
		h     update.HandlerFunc
		value any
		text  string
	}{
		{"handler panics", nil, boom, "kaboom", "panic: kaboom"},
		{"middleware panics", []update.Middleware{panicky}, named("never"), errors.New("in middleware"), "panic: in middleware"},
		{"no panic", nil, named("fine"), nil, ""},
	} {
		var seen []*update.PanicError
		m := update.NewMux()
		m.Use(update.Recover(func(_ context.Context, r *update.Request, p *update.PanicError) {
			require.Equal(t, int64(42), r.ID, tc.name)
			seen = append(seen, p)
		}))
		m.Use(tc.mw...)
		m.Default(tc.h)
		out := m.Handle(context.Background(), &update.Request{Update: msg("hi"), ID: 42})
		if tc.value == nil {
			require.Empty(t, seen, tc.name)
			require.Equal(t, []update.Reply{{Text: "fine"}}, out.Replies, tc.name)
			continue
		}
		require.Len(t, seen, 1, tc.name)
		require.Equal(t, tc.value, seen[0].Value, tc.name)
		require.NotEmpty(t, seen[0].Stack, tc.name)
		pe, ok := errors.AsType[*update.PanicError](out.Err)
		require.True(t, ok, tc.name)
		require.Same(t, seen[0], pe, tc.name)
		require.EqualError(t, out.Err, tc.text, tc.name)
		require.Equal(t, update.Outcome{Err: out.Err}, out, tc.name)
	}
	// Without onPanic the panic is still recovered.
	m := update.NewMux()
	m.Use(update.Recover(nil))
	m.Default(update.HandlerFunc(boom))
	require.EqualError(t, m.Handle(context.Background(), &update.Request{Update: msg("hi")}).Err, "panic: kaboom")
}

// TestKeys: Request.Key gives the notifier keys internal/app used before
// the package existed ("upd:<id>[:what]", "upd:<epoch>.<id>[:what]" after
// a re-base, "" without an update); Outcome.Key records them in order.
func TestKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id, epoch int64
		what      string
		want      string
	}{
		{42, 0, "0", "upd:42:0"},
		{42, 0, "", "upd:42"},
		{42, 3, "board", "upd:3.42:board"},
		{42, 3, "", "upd:3.42"},
		{0, 0, "preview", "upd:0:preview"},
		{-1, 0, "0", ""},
		{-1, 5, "", ""},
	} {
		r := &update.Request{ID: tc.id, Epoch: tc.epoch}
		require.Equal(t, tc.want, r.Key(tc.what), "%+v", tc)
		var out update.Outcome
		require.Equal(t, tc.want, out.Key(r, tc.what))
		if tc.want == "" {
			require.Empty(t, out.Keys)
		} else {
			require.Equal(t, []string{tc.want}, out.Keys)
		}
	}
	r := &update.Request{ID: 9}
	var out update.Outcome
	out.Key(r, "preview")
	out.Key(r, "0")
	out.Key(r, "board")
	require.Equal(t, []string{"upd:9:preview", "upd:9:0", "upd:9:board"}, out.Keys)
}

// TestOutcomeFailKeepsTheFirst: Fail keeps the first error recorded.
func TestOutcomeFailKeepsTheFirst(t *testing.T) {
	t.Parallel()
	first, second := errors.New("first"), errors.New("second")
	var out update.Outcome
	out.Fail(first)
	out.Fail(second)
	require.Same(t, first, out.Err)
}

// A reply is threaded under its message in a group, not in a private chat
// (a chat with no type counts as private when its id is positive).
func TestReplyToThreadsInGroupsOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		chat    models.Chat
		private bool
	}{
		{"private", models.Chat{ID: 42, Type: models.ChatTypePrivate}, true},
		{"no type, user id", models.Chat{ID: 42}, true},
		{"group", models.Chat{ID: -100123, Type: models.ChatTypeSupergroup}, false},
		{"no type, group id", models.Chat{ID: -42}, false},
	} {
		m := &models.Message{ID: 9, Chat: tc.chat}
		require.Equal(t, tc.private, update.IsPrivate(m), tc.name)
		want := update.Reply{ChatID: tc.chat.ID, Text: "hi"}
		if !tc.private {
			want.ReplyTo = 9
		}
		require.Equal(t, want, update.ReplyTo(m, "hi"), tc.name)
	}
}

// TestMuxIgnoresWhatNoHandlerActsOn: an update a route matches is acted on;
// one no route matches is what the default handler ignores (Ignoring),
// acted on when the default has no Ignoring, and ignored by its kind when
// there is no default; Handle serves an ignored update nothing, not even
// the middleware.
func TestMuxIgnoresWhatNoHandlerActsOn(t *testing.T) {
	t.Parallel()
	username := func() string { return "codemojex_test_bot" }
	guessesOnly := func(u *models.Update) update.Ignored {
		if u.Message != nil && u.Message.Text == "🍎🍌🍇🍒" {
			return update.Acts
		}
		return update.KindIgnored(u)
	}
	edited := &models.Update{EditedMessage: &models.Message{Text: "/start"}}
	channel := &models.Update{ChannelPost: &models.Message{Text: "/start"}}
	editedChannel := &models.Update{EditedChannelPost: &models.Message{Text: "hi"}}
	joined := &models.Update{Message: &models.Message{NewChatMembers: []models.User{{ID: 5}}}}
	reaction := &models.Update{MessageReaction: &models.MessageReactionUpdated{}}
	for _, tc := range []struct {
		name     string
		def      bool                                // a default handler
		ignoring func(*models.Update) update.Ignored // its Ignoring (nil: none)
		u        *models.Update
		want     update.Ignored
	}{
		{"routed command", true, guessesOnly, msg("/start"), update.Acts},
		{"routed tap", false, nil, &models.Update{CallbackQuery: &models.CallbackQuery{Data: "x"}}, update.Acts},
		{"default acts", true, guessesOnly, msg("🍎🍌🍇🍒"), update.Acts},
		{"default ignores chatter", true, guessesOnly, msg("hi all"), update.Chatter},
		{"default ignores another bot's command", true, guessesOnly, msg("/start@other_bot"), update.Chatter},
		{"default ignores a blank text", true, guessesOnly, msg("  "), update.NoText},
		{"default ignores a service message", true, guessesOnly, joined, update.NoText},
		{"default ignores an edit", true, guessesOnly, edited, update.Edited},
		{"default ignores a channel post", true, guessesOnly, channel, update.ChannelPost},
		{"default ignores a channel post's edit", true, guessesOnly, editedChannel, update.ChannelPost},
		{"default ignores a reaction", true, guessesOnly, reaction, update.Other},
		{"default without Ignoring acts on all", true, nil, reaction, update.Acts},
		{"no default: chatter", false, nil, msg("hi all"), update.Chatter},
		{"no default: edit", false, nil, edited, update.Edited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var served []string
			m := update.NewMux()
			m.Use(func(next update.Handler) update.Handler {
				return update.HandlerFunc(func(ctx context.Context, r *update.Request) update.Outcome {
					served = append(served, "middleware")
					return next.Handle(ctx, r)
				})
			})
			m.RouteFunc(update.IsCommand("start", username), named("start"))
			m.RouteFunc(update.IsCallbackQuery, named("tap"))
			if tc.def {
				m.Default(named("other"))
			}
			if tc.ignoring != nil {
				m.Ignoring(tc.ignoring)
			}
			require.Equal(t, tc.want, m.Ignores(tc.u))
			out := m.Handle(context.Background(), &update.Request{Update: tc.u, ID: 1})
			if tc.want != update.Acts {
				require.Equal(t, update.Outcome{}, out, "an ignored update gets nothing")
				require.Empty(t, served, "not even the middleware")
				return
			}
			require.Equal(t, []string{"middleware"}, served)
		})
	}
	require.ElementsMatch(t, []update.Ignored{update.Chatter, update.NoText, update.Edited, update.ChannelPost, update.Other},
		update.IgnoredReasons())
}
