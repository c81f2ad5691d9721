package app

import (
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/chats"
)

// nameOf returns how the chat of update u is named, for the chat
// directory (chats.Directory): a group's title, or a user's first and last
// name, and its @username; ok false when u names no chat.
func nameOf(u *models.Update) (int64, chats.Name, bool) {
	var c *models.Chat
	switch {
	case u.Message != nil:
		c = &u.Message.Chat
	case u.EditedMessage != nil:
		c = &u.EditedMessage.Chat
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		c = &u.CallbackQuery.Message.Message.Chat
	case u.MyChatMember != nil:
		c = &u.MyChatMember.Chat
	case u.ChatMember != nil:
		c = &u.ChatMember.Chat
	}
	if c == nil || c.ID == 0 {
		return 0, chats.Name{}, false
	}
	title := c.Title
	if title == "" {
		title = strings.TrimSpace(c.FirstName + " " + c.LastName)
	}
	return c.ID, chats.Name{Title: title, Username: c.Username}, true
}
