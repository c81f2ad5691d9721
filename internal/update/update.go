// Package update is the contract of codemojex's update handlers, after
// hibiken/asynq's Handler and ServeMux: a Handler gets one decoded Telegram
// update (a Request) and returns what came of it (an Outcome: the replies
// to queue, an infrastructure error meaning "retry", the hooks to run once
// the replies are queued, the notifier keys it used). Nothing travels in
// the context. A Mux routes a Request to the first Handler whose MatchFunc
// matches (else to its default) through its middleware, as
// go-telegram/bot's ProcessUpdate did. The package does no I/O: queueing
// the replies, running the hooks and settling the update is its caller's
// job (internal/handling's handleOne).
package update

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-telegram/bot/models"
)

// Request is one update to handle.
type Request struct {
	// Update is the decoded update (never nil for a Request a Mux serves).
	Update *models.Update
	// ID is the update's update_id; Epoch the inbox id-space epoch it was
	// recorded in (0 before any re-base; see intake). ID < 0: no update
	// (Key returns "").
	ID    int64
	Epoch int64
	// Lang is the sender's language (an internal/i18n language: the one
	// they chose with /language, else their language_code, else
	// i18n.Default); ChatLang a group's language set by its admins ("":
	// none, and always "" in a private chat). Set by internal/app's chat
	// middleware before any handler runs; "" where no middleware ran
	// (handlers read "" as i18n.Default).
	Lang     string
	ChatLang string
}

// Key returns the notifier idempotency key (notifier.Message.Key) of the
// outbound message what of r: "upd:<id>", or "upd:<epoch>.<id>" after a
// re-base (Epoch > 0, so an id Telegram hands out again in a new id space
// is not taken for the old one), plus ":<what>" when what is not "" (a
// reply's index, "board", "preview"); "" when r.ID < 0. A handler records
// the keys it uses with Outcome.Key, not with Key alone.
func (r *Request) Key(what string) string {
	if r.ID < 0 {
		return ""
	}
	k := "upd:" + strconv.FormatInt(r.ID, 10)
	if r.Epoch > 0 {
		k = "upd:" + strconv.FormatInt(r.Epoch, 10) + "." + strconv.FormatInt(r.ID, 10)
	}
	if what != "" {
		k += ":" + what
	}
	return k
}

// Reply is one reply to queue (notifier class Reply) once the handler
// returned. Its JSON form is stored in an update's journal (internal/app),
// so the tags must not change.
type Reply struct {
	ChatID  int64  `json:"c"`           // chat_id
	Text    string `json:"t"`           // the text, as sent
	ReplyTo int    `json:"r,omitempty"` // message_id it answers (reply_to), 0: none
}

// After is a hook run once an Outcome's replies are queued, in order (a
// board edit goes out after the reply of the same update). It records the
// notifier keys it mints on o (o.Key). An error is an infrastructure
// failure: the update is retried (its replies are queued once: keys).
type After func(ctx context.Context, o *Outcome) error

// Outcome is what came of handling one update.
type Outcome struct {
	// Replies are queued in order, keyed Request.Key("<index>").
	Replies []Reply
	// Err is an infrastructure failure (Valkey, the notifier): nothing is
	// queued and the update is handled again. A *PanicError (Recover)
	// instead uses one of its attempts and is dead-lettered after too many.
	Err error
	// After are run once the replies are queued (see After).
	After []After
	// Keys are the notifier keys the outbound messages of the update used
	// (in the order minted): forgotten when the update is marked handled.
	Keys []string
}

// Failed returns an Outcome of infrastructure error err.
func Failed(err error) Outcome { return Outcome{Err: err} }

// Reply appends a reply.
func (o *Outcome) Reply(r Reply) { o.Replies = append(o.Replies, r) }

// Fail records infrastructure error err; the first one recorded is kept.
func (o *Outcome) Fail(err error) {
	if o.Err == nil {
		o.Err = err
	}
}

// Then appends hook f (see After).
func (o *Outcome) Then(f After) { o.After = append(o.After, f) }

// Key returns r.Key(what) and records it in o.Keys (not when "").
func (o *Outcome) Key(r *Request, what string) string {
	k := r.Key(what)
	if k != "" {
		o.Keys = append(o.Keys, k)
	}
	return k
}

// PanicError is the Err of the Outcome of a handler that panicked
// (Recover). Its text, "panic: <value>", is the dead letter's reason.
type PanicError struct {
	Value any    // what the handler panicked with
	Stack []byte // the goroutine's stack at the recover
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Handler handles one update and returns its outcome.
type Handler interface {
	Handle(ctx context.Context, r *Request) Outcome
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, r *Request) Outcome

// Handle calls f(ctx, r).
func (f HandlerFunc) Handle(ctx context.Context, r *Request) Outcome { return f(ctx, r) }

// Middleware wraps a Handler (see Mux.Use for the order).
type Middleware func(Handler) Handler

// Recover is middleware that turns a panic of the handlers it wraps into
// Failed(&PanicError{...}) (no replies, no hooks, no keys: the update is
// retried and, after too many attempts, dead-lettered with the panic as
// its reason) after calling onPanic (nil: none) with it, so the process
// goes on.
func Recover(onPanic func(ctx context.Context, r *Request, p *PanicError)) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, r *Request) (out Outcome) {
			defer func() {
				if v := recover(); v != nil {
					p := &PanicError{Value: v, Stack: stack()}
					if onPanic != nil {
						onPanic(ctx, r, p)
					}
					out = Failed(p)
				}
			}()
			return next.Handle(ctx, r)
		})
	}
}
