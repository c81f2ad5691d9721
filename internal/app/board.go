package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// The game board: one message per game, sent by /play, with an inline
// keyboard (the palette, ⌫, ✅, 🏳️) and kept up to date in place by
// notifier.EditLatest after every tap, typed guess and give-up (edits of
// one board coalesce in the lanes: a burst of taps costs one edit per pace
// slot). The board's identity is the job id of its sendMessage (boardRef):
// the worker finds the message through it, also when the board had to be
// sent afresh.

// Board actions (the arg of a tapdata.KindGame button).
const (
	actBack   = "bk"
	actSubmit = "ok"
	actGiveUp = "gu"
	actPick   = "p" // + palette index
)

// Toasts of board taps.
const (
	toastGameOver = "This game is over, /play for a new one"
	toastFull     = "4 emojis already: ✅ or ⌫"
	toastEmpty    = "Nothing to remove"
	toastGaveUp   = "🏳️ Given up"
	toastRetry    = "⚠️ Something went wrong, tap again"
)

// compTTL bounds how long a composition outlives its last tap.
const compTTL = gamestore.DefaultGameTTL

// boardRef is the chat's current board: game id and the job id of the
// board's sendMessage.
type boardRef struct {
	Game string
	Job  lanes.JobID
}

func (a *App) loadBoard(ctx context.Context, chat int64) (boardRef, error) {
	m, err := a.c.Do(ctx, a.c.B().Hgetall().Key(a.keys.board(chat)).Build()).AsStrMap()
	if err != nil {
		return boardRef{}, fmt.Errorf("app: board of chat %d: %w", chat, err)
	}
	return boardRef{Game: m["g"], Job: lanes.JobID(m["j"])}, nil
}

func (a *App) saveBoard(ctx context.Context, chat int64, b boardRef) error {
	k := a.keys.board(chat)
	for _, r := range a.c.DoMulti(ctx,
		a.c.B().Hset().Key(k).FieldValue().FieldValue("g", b.Game).FieldValue("j", string(b.Job)).Build(),
		a.c.B().Pexpire().Key(k).Milliseconds(compTTL.Milliseconds()).Build()) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("app: board of chat %d: %w", chat, err)
		}
	}
	return nil
}

// compositions reads every player's composition of game gameID in chat,
// ordered by user id (a stable order on the board).
func (a *App) compositions(ctx context.Context, chat int64, st game.State) ([]composition, error) {
	m, err := a.c.Do(ctx, a.c.B().Hgetall().Key(a.keys.comp(chat, st.ID)).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("app: compositions of chat %d: %w", chat, err)
	}
	return decodeComps(m, st), nil
}

// composition is one player's stored composition.
type composition struct {
	User int64
	game.Composition
}

func decodeComps(m map[string]string, st game.State) []composition {
	out := make([]composition, 0, len(m))
	for k, v := range m {
		uid, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			continue
		}
		var raw struct {
			N string `json:"n"`
			S []int  `json:"s"`
		}
		if json.Unmarshal([]byte(v), &raw) != nil {
			continue
		}
		c := composition{User: uid, Composition: game.Composition{Player: raw.N}}
		for _, i := range raw.S {
			if i >= 0 && i < len(st.Config.Palette) {
				c.Symbols = append(c.Symbols, st.Config.Palette[i])
			}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y composition) int { return cmp.Compare(x.User, y.User) })
	return out
}

// boardMessage renders the board of st with comps in chat: text and
// keyboard (none once the game is over).
func (a *App) boardMessage(chat int64, st game.State, comps []composition, group bool) (notifier.Message, error) {
	gc := make([]game.Composition, len(comps))
	ready := 0
	for i, c := range comps {
		gc[i] = c.Composition
		if len(c.Symbols) == st.Config.CodeLength {
			ready++
		}
	}
	msg := notifier.Message{Text: st.BoardText(gc, group), Class: notifier.Reply, Editable: true}
	if st.Over() {
		return msg, nil
	}
	kb, err := a.keyboard(chat, st, ready > 0)
	if err != nil {
		return notifier.Message{}, err
	}
	b, err := json.Marshal(kb)
	if err != nil {
		return notifier.Message{}, fmt.Errorf("app: keyboard: %w", err)
	}
	msg.Markup = string(b)
	return msg, nil
}

// keyboard is the board's inline keyboard: the palette in rows of three,
// then ⌫, ✅ (shown as ☑️ until a composition has every symbol: Telegram
// has no disabled buttons, so a tap on it only answers a toast) and 🏳️.
func (a *App) keyboard(chat int64, st game.State, canSubmit bool) (models.InlineKeyboardMarkup, error) {
	btn := func(text, arg string) (models.InlineKeyboardButton, error) {
		d, err := a.codec.Encode(tapdata.KindGame, st.ID, arg, chat)
		return models.InlineKeyboardButton{Text: text, CallbackData: d}, err
	}
	var rows [][]models.InlineKeyboardButton
	var row []models.InlineKeyboardButton
	for i, sym := range st.Config.Palette {
		b, err := btn(sym, actPick+strconv.Itoa(i))
		if err != nil {
			return models.InlineKeyboardMarkup{}, err
		}
		row = append(row, b)
		if len(row) == 3 {
			rows, row = append(rows, row), nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	submit := "☑️"
	if canSubmit {
		submit = "✅"
	}
	var last []models.InlineKeyboardButton
	for _, c := range [][2]string{{"⌫", actBack}, {submit, actSubmit}, {"🏳️", actGiveUp}} {
		b, err := btn(c[0], c[1])
		if err != nil {
			return models.InlineKeyboardMarkup{}, err
		}
		last = append(last, b)
	}
	return models.InlineKeyboardMarkup{InlineKeyboard: append(rows, last)}, nil
}

// sendBoard queues a new board for st in chat (idempotent per update),
// threaded under message replyTo (0: none), and makes it the chat's board.
func (a *App) sendBoard(ctx context.Context, r *update.Request, out *update.Outcome, chat int64, st game.State, group bool, replyTo int) error {
	comps, err := a.compositions(ctx, chat, st)
	if err != nil {
		return err
	}
	msg, err := a.boardMessage(chat, st, comps, group)
	if err != nil {
		return err
	}
	msg.Key = out.Key(r, "board")
	msg.ReplyTo = replyTo
	ids, err := a.notifier.Notify(ctx, chat, msg)
	if err != nil {
		return fmt.Errorf("app: board of chat %d: %w", chat, err)
	}
	return a.saveBoard(ctx, chat, boardRef{Game: st.ID, Job: ids[0]})
}

// refreshBoard queues an edit of chat's board to show st (coalesced with
// any edit of it still queued). A board of another game (or none: a game
// started before boards existed) is left alone, except that with ensure
// (the /play message the board answers) a new board is sent for a game in
// progress (threaded under ensure in a group, like any reply). Once the
// game is over its compositions are dropped. The keys it mints go to out
// (it runs as an update.After hook, or in a callback handler).
func (a *App) refreshBoard(ctx context.Context, r *update.Request, out *update.Outcome, chat int64, st game.State, group bool, ensure *models.Message) error {
	ref, err := a.loadBoard(ctx, chat)
	if err != nil {
		return err
	}
	if ref.Game != st.ID || ref.Job == "" {
		if ensure != nil && !st.Over() {
			replyTo := 0
			if group {
				replyTo = ensure.ID
			}
			return a.sendBoard(ctx, r, out, chat, st, group, replyTo)
		}
		return nil
	}
	comps, err := a.compositions(ctx, chat, st)
	if err != nil {
		return err
	}
	msg, err := a.boardMessage(chat, st, comps, group)
	if err != nil {
		return err
	}
	if _, _, err := a.notifier.EditLatest(ctx, chat, ref.Job, msg); err != nil {
		return fmt.Errorf("app: board of chat %d: %w", chat, err)
	}
	if st.Over() {
		if err := a.c.Do(ctx, a.c.B().Del().Key(a.keys.comp(chat, st.ID)).Build()).Error(); err != nil {
			return fmt.Errorf("app: compositions of chat %d: %w", chat, err)
		}
	}
	return nil
}

// onBoardTap handles a tap on a game board (tapdata.KindGame) and returns its
// toast.
func (a *App) onBoardTap(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
	m := q.Message.Message
	chat, group := m.Chat.ID, !isPrivate(m)
	cur, err := a.games.Current(ctx, chat)
	switch {
	case errors.Is(err, gamestore.ErrNoGame), errors.Is(err, game.ErrInvalidState):
		return toastGameOver
	case err != nil:
		a.log.Error("board tap: game not read", slog.Int64("chat", chat), slog.Any("err", err))
		return toastRetry
	}
	if cur.ID != d.Scope {
		return toastGameOver
	}
	name := displayName(&q.From)
	fail := func(err error) string {
		a.log.Error("board tap failed", slog.Int64("chat", chat), slog.String("action", d.Arg), slog.Any("err", err))
		return toastRetry
	}
	toast := ""
	next := cur
	switch {
	case strings.HasPrefix(d.Arg, actPick) || d.Arg == actBack:
		op, idx := "back", ""
		if d.Arg != actBack {
			i, err := strconv.Atoi(strings.TrimPrefix(d.Arg, actPick))
			if err != nil || i < 0 || i >= len(cur.Config.Palette) {
				return toastInvalidButton
			}
			op, idx = "add", strconv.Itoa(i)
		}
		code, err := a.compose(ctx, chat, cur, q.From.ID, r.Epoch, r.ID, op, idx, name)
		if err != nil {
			return fail(err)
		}
		switch code {
		case -1:
			return toastFull
		case -2:
			return toastEmpty
		}
	case d.Arg == actSubmit:
		var err error
		if next, toast, err = a.submitTap(ctx, r, chat, cur, q.From, name); err != nil {
			return fail(err)
		}
	case d.Arg == actGiveUp:
		st, err := a.games.GiveUp(ctx, chat)
		if errors.Is(err, gamestore.ErrNoGame) {
			return toastGameOver
		}
		if err != nil {
			return fail(err)
		}
		next, toast = st, toastGaveUp
	default:
		return toastInvalidButton
	}
	if err := a.refreshBoard(ctx, r, out, chat, next, group, nil); err != nil {
		return fail(err)
	}
	return toast
}

// compose runs compose.lua for one tap and returns its code.
func (a *App) compose(ctx context.Context, chat int64, st game.State, user, epoch, updateID int64, op, idx, name string) (int64, error) {
	args := []string{strconv.FormatInt(user, 10), strconv.FormatInt(updateID, 10), op, idx, name,
		strconv.Itoa(st.Config.CodeLength), strconv.FormatInt(compTTL.Milliseconds(), 10), strconv.FormatInt(epoch, 10)}
	v, err := a.composeScript.Exec(ctx, a.c, []string{a.keys.comp(chat, st.ID)}, args).ToArray()
	if err != nil || len(v) == 0 {
		return 0, fmt.Errorf("app: compose in chat %d: %w", chat, errors.Join(err, errors.New("empty reply")))
	}
	return v[0].AsInt64()
}

// submitTap plays the tapping player's composition as their guess, like a
// typed one (same scoring, same leaderboard), once per update: the move is
// journalled with the game's fingerprint first, so an update handled again
// after a crash does not play it twice. It returns the game after the move
// and the toast.
func (a *App) submitTap(ctx context.Context, r *update.Request, chat int64, cur game.State, from models.User, name string) (game.State, string, error) {
	comps, err := a.compositions(ctx, chat, cur)
	if err != nil {
		return cur, "", err
	}
	var mine game.Composition
	for _, c := range comps {
		if c.User == from.ID {
			mine = c.Composition
		}
	}
	n := cur.Config.CodeLength
	if len(mine.Symbols) != n {
		return cur, fmt.Sprintf("Choose %d emojis first (%d/%d)", n, len(mine.Symbols), n), nil
	}
	pre := fingerprint(cur, true)
	j, err := a.loadJournal(ctx, r.ID)
	if err != nil {
		return cur, "", err
	}
	if j.Exists && j.Pre != pre {
		return cur, "", nil // applied before a restart
	}
	if err := a.planMove(ctx, r.ID, pre, nil); err != nil {
		return cur, "", err
	}
	res, next, err := a.games.Guess(ctx, chat, from.ID, name, strings.Join(mine.Symbols, ""))
	if errors.Is(err, gamestore.ErrNoGame) {
		return cur, toastGameOver, nil
	}
	if err != nil {
		return cur, "", err
	}
	if !next.Over() {
		if err := a.c.Do(ctx, a.c.B().Hdel().Key(a.keys.comp(chat, cur.ID)).Field(strconv.FormatInt(from.ID, 10)).Build()).Error(); err != nil {
			return next, "", fmt.Errorf("app: compositions of chat %d: %w", chat, err)
		}
	}
	toast := res.Pegs(n)
	switch res.Status {
	case game.Won:
		toast = fmt.Sprintf("🎉 Cracked! +%d points", res.Points)
	case game.Lost:
		toast = "💥 Out of attempts"
	}
	return next, toast, nil
}
