package app

import (
	"context"
	"log/slog"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// command is a bot command at the start of a message: "/name[@bot] args".
type command struct {
	Name string // lower case, without "/" and "@bot"
	Args string // the rest of the text, trimmed
}

// parseCommand returns the command message m starts with. It accepts
// "/name@<this bot>" (any case) and rejects "/name@<another bot>", so in a
// group with several bots only the addressed one answers. ok is false when
// m does not start with a command. go-telegram/bot's MatchTypeCommand
// compares the whole entity ("start@codemojex_bot") with the pattern, so it
// would miss the @botname form: commands are matched here instead.
func parseCommand(m *models.Message, username string) (command, bool) {
	if m == nil || !strings.HasPrefix(m.Text, "/") {
		return command{}, false
	}
	end := strings.IndexAny(m.Text, " \t\n\r")
	if end < 0 {
		end = len(m.Text)
	}
	head := m.Text[1:end]
	name, mention, hasMention := strings.Cut(head, "@")
	if name == "" || len(name) > 32 {
		return command{}, false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return command{}, false
		}
	}
	if hasMention && !strings.EqualFold(mention, username) {
		return command{}, false
	}
	return command{Name: strings.ToLower(name), Args: strings.TrimSpace(m.Text[end:])}, true
}

// cmd returns the command of update u, if any, for this bot.
func (a *App) cmd(u *models.Update) (command, bool) {
	if u.Message == nil {
		return command{}, false
	}
	username := ""
	if me := a.me.Load(); me != nil {
		username = me.Username
	}
	return parseCommand(u.Message, username)
}

// isCommand returns a matcher for command name.
func (a *App) isCommand(name string) bot.MatchFunc {
	return func(u *models.Update) bool {
		c, ok := a.cmd(u)
		return ok && c.Name == name
	}
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

// registerHandlers routes commands to their handlers; anything else goes to
// onOther (guesses as plain emoji messages).
func (a *App) registerHandlers(b *bot.Bot) {
	for name, h := range map[string]bot.HandlerFunc{
		"start": a.onStart, "help": a.onHelp, "play": a.onPlay, "guess": a.onGuessCommand,
		"giveup": a.onGiveUp, "top": a.onTop,
		"weight": a.admin(a.onWeight), "weights": a.admin(a.onWeights), "lanes": a.admin(a.onLanes),
		"dlq": a.admin(a.onDLQ), "broadcast": a.admin(a.onBroadcast), "audit": a.admin(a.onAudit),
	} {
		b.RegisterHandlerMatchFunc(a.isCommand(name), h)
	}
	b.RegisterHandlerMatchFunc(isCallbackQuery, a.onCallbackQuery)
}

// registerCommands sets the command menu (setMyCommands). Like getMe,
// getUpdates and answerCallbackQuery (callback.go), it is a direct Bot API
// call: not a chat message.
func (a *App) registerCommands(ctx context.Context) {
	cmds := userCommands()
	if _, err := a.bot.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: cmds}); err != nil {
		a.log.Warn("setMyCommands failed; the command menu is unchanged", slog.Any("err", a.redactor.Error(err)))
	}
}
