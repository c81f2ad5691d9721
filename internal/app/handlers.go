package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/update"
)

// User-facing texts that are not produced by package game.
const (
	textNoGame      = "No game is running here. Send /play to start one."
	textGuessUsage  = "Send /guess followed by your emojis, e.g. /guess 🍎🍌🍇🍒"
	textCorruptGame = "This chat's game could not be read. Send /play to start a new one."
	textTopEmpty    = "No wins in this chat yet. Send /play to start a game!"
	topSize         = 10
)

func isPrivate(m *models.Message) bool {
	return m.Chat.Type == models.ChatTypePrivate || (m.Chat.Type == "" && m.Chat.ID > 0)
}

// reply queues text as the answer to message m (threaded under m in
// groups). It is sent through the notifier once the handler returns.
func (a *App) reply(out *update.Outcome, m *models.Message, text string) {
	out.Reply(replyTo(m, text))
}

// replyTo is the reply text to message m: threaded under m in groups.
func replyTo(m *models.Message, text string) update.Reply {
	o := update.Reply{ChatID: m.Chat.ID, Text: text}
	if !isPrivate(m) {
		o.ReplyTo = m.ID
	}
	return o
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

func (a *App) onStart(_ context.Context, r *update.Request) (out update.Outcome) {
	cfg := a.gameCfg.WithDefaults()
	a.reply(&out, r.Update.Message, fmt.Sprintf("👋 Welcome to Codemojex, the emoji code-breaking game!\n"+
		"Send /play to start a game, then guess the secret code of %d emojis from %s. /help explains the rules.",
		cfg.CodeLength, strings.Join(cfg.Palette, " ")))
	return out
}

func (a *App) onHelp(_ context.Context, r *update.Request) (out update.Outcome) {
	a.reply(&out, r.Update.Message, a.helpText)
	return out
}

// helpText is /help's answer for game config cfg: the rules and the
// commands (the same for every /help, so App builds it once).
func helpText(cfg game.Config) string {
	var b strings.Builder
	b.WriteString(game.HelpText(cfg))
	b.WriteString("\n\nCommands:\n")
	for _, c := range userCommands() {
		fmt.Fprintf(&b, "/%s — %s\n", c.Command, c.Description)
	}
	b.WriteString("In a group, guess with /guess or by replying to one of my messages.")
	return b.String()
}

func (a *App) onTop(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	top, err := a.games.Top(ctx, m.Chat.ID, topSize)
	if err != nil {
		return update.Failed(err)
	}
	if len(top) == 0 {
		a.reply(&out, m, textTopEmpty)
		return out
	}
	var b strings.Builder
	b.WriteString("🏆 Top players")
	for _, e := range top {
		name := e.Name
		if name == "" {
			name = fmt.Sprintf("player %d", e.UserID)
		}
		fmt.Fprintf(&b, "\n%d. %s — %d points", e.Rank, name, e.Points)
	}
	a.reply(&out, m, b.String())
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
// failure go to out.
func (a *App) gameMove(ctx context.Context, r *update.Request, out *update.Outcome, m *models.Message, plan movePlan) {
	cur, err := a.games.Current(ctx, m.Chat.ID)
	exists, corrupt := err == nil, false
	switch {
	case err == nil, errors.Is(err, gamestore.ErrNoGame):
	case errors.Is(err, game.ErrInvalidState):
		corrupt = true
		a.log.Error("stored game is corrupt", slog.Int64("chat", m.Chat.ID), slog.Any("err", err))
	default:
		out.Fail(err)
		return
	}
	pre := fingerprint(cur, exists)
	if corrupt {
		pre = "corrupt"
	}
	j, err := a.loadJournal(ctx, r.ID)
	if err != nil {
		out.Fail(err)
		return
	}
	if j.Exists && j.Pre != pre {
		a.log.Info("move was applied before a restart; sending its journalled replies",
			slog.Int64("update_id", r.ID), slog.Int64("chat", m.Chat.ID))
		out.Replies = append(out.Replies, j.Out...)
		return
	}
	texts, apply := plan(cur, exists, corrupt)
	if apply == nil {
		for _, t := range texts {
			a.reply(out, m, t)
		}
		return
	}
	planned := make([]update.Reply, 0, len(texts))
	for _, t := range texts {
		planned = append(planned, replyTo(m, t))
	}
	if err := a.planMove(ctx, r.ID, pre, planned); err != nil {
		out.Fail(err)
		return
	}
	texts, err = apply(ctx, out)
	if err != nil {
		out.Fail(err)
		return
	}
	for _, t := range texts {
		a.reply(out, m, t)
	}
}

// onPlay starts a game; its reply is the game's board (sendBoard, queued
// after the move, also when the update is handled again after a crash).
func (a *App) onPlay(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	started := false
	a.gameMove(ctx, r, &out, m, func(cur game.State, exists, corrupt bool) ([]string, func(context.Context, *update.Outcome) ([]string, error)) {
		if exists {
			return []string{"A game is already running here.\n" + cur.Board() + "\nSend your guess, or /giveup to end it."}, nil
		}
		started = true
		return nil, func(ctx context.Context, _ *update.Outcome) ([]string, error) {
			var err error
			if corrupt {
				_, err = a.games.Restart(ctx, m.Chat.ID, a.gameCfg, a.opt.rng)
			} else {
				_, err = a.games.Start(ctx, m.Chat.ID, a.gameCfg, a.opt.rng)
			}
			if errors.Is(err, gamestore.ErrGameInProgress) {
				return []string{"A game is already running here. Send your guess, or /giveup to end it."}, nil
			}
			if err != nil {
				return nil, err
			}
			return nil, nil
		}
	})
	if started {
		out.Then(func(ctx context.Context, o *update.Outcome) error { return a.ensureBoard(ctx, r, o, m) })
	}
	return out
}

// ensureBoard makes sure the game in progress in m's chat has its board:
// sent once (keyed by the update), then recorded as the chat's board.
func (a *App) ensureBoard(ctx context.Context, r *update.Request, out *update.Outcome, m *models.Message) error {
	cur, err := a.games.Current(ctx, m.Chat.ID)
	if errors.Is(err, gamestore.ErrNoGame) {
		return nil
	}
	if err != nil {
		return err
	}
	return a.refreshBoard(ctx, r, out, m.Chat.ID, cur, !isPrivate(m), m)
}

func (a *App) onGiveUp(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	a.gameMove(ctx, r, &out, m, func(cur game.State, exists, corrupt bool) ([]string, func(context.Context, *update.Outcome) ([]string, error)) {
		switch {
		case corrupt:
			return []string{textCorruptGame}, nil
		case !exists:
			return []string{textNoGame}, nil
		}
		return []string{game.GiveUpText(cur.Secret)}, func(ctx context.Context, out *update.Outcome) ([]string, error) {
			st, err := a.games.GiveUp(ctx, m.Chat.ID)
			if errors.Is(err, gamestore.ErrNoGame) {
				return []string{textNoGame}, nil
			}
			if err != nil {
				return nil, err
			}
			out.Then(func(ctx context.Context, o *update.Outcome) error {
				return a.refreshBoard(ctx, r, o, m.Chat.ID, st, !isPrivate(m), nil)
			})
			return []string{game.GiveUpText(st.Secret)}, nil
		}
	})
	return out
}

// guess plays text as the sender's guess in m's chat; the replies, hooks
// and failure go to out.
func (a *App) guess(ctx context.Context, r *update.Request, out *update.Outcome, m *models.Message, text string) {
	a.gameMove(ctx, r, out, m, func(cur game.State, exists, corrupt bool) ([]string, func(context.Context, *update.Outcome) ([]string, error)) {
		switch {
		case corrupt:
			return []string{textCorruptGame}, nil
		case !exists:
			return []string{textNoGame}, nil
		}
		_, res, err := cur.Guess(text)
		if ge, ok := errors.AsType[*game.GuessError](err); ok {
			return []string{guessErrorText(ge)}, nil
		}
		if err != nil {
			return []string{textNoGame}, nil
		}
		var uid int64
		if m.From != nil {
			uid = m.From.ID
		}
		return []string{res.Text()}, func(ctx context.Context, out *update.Outcome) ([]string, error) {
			res, next, err := a.games.Guess(ctx, m.Chat.ID, uid, displayName(m.From), text)
			if ge, ok := errors.AsType[*game.GuessError](err); ok {
				return []string{guessErrorText(ge)}, nil
			}
			if errors.Is(err, gamestore.ErrNoGame) {
				return []string{textNoGame}, nil
			}
			if err != nil {
				return nil, err
			}
			out.Then(func(ctx context.Context, o *update.Outcome) error {
				return a.refreshBoard(ctx, r, o, m.Chat.ID, next, !isPrivate(m), nil)
			})
			return []string{res.Text()}, nil
		}
	})
}

// guessErrorText says what is wrong with a rejected guess.
func guessErrorText(ge *game.GuessError) string {
	return "❌ Not a valid guess: " + ge.Error() + ". No attempt used."
}

func (a *App) onGuessCommand(ctx context.Context, r *update.Request) (out update.Outcome) {
	c, _ := a.cmd(r.Update)
	if c.Args == "" {
		a.reply(&out, r.Update.Message, textGuessUsage)
		return out
	}
	a.guess(ctx, r, &out, r.Update.Message, c.Args)
	return out
}

// onOther handles every update no command matched: in a private chat a
// text is a guess; in a group (where privacy mode delivers only commands
// and replies to the bot) a reply to one of the bot's messages is a guess.
// Unknown commands get a pointer to /help where they are clearly for us.
func (a *App) onOther(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	if m == nil || strings.TrimSpace(m.Text) == "" {
		return out
	}
	if strings.HasPrefix(m.Text, "/") {
		c, ok := a.cmd(r.Update)
		if ok && (isPrivate(m) || strings.Contains(strings.SplitN(m.Text, " ", 2)[0], "@")) {
			a.reply(&out, m, "Unknown command /"+c.Name+". Send /help for the commands.")
		}
		return out
	}
	if isPrivate(m) {
		a.guess(ctx, r, &out, m, m.Text)
		return out
	}
	me := a.me.Load()
	if rt := m.ReplyToMessage; rt != nil && rt.From != nil && me != nil && rt.From.ID == me.ID {
		a.guess(ctx, r, &out, m, m.Text)
	}
	return out
}
