package tgemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/go-telegram/bot/models"
)

// WithLocalBotAPI makes the emulator behave as a local Bot API server
// (telegram-bot-api --local) where Telegram's cloud server differs: it
// accepts an http:// webhook URL on any port (the cloud server answers 400
// "bad webhook: An HTTPS URL must be provided for webhook").
func WithLocalBotAPI() Option { return func(c *config) { c.localServer = true } }

// WithWebhookTiming sets how long a webhook delivery waits for the bot's
// answer before it counts as failed and how long the emulator waits before
// sending a failed update again, for as long as it takes. Telegram
// documents neither, only that it repeats an unsuccessful request and
// gives up "after a reasonable amount of attempts" (reported: a timeout
// near 60 s, intervals of seconds to minutes, growing). Defaults 5 s and
// 200 ms, to keep tests short.
func WithWebhookTiming(timeout, retry time.Duration) Option {
	return func(c *config) { c.webhookTimeout, c.webhookRetry = timeout, retry }
}

// WebhookDelivery is one POST of an update to the webhook.
type WebhookDelivery struct {
	UpdateID int64
	// Status is the HTTP status the bot answered (0 when none: a timeout
	// or a refused connection, see Err).
	Status int
	Err    string
	Time   time.Time
}

// WebhookDeliveries lists every webhook POST so far, in order.
func (e *Emulator) WebhookDeliveries() []WebhookDelivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]WebhookDelivery(nil), e.deliveries...)
}

// startWebhookLocked starts delivering queued updates to the webhook just
// set (generation gen); a later setWebhook or deleteWebhook ends it.
func (e *Emulator) startWebhookLocked() {
	e.webhookGen++
	if e.webhookURL == "" || e.webhookSecret == noDelivery {
		return
	}
	go e.deliver(e.webhookGen, e.webhookURL, e.webhookSecret)
}

// noDelivery marks a webhook set by SetWebhook (state only, no POSTs).
const noDelivery = "\x00"

// deliver POSTs the queued updates to url one at a time, in update_id
// order, as Telegram does for a webhook: with the header
// X-Telegram-Bot-Api-Secret-Token when a secret_token was set; an update is
// confirmed (forgotten) by a 2xx answer; a timeout, a failed connection or
// any other status is recorded as the webhook's last error and the update
// is sent again after the retry delay. It ends when the webhook changes or
// the emulator closes.
func (e *Emulator) deliver(gen int, url, secret string) {
	hc := &http.Client{Timeout: e.webhookTimeout}
	current := func() bool { return e.webhookGen == gen }
	for {
		var u models.Update
		err := e.wait(context.Background(), func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			if !current() {
				return true
			}
			if len(e.updates) > 0 {
				u = e.updates[0]
				return true
			}
			return false
		}, e.closed)
		if err != nil {
			return
		}
		e.mu.Lock()
		stop := !current()
		e.mu.Unlock()
		if stop {
			return
		}
		body, _ := json.Marshal(u)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		d := WebhookDelivery{UpdateID: u.ID, Time: e.now()}
		resp, err := hc.Do(req)
		if err != nil {
			d.Err = "Connection timed out"
			if !isTimeout(err) {
				d.Err = "Connection refused"
			}
		} else {
			d.Status = resp.StatusCode
			resp.Body.Close()
		}
		e.mu.Lock()
		e.deliveries = append(e.deliveries, d)
		ok := err == nil && d.Status >= 200 && d.Status < 300
		if ok {
			if len(e.updates) > 0 && e.updates[0].ID == u.ID {
				e.updates = e.updates[1:]
			}
		} else if d.Err != "" {
			e.webhookError = d.Err
		} else {
			e.webhookError = fmt.Sprintf("Wrong response from the webhook: %d %s", d.Status, http.StatusText(d.Status))
		}
		e.broadcastLocked()
		e.mu.Unlock()
		if !ok {
			select {
			case <-time.After(e.webhookRetry):
			case <-e.closed:
				return
			}
		}
	}
}

func isTimeout(err error) bool {
	type timeout interface{ Timeout() bool }
	t, ok := err.(timeout)
	return ok && t.Timeout()
}
