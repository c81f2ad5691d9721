package app

import "github.com/go-telegram/bot"

type botT = bot.Bot
