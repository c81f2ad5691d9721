package gameui

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/update"
)

// reply queues text as the answer to message m (threaded under m in
// groups). It is sent through the notifier once the handler returns.
func (u *UI) reply(out *update.Outcome, m *models.Message, text string) {
	out.Reply(update.ReplyTo(m, text))
}

// displayName is the leaderboard name of u: "First Last", else @username.
func displayName(u *models.User) string {
	if u == nil {
		return ""
	}
	n := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if n == "" && u.Username != "" {
		n = "@" + u.Username
	}
	return n
}

func (u *UI) onStart(_ context.Context, r *update.Request) (out update.Outcome) {
	cfg := u.gameCfg.WithDefaults()
	u.reply(&out, r.Update.Message, u.texts(r).T("welcome", map[string]any{"N": cfg.CodeLength, "Palette": palette(cfg)}))
	return out
}

func (u *UI) onHelp(_ context.Context, r *update.Request) (out update.Outcome) {
	u.reply(&out, r.Update.Message, u.helpTexts[u.texts(r).Lang])
	return out
}

// topSize is the number of players /top lists.
const topSize = 10

func (u *UI) onTop(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	top, err := u.games.Top(ctx, m.Chat.ID, topSize)
	if err != nil {
		return update.Failed(err)
	}
	t := u.texts(r)
	if len(top) == 0 {
		u.reply(&out, m, t.T("top_empty", nil))
		return out
	}
	var b strings.Builder
	b.WriteString(t.T("top_title", nil))
	for _, e := range top {
		name := e.Name
		if name == "" {
			name = t.T("top_no_name", map[string]any{"ID": e.UserID})
		}
		b.WriteString(t.T("top_line", map[string]any{"Rank": e.Rank, "Name": name, "Points": e.Points}))
	}
	u.reply(&out, m, b.String())
	return out
}

// movePlan decides a game move from the chat's current game: either the
// replies with no move (apply nil), or the replies the move will produce
// and the move itself, which returns the replies actually produced.
type movePlan func(cur game.State, exists, corrupt bool) (texts []string, apply func(context.Context, *update.Outcome) ([]string, error))

// gameMove runs plan for message m's chat so that the move is applied once
// per update, even when the update is handled again after a crash: the
// move is journalled (game fingerprint before, planned replies) before it
// is applied; on a second run, a game whose fingerprint changed means the
// move was applied, and the journalled replies are sent instead. The
// update queue hands out one update of a chat at a time (its lane is ordered), so no
// other move can change the game in between. The replies, hooks and
// failure go to out. It returns true when the move was applied before this
// run (replayed: its journalled replies sent, plan not called), so that the
// caller queues again what the move's hooks queue (the board), which the
// interrupted run may not have reached.
func (u *UI) gameMove(ctx context.Context, r *update.Request, out *update.Outcome, m *models.Message, plan movePlan) (replayed bool) {
	cur, err := u.games.Current(ctx, m.Chat.ID)
	exists, corrupt := err == nil, false
	switch {
	case err == nil, errors.Is(err, gamestore.ErrNoGame):
	case errors.Is(err, game.ErrInvalidState):
		corrupt = true
		u.log.Error("stored game is corrupt", slog.Int64("chat", m.Chat.ID), slog.Any("err", err))
	default:
		out.Fail(err)
		return false
	}
	pre := Fingerprint(cur, exists)
	if corrupt {
		pre = "corrupt"
	}
	j, err := u.loadJournal(ctx, r.ID)
	if err != nil {
		out.Fail(err)
		return false
	}
	if j.Exists && j.Pre != pre {
		u.log.Info("move was applied before a restart; sending its journalled replies",
			slog.Int64("update_id", r.ID), slog.Int64("chat", m.Chat.ID))
		out.Replies = append(out.Replies, j.Out...)
		return true
	}
	texts, apply := plan(cur, exists, corrupt)
	if apply == nil {
		for _, t := range texts {
			u.reply(out, m, t)
		}
		return false
	}
	planned := make([]update.Reply, 0, len(texts))
	for _, t := range texts {
		planned = append(planned, update.ReplyTo(m, t))
	}
	if err := u.PlanMove(ctx, r.ID, pre, planned); err != nil {
		out.Fail(err)
		return false
	}
	texts, err = apply(ctx, out)
	if err != nil {
		out.Fail(err)
		return false
	}
	for _, t := range texts {
		u.reply(out, m, t)
	}
	return false
}

// onPlay starts a game; its reply is the game's board (sendBoard, queued
// after the move, also when the update is handled again after a crash).
func (u *UI) onPlay(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	t := u.texts(r)
	started := false
	replayed := u.gameMove(ctx, r, &out, m, func(cur game.State, exists, corrupt bool) ([]string, func(context.Context, *update.Outcome) ([]string, error)) {
		if exists {
			return []string{t.T("running_board", map[string]any{"Board": stateBoard(t, cur)})}, nil
		}
		started = true
		return nil, func(ctx context.Context, _ *update.Outcome) ([]string, error) {
			var err error
			if corrupt {
				_, err = u.games.Restart(ctx, m.Chat.ID, u.gameCfg, u.rng)
			} else {
				_, err = u.games.Start(ctx, m.Chat.ID, u.gameCfg, u.rng)
			}
			if errors.Is(err, gamestore.ErrGameInProgress) {
				return []string{t.T("running", nil)}, nil
			}
			if err != nil {
				return nil, err
			}
			return nil, nil
		}
	})
	// The board is queued after the move, and again when the move was
	// applied by a run that did not get as far as the board (a store error
	// in this hook, a crash after the game started): without it that /play
	// gets no answer at all.
	if started || replayed {
		out.Then(func(ctx context.Context, o *update.Outcome) error { return u.ensureBoard(ctx, r, o, m) })
	}
	return out
}

// ensureBoard makes sure the game in progress in m's chat has its board:
// sent once (keyed by the update), then recorded as the chat's board.
func (u *UI) ensureBoard(ctx context.Context, r *update.Request, out *update.Outcome, m *models.Message) error {
	cur, err := u.games.Current(ctx, m.Chat.ID)
	if errors.Is(err, gamestore.ErrNoGame) {
		return nil
	}
	if err != nil {
		return err
	}
	return u.refreshBoard(ctx, r, out, m.Chat.ID, cur, !update.IsPrivate(m), m)
}

func (u *UI) onGiveUp(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	t := u.texts(r)
	u.gameMove(ctx, r, &out, m, func(cur game.State, exists, corrupt bool) ([]string, func(context.Context, *update.Outcome) ([]string, error)) {
		switch {
		case corrupt:
			return []string{t.T("corrupt_game", nil)}, nil
		case !exists:
			return []string{t.T("no_game", nil)}, nil
		}
		return []string{giveUpText(t, cur.Secret)}, func(ctx context.Context, out *update.Outcome) ([]string, error) {
			st, err := u.games.GiveUp(ctx, m.Chat.ID)
			if errors.Is(err, gamestore.ErrNoGame) {
				return []string{t.T("no_game", nil)}, nil
			}
			if err != nil {
				return nil, err
			}
			out.Then(func(ctx context.Context, o *update.Outcome) error {
				return u.refreshBoard(ctx, r, o, m.Chat.ID, st, !update.IsPrivate(m), nil)
			})
			return []string{giveUpText(t, st.Secret)}, nil
		}
	})
	return out
}

// guess plays text as the sender's guess in m's chat; the replies, hooks
// and failure go to out.
func (u *UI) guess(ctx context.Context, r *update.Request, out *update.Outcome, m *models.Message, text string) {
	t := u.texts(r)
	noGame := t.T("no_game", nil)
	u.gameMove(ctx, r, out, m, func(cur game.State, exists, corrupt bool) ([]string, func(context.Context, *update.Outcome) ([]string, error)) {
		switch {
		case corrupt:
			return []string{t.T("corrupt_game", nil)}, nil
		case !exists:
			return []string{noGame}, nil
		}
		_, res, err := cur.Guess(text)
		if ge, ok := errors.AsType[*game.GuessError](err); ok {
			return []string{guessErrorText(t, ge)}, nil
		}
		if err != nil {
			return []string{noGame}, nil
		}
		var uid int64
		if m.From != nil {
			uid = m.From.ID
		}
		return []string{resultText(t, res)}, func(ctx context.Context, out *update.Outcome) ([]string, error) {
			// Once per update: a handler that takes the update over (its
			// lease lost, its settle failed) must not use a second attempt.
			res, next, err := u.games.GuessOnce(ctx, m.Chat.ID, uid, displayName(m.From), text, r.Key("guess"))
			if ge, ok := errors.AsType[*game.GuessError](err); ok {
				return []string{guessErrorText(t, ge)}, nil
			}
			if errors.Is(err, gamestore.ErrNoGame) {
				return []string{noGame}, nil
			}
			if err != nil {
				return nil, err
			}
			out.Then(func(ctx context.Context, o *update.Outcome) error {
				return u.refreshBoard(ctx, r, o, m.Chat.ID, next, !update.IsPrivate(m), nil)
			})
			return []string{resultText(t, res)}, nil
		}
	})
}

func (u *UI) onGuessCommand(ctx context.Context, r *update.Request) (out update.Outcome) {
	c, _ := u.cmd(r.Update)
	if c.Args == "" {
		u.reply(&out, r.Update.Message, u.texts(r).T("guess_usage", nil))
		return out
	}
	u.guess(ctx, r, &out, r.Update.Message, c.Args)
	return out
}

// onOther handles every update no command matched: in a private chat a
// text is a guess; in a group (where privacy mode delivers only commands
// and replies to the bot) a reply to one of the bot's messages is a guess.
// Unknown commands get a pointer to /help where they are clearly for us.
func (u *UI) onOther(ctx context.Context, r *update.Request) (out update.Outcome) {
	if u.Ignores(r.Update) != update.Acts {
		return out
	}
	m := r.Update.Message
	if c, ok := u.cmd(r.Update); ok {
		u.reply(&out, m, u.texts(r).T("unknown_command", map[string]any{"Name": c.Name}))
		return out
	}
	u.guess(ctx, r, &out, m, m.Text)
	return out
}

// Ignores returns why Other does not act on up (update.Acts when it does):
// it acts on a message with text that is a guess (typed in a private chat,
// or in a group as a reply to one of the bot's messages) or a command of
// this bot no route took (answered "unknown command") sent in a private
// chat or addressed with the bot's @username; anything else is ignored
// (update.KindIgnored's reason: a group's chatter, a command without
// "@username" the bot does not know in a group, a command for another
// bot, a message without text, an edit, a channel post, any other kind).
// The app's mux asks it for the updates no route took (update.Mux.Ignoring),
// so the intake drops them before recording them. Until getMe answered (Me
// nil) a reply in a group is no guess and a command with "@..." is for
// another bot.
func (u *UI) Ignores(up *models.Update) update.Ignored {
	m := up.Message
	if m == nil || strings.TrimSpace(m.Text) == "" {
		return update.KindIgnored(up)
	}
	if strings.HasPrefix(m.Text, "/") {
		if _, ok := u.cmd(up); ok && (update.IsPrivate(m) || strings.Contains(strings.SplitN(m.Text, " ", 2)[0], "@")) {
			return update.Acts
		}
		return update.Chatter
	}
	if update.IsPrivate(m) {
		return update.Acts
	}
	me := u.me()
	if rt := m.ReplyToMessage; rt != nil && rt.From != nil && me != nil && rt.From.ID == me.ID {
		return update.Acts
	}
	return update.Chatter
}
