package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/notifier"
)

// outMsg is one reply a handler produced: sent through the notifier (class
// Reply) once the handler returned.
type outMsg struct {
	Chat    int64  `json:"c"`
	Text    string `json:"t"`
	ReplyTo int    `json:"r,omitempty"`
}

// updateRun is the state of one update being handled, carried in the
// handler's context (go-telegram/bot handlers return nothing).
type updateRun struct {
	id       int64
	epoch    int64 // the inbox epoch of id (see updateKey)
	out      []outMsg
	err      error // infrastructure failure: the update is retried
	panicked bool
	// after run once the replies are queued (board edits: afterReplies).
	after []func(context.Context) error
}

type runKey struct{}

func runOf(ctx context.Context) *updateRun {
	r, _ := ctx.Value(runKey{}).(*updateRun)
	if r == nil {
		return &updateRun{id: -1} // outside the handler loop (never in practice)
	}
	return r
}

// fail records an infrastructure error: the update will be handled again.
func (r *updateRun) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// handleOne handles the inbox head u: skips it when already handled, runs
// it through the library's ProcessUpdate (synchronously), enqueues its
// replies, then finishes it (pop + handled mark, fenced by the lease). An
// error means nothing was finished: u is retried.
func (a *App) handleOne(ctx context.Context, u intake.Update) error {
	if u.Rebase > 0 {
		// Every update after the marker is in the server's new update_id
		// space: the handled mark starts afresh.
		return a.inbox.StartEpoch(ctx, a.lease.Token(), u.Rebase)
	}
	if u.ID < 0 {
		a.log.Error("inbox: dropping malformed entry", slog.Int("bytes", len(u.JSON)))
		return a.inbox.Drop(ctx, string(u.JSON))
	}
	handled, epoch, err := a.inbox.Mark(ctx)
	if err != nil {
		return err
	}
	if u.ID <= handled {
		a.m.duplicates.Inc()
		a.log.Info("update already handled; skipped", slog.Int64("update_id", u.ID))
		return a.inbox.Finish(ctx, a.lease.Token(), u.ID)
	}
	var upd models.Update
	if err := json.Unmarshal(u.JSON, &upd); err != nil {
		a.log.Error("update does not decode; skipped", slog.Int64("update_id", u.ID), slog.Any("err", err))
		a.m.handled.WithLabelValues("malformed").Inc()
		return a.inbox.Finish(ctx, a.lease.Token(), u.ID)
	}
	run := &updateRun{id: u.ID, epoch: epoch}
	a.bot.ProcessUpdate(context.WithValue(ctx, runKey{}, run), &upd)
	if run.err != nil {
		a.m.handled.WithLabelValues("retry").Inc()
		return fmt.Errorf("update %d: %w", u.ID, run.err)
	}
	for i, o := range run.out {
		// Keyed by update and reply index: handled again after a crash
		// between here and Finish, the update does not enqueue a reply
		// twice, even one already sent and acked.
		_, err := a.notifier.Notify(ctx, o.Chat, notifier.Message{Text: o.Text, Class: notifier.Reply, ReplyTo: o.ReplyTo,
			Key: updateKey(epoch, u.ID, strconv.Itoa(i))})
		if errors.Is(err, notifier.ErrInvalid) {
			a.log.Error("reply rejected by the notifier; dropped", slog.Int64("update_id", u.ID), slog.Any("err", err))
			continue
		}
		if err != nil {
			a.m.handled.WithLabelValues("retry").Inc()
			return fmt.Errorf("update %d: reply: %w", u.ID, err)
		}
	}
	for _, f := range run.after {
		if err := f(context.WithValue(ctx, runKey{}, run)); err != nil {
			a.m.handled.WithLabelValues("retry").Inc()
			return fmt.Errorf("update %d: %w", u.ID, err)
		}
	}
	if err := a.inbox.Finish(ctx, a.lease.Token(), u.ID); err != nil {
		return err
	}
	switch {
	case run.panicked:
		a.m.handled.WithLabelValues("panic").Inc()
	default:
		a.m.handled.WithLabelValues("ok").Inc()
	}
	return nil
}

// updateKey is the notifier idempotency key of an outbound message of
// update id of inbox epoch epoch: "upd:<id>" ("upd:<epoch>.<id>" after a
// re-base, epoch > 0, so an id the server hands out again in a new id
// space is not taken for the old one) plus ":<what>" when what is not ""
// (the reply's index, "progress"); "" (no key) outside the handler loop
// (id < 0).
func updateKey(epoch, id int64, what string) string {
	if id < 0 {
		return ""
	}
	k := "upd:" + strconv.FormatInt(id, 10)
	if epoch > 0 {
		k = "upd:" + strconv.FormatInt(epoch, 10) + "." + strconv.FormatInt(id, 10)
	}
	if what != "" {
		k += ":" + what
	}
	return k
}

// chatOf returns the chat an update comes from (0 when none).
func chatOf(u *models.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		return u.CallbackQuery.Message.Message.Chat.ID
	case u.MyChatMember != nil:
		return u.MyChatMember.Chat.ID
	case u.ChatMember != nil:
		return u.ChatMember.Chat.ID
	}
	return 0
}

// recoverMiddleware turns a handler panic into a log line and a metric: the
// update is finished (a poison update must not block the inbox) and the
// process goes on.
func (a *App) recoverMiddleware(next bot.HandlerFunc) bot.HandlerFunc {
	return func(ctx context.Context, b *bot.Bot, u *models.Update) {
		defer func() {
			if p := recover(); p != nil {
				run := runOf(ctx)
				run.panicked = true
				run.out = nil
				run.after = nil
				a.m.panics.Inc()
				a.log.Error("handler panicked; update skipped", slog.Int64("update_id", u.ID),
					slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
			}
		}()
		next(ctx, b, u)
	}
}

// chatMiddleware records the chat as known (the broadcast audience) and
// marks it active in the notifier (a chat that blocked the bot and talks to
// it again gets notifications again) before any handler runs.
func (a *App) chatMiddleware(next bot.HandlerFunc) bot.HandlerFunc {
	return func(ctx context.Context, b *bot.Bot, u *models.Update) {
		if chat := chatOf(u); chat != 0 {
			if err := a.audience.AddChat(ctx, chat); err != nil {
				runOf(ctx).fail(err)
				return
			}
			if err := a.notifier.Chats().MarkActive(ctx, chat); err != nil {
				runOf(ctx).fail(err)
				return
			}
		}
		next(ctx, b, u)
	}
}

// newBot builds the go-telegram/bot client used for ProcessUpdate, getMe
// and setMyCommands; it never polls (Start is not called) and never sends
// chat messages (those go through the notifier).
func (a *App) newBot() (*bot.Bot, error) {
	opts := []bot.Option{
		bot.WithSkipGetMe(),
		bot.WithServerURL(a.cfg.APIURL),
		bot.WithNotAsyncHandlers(),
		bot.WithMiddlewares(a.recoverMiddleware, a.chatMiddleware),
		bot.WithDefaultHandler(a.onOther),
		bot.WithErrorsHandler(func(err error) {
			a.log.Error("telegram client error", slog.Any("err", a.redactor.Error(err)))
		}),
		bot.WithDebugHandler(func(format string, args ...any) {
			a.log.Debug(a.redactor.String(fmt.Sprintf(format, args...)))
		}),
	}
	b, err := bot.New(a.cfg.Token, opts...)
	if err != nil {
		return nil, fmt.Errorf("app: telegram client: %w", err)
	}
	for _, h := range a.opt.handlers {
		b.RegisterHandlerMatchFunc(h.match, h.h)
	}
	a.registerHandlers(b)
	return b, nil
}
