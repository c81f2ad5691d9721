package gameui

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

// compTTL bounds how long a composition outlives its last tap.
const compTTL = gamestore.DefaultGameTTL

// boardRef is the chat's current board: game id, the job id of the
// board's sendMessage and its language (that of the group when it was
// sent, else of the player who started the game; "" for a board of
// before languages: read as i18n.Default).
type boardRef struct {
	Game string
	Job  lanes.JobID
	Lang string
}

// boardLang is the language a board of ref speaks to the update r: in a
// private chat its player's (r.Lang); in a group the group's (r.ChatLang,
// set by its admins), else the board's own (ref.Lang, the starter's).
func boardLang(r *update.Request, ref boardRef, group bool) string {
	switch {
	case !group:
		return r.Lang
	case r.ChatLang != "":
		return r.ChatLang
	}
	return ref.Lang
}

func (u *UI) loadBoard(ctx context.Context, chat int64) (boardRef, error) {
	m, err := u.c.Do(ctx, u.c.B().Hgetall().Key(u.keys.Board(chat)).Build()).AsStrMap()
	if err != nil {
		return boardRef{}, fmt.Errorf("gameui: board of chat %d: %w", chat, err)
	}
	return boardRef{Game: m["g"], Job: lanes.JobID(m["j"]), Lang: m["l"]}, nil
}

func (u *UI) saveBoard(ctx context.Context, chat int64, b boardRef) error {
	k := u.keys.Board(chat)
	for _, r := range u.c.DoMulti(ctx,
		u.c.B().Hset().Key(k).FieldValue().FieldValue("g", b.Game).FieldValue("j", string(b.Job)).FieldValue("l", b.Lang).Build(),
		u.c.B().Pexpire().Key(k).Milliseconds(compTTL.Milliseconds()).Build()) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("gameui: board of chat %d: %w", chat, err)
		}
	}
	return nil
}

// compositions reads every player's composition of game gameID in chat,
// ordered by user id (a stable order on the board).
func (u *UI) compositions(ctx context.Context, chat int64, st game.State) ([]composition, error) {
	m, err := u.c.Do(ctx, u.c.B().Hgetall().Key(u.keys.Comp(chat, st.ID)).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("gameui: compositions of chat %d: %w", chat, err)
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

// boardMessage renders the board of st with comps in chat in language
// lang: text and keyboard (none once the game is over).
func (u *UI) boardMessage(chat int64, st game.State, comps []composition, group bool, lang string) (notifier.Message, error) {
	gc := make([]game.Composition, len(comps))
	ready := 0
	for i, c := range comps {
		gc[i] = c.Composition
		if len(c.Symbols) == st.Config.CodeLength {
			ready++
		}
	}
	msg := notifier.Message{Text: boardText(u.cat.For(lang), st, gc, group), Class: notifier.Reply, Editable: true}
	if st.Over() {
		return msg, nil
	}
	kb, err := u.keyboard(chat, st, ready > 0)
	if err != nil {
		return notifier.Message{}, err
	}
	b, err := json.Marshal(kb)
	if err != nil {
		return notifier.Message{}, fmt.Errorf("gameui: keyboard: %w", err)
	}
	msg.Markup = string(b)
	return msg, nil
}

// keyboard is the board's inline keyboard: the palette in rows of three,
// then ⌫, ✅ (shown as ☑️ until a composition has every symbol: Telegram
// has no disabled buttons, so a tap on it only answers a toast) and 🏳️.
func (u *UI) keyboard(chat int64, st game.State, canSubmit bool) (models.InlineKeyboardMarkup, error) {
	btn := func(text, arg string) (models.InlineKeyboardButton, error) {
		d, err := u.codec.Encode(tapdata.KindGame, st.ID, arg, chat)
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
	submit := labelSubmitNotYet
	if canSubmit {
		submit = labelSubmit
	}
	var last []models.InlineKeyboardButton
	for _, c := range [][2]string{{labelBack, actBack}, {submit, actSubmit}, {labelGiveUp, actGiveUp}} {
		b, err := btn(c[0], c[1])
		if err != nil {
			return models.InlineKeyboardMarkup{}, err
		}
		last = append(last, b)
	}
	return models.InlineKeyboardMarkup{InlineKeyboard: append(rows, last)}, nil
}

// sendBoard queues a new board for st in chat (idempotent per update),
// threaded under message replyTo (0: none), and makes it the chat's board,
// speaking r's language (a group's, else r's sender's: boardLang).
func (u *UI) sendBoard(ctx context.Context, r *update.Request, out *update.Outcome, chat int64, st game.State, group bool, replyTo int) error {
	comps, err := u.compositions(ctx, chat, st)
	if err != nil {
		return err
	}
	lang := boardLang(r, boardRef{Lang: r.Lang}, group)
	msg, err := u.boardMessage(chat, st, comps, group, lang)
	if err != nil {
		return err
	}
	msg.Key = out.Key(r, "board")
	msg.ReplyTo = replyTo
	ids, err := u.notifier.Notify(ctx, chat, msg)
	if err != nil {
		return fmt.Errorf("gameui: board of chat %d: %w", chat, err)
	}
	return u.saveBoard(ctx, chat, boardRef{Game: st.ID, Job: ids[0], Lang: lang})
}

// refreshBoard queues an edit of chat's board to show st (coalesced with
// any edit of it still queued). A board of another game (or none: a game
// started before boards existed) is left alone, except that with ensure
// (the /play message the board answers) a new board is sent for a game in
// progress (threaded under ensure in a group, like any reply). Once the
// game is over its compositions are dropped. The keys it mints go to out
// (it runs as an update.After hook, or in a callback handler).
func (u *UI) refreshBoard(ctx context.Context, r *update.Request, out *update.Outcome, chat int64, st game.State, group bool, ensure *models.Message) error {
	ref, err := u.loadBoard(ctx, chat)
	if err != nil {
		return err
	}
	if ref.Game != st.ID || ref.Job == "" {
		if ensure != nil && !st.Over() {
			replyTo := 0
			if group {
				replyTo = ensure.ID
			}
			return u.sendBoard(ctx, r, out, chat, st, group, replyTo)
		}
		return nil
	}
	comps, err := u.compositions(ctx, chat, st)
	if err != nil {
		return err
	}
	msg, err := u.boardMessage(chat, st, comps, group, boardLang(r, ref, group))
	if err != nil {
		return err
	}
	if _, _, err := u.notifier.EditLatest(ctx, chat, ref.Job, msg); err != nil {
		return fmt.Errorf("gameui: board of chat %d: %w", chat, err)
	}
	if st.Over() {
		if err := u.c.Do(ctx, u.c.B().Del().Key(u.keys.Comp(chat, st.ID)).Build()).Error(); err != nil {
			return fmt.Errorf("gameui: compositions of chat %d: %w", chat, err)
		}
	}
	return nil
}

// onBoardTap handles a tap on a game board (tapdata.KindGame) and returns its
// toast.
func (u *UI) onBoardTap(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
	m := q.Message.Message
	chat, group := m.Chat.ID, !update.IsPrivate(m)
	t := u.texts(r)
	cur, err := u.games.Current(ctx, chat)
	switch {
	case errors.Is(err, gamestore.ErrNoGame), errors.Is(err, game.ErrInvalidState):
		return t.T("toast_game_over", nil)
	case err != nil:
		u.log.Error("board tap: game not read", slog.Int64("chat", chat), slog.Any("err", err))
		return tapdata.ToastRetry
	}
	if cur.ID != d.Scope {
		return t.T("toast_game_over", nil)
	}
	name := displayName(&q.From)
	fail := func(err error) string {
		u.log.Error("board tap failed", slog.Int64("chat", chat), slog.String("action", d.Arg), slog.Any("err", err))
		return tapdata.ToastRetry
	}
	toast := ""
	next := cur
	switch {
	case strings.HasPrefix(d.Arg, actPick) || d.Arg == actBack:
		op, idx := "back", ""
		if d.Arg != actBack {
			i, err := strconv.Atoi(strings.TrimPrefix(d.Arg, actPick))
			if err != nil || i < 0 || i >= len(cur.Config.Palette) {
				return tapdata.ToastInvalidButton
			}
			op, idx = "add", strconv.Itoa(i)
		}
		code, err := u.compose(ctx, chat, cur, q.From.ID, r.Epoch, r.ID, op, idx, name)
		if err != nil {
			return fail(err)
		}
		switch n := cur.Config.CodeLength; code {
		case -1:
			return t.N("toast_full", n, map[string]any{"N": n})
		case -2:
			return t.T("toast_empty", nil)
		}
	case d.Arg == actSubmit:
		var err error
		if next, toast, err = u.submitTap(ctx, r, chat, cur, q.From, name); err != nil {
			return fail(err)
		}
	case d.Arg == actGiveUp:
		st, err := u.games.GiveUp(ctx, chat)
		if errors.Is(err, gamestore.ErrNoGame) {
			return t.T("toast_game_over", nil)
		}
		if err != nil {
			return fail(err)
		}
		next, toast = st, t.T("toast_gave_up", nil)
	default:
		return tapdata.ToastInvalidButton
	}
	if err := u.refreshBoard(ctx, r, out, chat, next, group, nil); err != nil {
		return fail(err)
	}
	return toast
}

// compose runs compose.lua for one tap and returns its code.
func (u *UI) compose(ctx context.Context, chat int64, st game.State, user, epoch, updateID int64, op, idx, name string) (int64, error) {
	args := []string{strconv.FormatInt(user, 10), strconv.FormatInt(updateID, 10), op, idx, name,
		strconv.Itoa(st.Config.CodeLength), strconv.FormatInt(compTTL.Milliseconds(), 10), strconv.FormatInt(epoch, 10)}
	v, err := u.composeScript.Exec(ctx, u.c, []string{u.keys.Comp(chat, st.ID)}, args).ToArray()
	if err != nil || len(v) == 0 {
		return 0, fmt.Errorf("gameui: compose in chat %d: %w", chat, errors.Join(err, errors.New("empty reply")))
	}
	return v[0].AsInt64()
}

// submitTap plays the tapping player's composition as their guess, like a
// typed one (same scoring, same leaderboard), once per update: the move is
// journalled with the game's fingerprint first, so an update handled again
// after a crash does not play it twice. It returns the game after the move
// and the toast.
func (u *UI) submitTap(ctx context.Context, r *update.Request, chat int64, cur game.State, from models.User, name string) (game.State, string, error) {
	comps, err := u.compositions(ctx, chat, cur)
	if err != nil {
		return cur, "", err
	}
	var mine game.Composition
	for _, c := range comps {
		if c.User == from.ID {
			mine = c.Composition
		}
	}
	t := u.texts(r)
	n := cur.Config.CodeLength
	if len(mine.Symbols) != n {
		return cur, t.N("toast_choose_first", n, map[string]any{"N": n, "Chosen": len(mine.Symbols)}), nil
	}
	pre := Fingerprint(cur, true)
	j, err := u.loadJournal(ctx, r.ID)
	if err != nil {
		return cur, "", err
	}
	if j.Exists && j.Pre != pre {
		return cur, "", nil // applied before a restart
	}
	if err := u.PlanMove(ctx, r.ID, pre, nil); err != nil {
		return cur, "", err
	}
	res, next, err := u.games.GuessOnce(ctx, chat, from.ID, name, strings.Join(mine.Symbols, ""), r.Key("submit"))
	if errors.Is(err, gamestore.ErrNoGame) {
		return cur, t.T("toast_game_over", nil), nil
	}
	if err != nil {
		return cur, "", err
	}
	if !next.Over() {
		if err := u.c.Do(ctx, u.c.B().Hdel().Key(u.keys.Comp(chat, cur.ID)).Field(strconv.FormatInt(from.ID, 10)).Build()).Error(); err != nil {
			return next, "", fmt.Errorf("gameui: compositions of chat %d: %w", chat, err)
		}
	}
	toast := res.Pegs(n)
	switch res.Status {
	case game.Won:
		toast = t.T("toast_cracked", map[string]any{"Points": res.Points})
	case game.Lost:
		toast = t.T("toast_out_of_attempts", nil)
	}
	return next, toast, nil
}
