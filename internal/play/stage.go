package play

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/demo"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// Stages: what POST /api/stage {"name": ...} stages (docs/play.md).
const (
	StageBurst     = "burst"     // burstChats new chats say /start at once
	StageFlood     = "flood"     // one user sends floodSize /help at once
	StageBroadcast = "broadcast" // the admin sends /broadcast and taps its Send
	StageSlow      = "slow"      // toggles 1.5 s of latency on every Bot API answer
	Stage429       = "429"       // the next 5 sendMessage answered 429, retry_after 3
	StageCalm      = "calm"      // no latency, no pending faults
)

// slowLatency is the Bot API's answer time while "slow" is on.
const slowLatency = 1500 * time.Millisecond

type stageReq struct {
	Name string `json:"name"`
}

// stage runs one stage; the slow ones (the broadcast's Send) continue in
// the background. Answers 200 {"done": what}, 400 for an unknown stage.
func (p *Playground) stage(w http.ResponseWriter, r *http.Request) {
	var req stageReq
	if !readJSON(w, r, &req) {
		return
	}
	what, err := p.Stage(req.Name)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	p.event("%s", what)
	writeJSON(w, http.StatusOK, map[string]string{"done": what})
}

// Stage stages name (one of the Stage constants) and says what it did.
func (p *Playground) Stage(name string) (string, error) {
	switch name {
	case StageBurst:
		return p.burst()
	case StageFlood:
		flo := User{ID: FlooderID, Name: "Flo", Lang: "en"}
		for range floodSize {
			if _, err := p.inject(FlooderID, flo, "/help"); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("flood: Flo sent /help %d times at once (the bot takes 10 in 10 s from one user)", floodSize), nil
	case StageBroadcast:
		return p.broadcast()
	case StageSlow:
		p.mu.Lock()
		p.slow = !p.slow
		on := p.slow
		p.mu.Unlock()
		if on {
			p.emu.SetLatency(slowLatency)
			return fmt.Sprintf("Telegram slows down: every Bot API answer takes %v", slowLatency), nil
		}
		p.emu.SetLatency(0)
		return "Telegram answers at full speed again", nil
	case Stage429:
		p.emu.InjectFault(tgemu.TooManyRequests(3).For("sendMessage").Times(5))
		return "Telegram answers the next 5 sendMessage with 429 (retry after 3 s)", nil
	case StageCalm:
		p.mu.Lock()
		p.slow = false
		p.mu.Unlock()
		p.emu.SetLatency(0)
		p.emu.ClearFaults()
		return "calm: no latency, no pending faults", nil
	}
	return "", fmt.Errorf("no stage %q", name)
}

// burst has burstChats new chats say /start at once: more than Telegram's
// 30 messages/s overall, so the bot's queue paces the answers.
func (p *Playground) burst() (string, error) {
	p.mu.Lock()
	first := FirstBurstID + int64(p.bursts)*burstChats // a fresh crowd each time
	p.bursts++
	p.mu.Unlock()
	for i := range int64(burstChats) {
		id := first + i
		u := User{ID: id, Name: fmt.Sprintf("Crowd %d", id-FirstBurstID+1), Lang: "en"}
		if _, err := p.inject(id, u, "/start"); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("burst: %d new chats said /start at once (Telegram takes 30 messages/s)", burstChats), nil
}

// broadcast has the admin send /broadcast and, once the preview is there,
// tap its ✅ button (in the background, for up to 20 s).
func (p *Playground) broadcast() (string, error) {
	admin, err := p.user(demo.AdminID, demo.AdminID)
	if err != nil {
		return "", err
	}
	id, err := p.inject(demo.AdminID, admin, "/broadcast 📣 Playground news: a new round starts, type /play")
	if err != nil {
		return "", err
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
		defer cancel()
		var msg, data string
		var msgID int
		err := p.emu.WaitUntil(ctx, func() bool {
			msgID, data, msg = p.sendButton(id)
			return data != ""
		})
		if err != nil {
			p.event("broadcast: no preview with a ✅ button came (%v)", err)
			return
		}
		if _, err := p.tapAs(demo.AdminID, admin, msgID, data); err != nil {
			p.event("broadcast: %v", err)
			return
		}
		p.event("broadcast: the admin tapped %q on the preview", msg)
	}()
	return "broadcast: the admin sent /broadcast; its ✅ Send is tapped once the preview shows", nil
}

// sendButton finds the ✅ button of the bot's first message after after in
// the admin's chat: its message id, callback data and label.
func (p *Playground) sendButton(after int) (int, string, string) {
	for _, m := range p.emu.Messages(demo.AdminID) {
		if m.ID <= after {
			continue
		}
		for _, row := range keyboard(m.ReplyMarkup) {
			for _, b := range row {
				if strings.HasPrefix(b.Text, "✅") && b.Data != "" {
					return m.ID, b.Data, b.Text
				}
			}
		}
	}
	return 0, "", ""
}
