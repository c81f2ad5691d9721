package app

import (
	"context"
	"fmt"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/floodnotice"
)

// initFloods wires the intake limits (FLOOD_*: a flood.Limiter the inbox
// applies where updates are recorded; none when they are off) and what a
// dropped update still gets (floodnotice.Notices: a tap its toast through
// answerCallback when the process has a Bot API client, a chat its notice
// through the notifier), after the Telegram client.
func (a *App) initFloods() error {
	var limiter *flood.Limiter
	if l := a.cfg.Flood.Limits(); l.On() {
		limiter = flood.New(a.opt.tag, l, a.cfg.IsAdmin)
	}
	var answer func(ctx context.Context, queryID, text string)
	if a.api != nil {
		answer = a.answerCallback
	}
	var err error
	if a.floods, err = floodnotice.New(floodnotice.Config{Limiter: limiter, Client: a.c, Notifier: a.notifier, Answer: answer,
		Registerer: a.reg, Catalog: a.cat, Choice: a.langs.Get, Log: a.log}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if limiter != nil {
		a.inbox.WithLimits(limiter, a.floods.OnDrops)
	}
	return nil
}
