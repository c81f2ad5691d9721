package app

import (
	"context"
	"log/slog"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/internal/gameui"
	"github.com/codemojex/codemojex/internal/update"
)

// username is the bot's username ("" until getMe answered).
func (a *App) username() string {
	if me := a.me.Load(); me != nil {
		return me.Username
	}
	return ""
}

// registerHandlers routes commands and callback queries to their
// handlers on m: the player commands to the game UI (gameui), the admin
// commands to internal/admin's (behind its gate, as /broadcast is), taps to
// the tapdata router, the bot's membership changes to noReply (only
// chatMiddleware's record); anything else goes to m's default (the game
// UI's Other: guesses as plain emoji messages).
func (a *App) registerHandlers(m *update.Mux) {
	a.ui.Register(m)
	a.admin.Register(m)
	m.RouteFunc(update.IsCommand("broadcast", a.username), a.admin.Gate(a.bc.OnCommand))
	m.RouteFunc(update.IsCommand("broadcasts", a.username), a.admin.Gate(a.bc.OnList))
	m.Route(update.IsCallbackQuery, a.taps)
	m.RouteFunc(isMyChatMember, noReply)
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
