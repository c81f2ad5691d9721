package app

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/internal/webhook"
)

// webhookSecret is TELEGRAM_WEBHOOK_SECRET in these tests.
const webhookSecret = "test_secret-0123456789"

// startWebhook starts an app of role (all, poller) in webhook mode: its
// TELEGRAM_WEBHOOK_URL is http://<its HTTP address>/tg/hook (the emulator
// plays a local Bot API server, which takes http://).
func (h *harness) startWebhook(env []string, opts ...Option) (*running, string) {
	h.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(h.t, err)
	url := "http://" + ln.Addr().String() + "/tg/hook"
	r := h.startOn(ln, append([]string{"TELEGRAM_WEBHOOK_URL=" + url, "TELEGRAM_WEBHOOK_SECRET=" + webhookSecret}, env...), opts...)
	require.Eventually(h.t, func() bool { return h.emu.WebhookURL() == url }, wait, 10*time.Millisecond, "setWebhook")
	return r, url
}

// Webhook mode: Telegram (the emulator) POSTs each update with the secret
// header, the bot records it, answers 200 and handles it once; no
// getUpdates is sent.
func TestWebhookReceivesEachUpdateOnce(t *testing.T) {
	t.Parallel()
	h := newHarnessEmu(t, []tgemu.Option{tgemu.WithLocalBotAPI()})
	since := time.Now()
	h.startWebhook(nil)
	for _, c := range []int64{701, 702, 703} {
		require.Contains(t, h.ask(0, user(c, "W"), "/start"), "Codemojex")
	}
	require.Eventually(t, func() bool { return len(h.emu.PendingUpdates()) == 0 }, wait, 10*time.Millisecond, "every update confirmed")
	ds := h.emu.WebhookDeliveries()
	require.Len(t, ds, 3)
	for _, d := range ds {
		require.Equal(t, http.StatusOK, d.Status)
	}
	require.Zero(t, h.getUpdatesCalls(since), "no getUpdates in webhook mode")
	h.quiet(701, 300*time.Millisecond)
}

// A request without the right secret is 401, a bad body 400, another
// method 405: internal/webhook's TestWebhookRefusesWrongSecretAndBadBodies.

// Valkey refusing writes: the webhook answers 500 and Telegram sends the
// update again; once Valkey accepts writes, the resend is recorded and
// handled once.
func TestWebhookValkeyDownAnswers500AndTheResendIsRecordedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarnessEmu(t, []tgemu.Option{tgemu.WithLocalBotAPI(), tgemu.WithWebhookTiming(2*time.Second, 100*time.Millisecond)})
	srv := valkeytest.Start(t, valkeytest.Options{ExtraArgs: []string{"--maxmemory-policy", "noeviction"}})
	h.onServer(srv)
	admin := srv.Client(t)
	setMaxmemory := func(v string) {
		require.NoError(t, admin.Do(ctx, admin.B().ConfigSet().ParameterValue().ParameterValue("maxmemory", v).Build()).Error())
	}
	h.startWebhook(nil)
	ann := user(705, "Ann")
	require.Contains(t, h.ask(0, ann, "/start"), "Codemojex")

	setMaxmemory("1")
	h.say(0, ann, "/help")
	require.Eventually(t, func() bool {
		n := 0
		for _, d := range h.emu.WebhookDeliveries() {
			if d.Status == http.StatusInternalServerError {
				n++
			}
		}
		return n >= 2
	}, wait, 10*time.Millisecond, "answered 500, sent again, 500 again")
	require.Len(t, h.emu.PendingUpdates(), 1, "not confirmed to Telegram")
	setMaxmemory("0")
	got := h.texts(ann.ID, 2)
	require.Contains(t, got[1], "Commands:")
	require.Eventually(t, func() bool { return len(h.emu.PendingUpdates()) == 0 }, wait, 10*time.Millisecond)
	h.quiet(ann.ID, 500*time.Millisecond)
	require.Len(t, h.emu.Messages(ann.ID), 2, "handled once")
}

// Switching modes both ways: polling, then a webhook (setWebhook; the
// updates queued meanwhile are delivered to it), then polling again (the
// webhook is deleted at start); each update answered once.
func TestWebhookAndPollingSwitchBothWays(t *testing.T) {
	t.Parallel()
	h := newHarnessEmu(t, []tgemu.Option{tgemu.WithLocalBotAPI()})
	ann := user(706, "Ann")
	p := h.start(nil)
	h.waitLeader(p)
	require.Contains(t, h.ask(0, ann, "/start"), "Codemojex")
	p.stop()

	h.say(0, ann, "/help") // queued while no bot runs
	w, _ := h.startWebhook(nil)
	require.Contains(t, h.texts(ann.ID, 2)[1], "Commands:")
	require.Contains(t, h.ask(0, ann, "/top"), "No wins")
	w.stop()
	require.NotEmpty(t, h.emu.WebhookURL(), "the webhook stays set when the bot stops")

	h.say(0, ann, "/start") // queued for the webhook while no bot runs
	p2 := h.start(nil)
	h.waitLeader(p2)
	require.Empty(t, h.emu.WebhookURL(), "polling mode deleted the webhook")
	got := h.texts(ann.ID, 4)
	require.Contains(t, got[3], "Codemojex")
	require.Contains(t, h.ask(0, ann, "/help"), "Commands:")
	h.quiet(ann.ID, 300*time.Millisecond)
	require.Len(t, h.emu.Messages(ann.ID), 5, "each update answered once")
	require.Contains(t, h.logs.String(), "a webhook was set for this bot; deleted it")
}

// Telegram's cloud server refuses an http:// webhook: the bot stops with
// Telegram's text and what it accepts.
func TestWebhookRefusedByTelegramIsReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	err := h.runUntilError([]string{"TELEGRAM_WEBHOOK_URL=http://bot.example/hook", "TELEGRAM_WEBHOOK_SECRET=" + webhookSecret})
	require.True(t, errors.Is(err, webhook.ErrRefused), "%v", err)
	require.Contains(t, err.Error(), "An HTTPS URL must be provided for webhook")
	require.Contains(t, err.Error(), "http:// only through a local Bot API server")
	require.True(t, strings.Contains(h.logs.String(), "Telegram refused the webhook URL"))
}

// Webhook deliveries are not in update_id order (parallel connections,
// resends): an older update of a chat that arrives after a newer one was
// handled is handled too (after it), and a resend of either is handled no
// second time.
func TestWebhookHandlesAnOlderUpdateArrivingLate(t *testing.T) {
	t.Parallel()
	h := newHarnessEmu(t, []tgemu.Option{tgemu.WithLocalBotAPI()})
	_, url := h.startWebhook(nil)
	const chat = 761
	h.emu.AddChat(models.Chat{ID: chat, Type: models.ChatTypePrivate, FirstName: "Late"})
	update := func(id int64, text string) []byte {
		b, err := json.Marshal(models.Update{ID: id, Message: &models.Message{ID: int(id), Date: int(time.Now().Unix()),
			Chat: models.Chat{ID: chat, Type: models.ChatTypePrivate}, From: &models.User{ID: chat, FirstName: "Late"}, Text: text,
			Entities: []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Offset: 0, Length: len(text)}}}})
		require.NoError(t, err)
		return b
	}
	require.Equal(t, http.StatusOK, testkit.PostUpdate(t, url, webhookSecret, update(1020, "/start")))
	require.Contains(t, h.texts(chat, 1)[0], "Codemojex")
	require.Equal(t, http.StatusOK, testkit.PostUpdate(t, url, webhookSecret, update(1019, "/help")))
	got := h.texts(chat, 2)
	require.Contains(t, got[1], "Commands:", "the older update is handled after the newer one")

	for _, id := range []int64{1020, 1019} { // Telegram resends both
		require.Equal(t, http.StatusOK, testkit.PostUpdate(t, url, webhookSecret, update(id, map[int64]string{1020: "/start", 1019: "/help"}[id])))
	}
	h.quiet(chat, 500*time.Millisecond)
	require.Len(t, h.emu.Messages(chat), 2, "each update handled once")
}
