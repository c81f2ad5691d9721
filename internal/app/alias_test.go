package app

import (
	"encoding/json"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/notifier"
)

type botT = bot.Bot

func notifyMsg(text string) notifier.Message {
	return notifier.Message{Text: text, Class: notifier.Notification}
}

func jsonOf(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
