package app

import (
	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/notifier"
)

type botT = bot.Bot

func notifyMsg(text string) notifier.Message {
	return notifier.Message{Text: text, Class: notifier.Notification}
}
