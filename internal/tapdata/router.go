package tapdata

import (
	"context"
	"errors"
	"log/slog"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/update"
)

// Toasts (user-visible texts) of the Router, and ToastRetry, which every
// kind's Handler answers when its work failed (a kind has its own others).
const (
	ToastInvalidButton = "This button is not valid. Send /play for a new game."
	ToastOldButton     = "This button is from an older version. Send /play for a new game."
	ToastRetry         = "⚠️ Something went wrong, tap again"
)

// Handler handles one verified tap of its kind and returns the toast to
// answer it with ("" for none). It may queue messages (board edits, keyed
// on r) to out like any handler, or fail it there; it must not answer the
// query itself.
type Handler func(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d Data) string

// AnswerFunc answers callback query id with toast ("" for none): the
// caller's answerCallbackQuery (internal/app: bounded retries, logged and
// counted; never through the lanes).
type AnswerFunc func(ctx context.Context, id, toast string)

// Router routes callback_query updates by kind: it verifies the data
// (Codec.Decode), runs the Handler of its kind and answers the query with
// the handler's toast, or with a toast saying why the tap was refused
// (ToastOldButton for another version, ToastInvalidButton for anything
// else that does not verify, a tap with no message, an unknown kind).
// Build it with NewRouter and Handle before it serves; it is not changed
// after, so Handle may then be called concurrently.
type Router struct {
	codec    Codec
	kinds    map[byte]Handler
	answer   AnswerFunc
	refused  func()
	localize func(r *update.Request, toast string) string
	log      *slog.Logger
}

// NewRouter returns a Router verifying with codec and answering with
// answer; refused (may be nil) is called once per tap whose data does not
// verify (internal/app counts them), after it is logged to log at Info.
func NewRouter(codec Codec, answer AnswerFunc, refused func(), log *slog.Logger) *Router {
	return &Router{codec: codec, kinds: map[byte]Handler{}, answer: answer, refused: refused, log: log}
}

// Localize makes f say every toast in the tapper's language before it is
// answered (f returns it as it is when it has no translation: the
// Router's own toasts and ToastRetry are English constants). Call it
// before the Router serves.
func (rt *Router) Localize(f func(r *update.Request, toast string) string) { rt.localize = f }

// Route registers h for the taps of kind (the last registration wins).
func (rt *Router) Route(kind byte, h Handler) { rt.kinds[kind] = h }

// Handle routes one callback_query update (update.IsCallbackQuery) and
// answers it; its Outcome is the handler's.
func (rt *Router) Handle(ctx context.Context, r *update.Request) (out update.Outcome) {
	q := r.Update.CallbackQuery
	var chat int64
	if q.Message.Message != nil {
		chat = q.Message.Message.Chat.ID
	}
	d, err := rt.codec.Decode(q.Data, chat)
	toast := ""
	switch {
	case errors.Is(err, ErrVersion):
		toast = ToastOldButton
	case err != nil || chat == 0:
		toast = ToastInvalidButton
	default:
		h := rt.kinds[d.Kind]
		if h == nil {
			toast = ToastInvalidButton
			break
		}
		toast = h(ctx, r, &out, q, d)
	}
	if err != nil {
		if rt.refused != nil {
			rt.refused()
		}
		rt.log.Info("callback refused", slog.Int64("chat", chat), slog.Int64("user", q.From.ID), slog.String("why", err.Error()))
	}
	if rt.localize != nil && toast != "" {
		toast = rt.localize(r, toast)
	}
	rt.answer(ctx, q.ID, toast)
	return out
}
