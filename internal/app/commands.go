package app

import (
	"context"
	"log/slog"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/gameui"
	"github.com/codemojex/codemojex/internal/update"
)

// cmd returns the command of update u, if any, for this bot
// (update.ParseCommand with the bot's username from getMe).
func (a *App) cmd(u *models.Update) (update.Command, bool) {
	if u.Message == nil {
		return update.Command{}, false
	}
	return update.ParseCommand(u.Message, a.username())
}

// username is the bot's username ("" until getMe answered).
func (a *App) username() string {
	if me := a.me.Load(); me != nil {
		return me.Username
	}
	return ""
}

// reply queues text as the answer to message m (update.ReplyTo: threaded
// under m in groups). It is sent through the notifier once the handler
// returns.
func (a *App) reply(out *update.Outcome, m *models.Message, text string) {
	out.Reply(update.ReplyTo(m, text))
}

// registerHandlers routes commands and callback queries to their
// handlers on m: the player commands to the game UI (gameui), the admin
// commands to theirs, taps to the tapdata router; anything else goes to
// m's default (the game UI's Other: guesses as plain emoji messages).
func (a *App) registerHandlers(m *update.Mux) {
	a.ui.Register(m)
	for name, h := range map[string]update.HandlerFunc{
		"weight": a.admin(a.onWeight), "weights": a.admin(a.onWeights), "lanes": a.admin(a.onLanes),
		"dlq": a.admin(a.onDLQ), "broadcast": a.admin(a.bc.OnCommand), "audit": a.admin(a.onAudit),
	} {
		m.RouteFunc(update.IsCommand(name, a.username), h)
	}
	m.Route(update.IsCallbackQuery, a.taps)
}

// registerCommands sets the command menu (setMyCommands). Like getMe,
// getUpdates and answerCallbackQuery (callback.go), it is a direct Bot API
// call: not a chat message.
func (a *App) registerCommands(ctx context.Context) {
	cmds := gameui.Commands()
	if err := a.api.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: cmds}); err != nil {
		a.log.Warn("setMyCommands failed; the command menu is unchanged", slog.Any("err", a.redactor.Error(err)))
	}
}
