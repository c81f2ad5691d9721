package app

import (
	"context"
	"log/slog"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

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

// userCommands is the command menu registered with setMyCommands (admin
// commands are left out of the public menu).
func userCommands() []models.BotCommand {
	return []models.BotCommand{
		{Command: "play", Description: "Start a new game"},
		{Command: "guess", Description: "Guess the code (in groups): /guess 🍎🍌🍇🍒"},
		{Command: "giveup", Description: "Give up and reveal the code"},
		{Command: "top", Description: "This chat's leaderboard"},
		{Command: "help", Description: "Rules and commands"},
		{Command: "start", Description: "Welcome"},
	}
}

// registerHandlers routes commands and callback queries to their
// handlers on m; anything else goes to m's default (onOther: guesses as
// plain emoji messages).
func (a *App) registerHandlers(m *update.Mux) {
	for name, h := range map[string]update.HandlerFunc{
		"start": a.onStart, "help": a.onHelp, "play": a.onPlay, "guess": a.onGuessCommand,
		"giveup": a.onGiveUp, "top": a.onTop,
		"weight": a.admin(a.onWeight), "weights": a.admin(a.onWeights), "lanes": a.admin(a.onLanes),
		"dlq": a.admin(a.onDLQ), "broadcast": a.admin(a.onBroadcast), "audit": a.admin(a.onAudit),
	} {
		m.RouteFunc(update.IsCommand(name, a.username), h)
	}
	m.RouteFunc(update.IsCallbackQuery, a.onCallbackQuery)
}

// registerCommands sets the command menu (setMyCommands). Like getMe,
// getUpdates and answerCallbackQuery (callback.go), it is a direct Bot API
// call: not a chat message.
func (a *App) registerCommands(ctx context.Context) {
	cmds := userCommands()
	if err := a.api.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: cmds}); err != nil {
		a.log.Warn("setMyCommands failed; the command menu is unchanged", slog.Any("err", a.redactor.Error(err)))
	}
}
