package gameui

import (
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/i18n"
)

// commandIDs are the player commands of the menu, in its order, and the
// catalog ids of their descriptions.
func commandIDs() [7][2]string {
	return [...][2]string{
		{"play", "desc_play"}, {"guess", "desc_guess"}, {"giveup", "desc_giveup"}, {"top", "desc_top"},
		{"help", "desc_help"}, {"language", "desc_language"}, {"start", "desc_start"},
	}
}

// commands is the command menu in t's language (the player commands;
// admin commands are left out of the public menu).
func commands(t i18n.Texts) []models.BotCommand {
	ids := commandIDs()
	out := make([]models.BotCommand, 0, len(ids))
	for _, c := range ids {
		out = append(out, models.BotCommand{Command: c[0], Description: t.T(c[1], nil)})
	}
	return out
}

// Menu is what the bot shows of itself in one language (setMyCommands,
// setMyDescription and setMyShortDescription with its language_code).
type Menu struct {
	Lang             string // an i18n language
	Commands         []models.BotCommand
	Description      string // the empty chat's "What can this bot do?"
	ShortDescription string // the bot's profile and share text
}

// Menus returns the Menu of every language of the catalog, in
// i18n.Languages order (i18n.Default first: also the menu of users whose
// language has none).
func Menus(c *i18n.Catalog) []Menu {
	out := make([]Menu, 0, len(i18n.Languages()))
	for _, l := range i18n.Languages() {
		t := c.For(l)
		out = append(out, Menu{Lang: l, Commands: commands(t), Description: t.T("bot_description", nil),
			ShortDescription: t.T("bot_short_description", nil)})
	}
	return out
}
