package gameui

import (
	"fmt"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/game"
)

// Commands is the command menu registered with setMyCommands (the player
// commands; admin commands are left out of the public menu).
func Commands() []models.BotCommand {
	return []models.BotCommand{
		{Command: "play", Description: descPlay},
		{Command: "guess", Description: descGuess},
		{Command: "giveup", Description: descGiveUp},
		{Command: "top", Description: descTop},
		{Command: "help", Description: descHelp},
		{Command: "start", Description: descStart},
	}
}

// helpText is /help's answer for game config cfg: the rules and the
// commands (the same for every /help, so New builds it once).
func helpText(cfg game.Config) string {
	var b strings.Builder
	b.WriteString(game.HelpText(cfg))
	b.WriteString(textHelpCommands)
	for _, c := range Commands() {
		fmt.Fprintf(&b, textHelpCommand, c.Command, c.Description)
	}
	b.WriteString(textHelpGroups)
	return b.String()
}
