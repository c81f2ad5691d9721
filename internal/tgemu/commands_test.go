package tgemu_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// TestWebhookLifecycleAsTelegram: setWebhook, getWebhookInfo and
// deleteWebhook answer with Telegram's texts, and while a webhook is set
// getUpdates is 409 with Telegram's exact description; deleteWebhook
// without drop_pending_updates keeps the queued updates.
func TestWebhookLifecycleAsTelegram(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t)
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 5, Text: "queued before the webhook"})
	require.NoError(t, err)

	code, r := rawCall(ctx, t, emu, "setWebhook", url.Values{"url": {"http://example.com/hook"}})
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook", r.Description)

	code, r = rawCall(ctx, t, emu, "setWebhook", url.Values{"url": {"https://example.com/hook"}})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Webhook was set", r.Description)
	require.Equal(t, "https://example.com/hook", emu.WebhookURL())

	_, r = rawCall(ctx, t, emu, "getWebhookInfo", nil)
	var info struct {
		URL     string `json:"url"`
		Pending int    `json:"pending_update_count"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &info))
	require.Equal(t, "https://example.com/hook", info.URL)
	require.Equal(t, 1, info.Pending)

	code, r = rawCall(ctx, t, emu, "getUpdates", nil)
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, 409, r.ErrorCode)
	require.Equal(t, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", r.Description)

	code, r = rawCall(ctx, t, emu, "deleteWebhook", nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Webhook was deleted", r.Description)
	_, r = rawCall(ctx, t, emu, "deleteWebhook", nil)
	require.Equal(t, "Webhook is already deleted", r.Description)

	_, r = rawCall(ctx, t, emu, "getWebhookInfo", nil)
	require.NoError(t, json.Unmarshal(r.Result, &info))
	require.Empty(t, info.URL)
	_, r = rawCall(ctx, t, emu, "getUpdates", nil)
	require.Len(t, updateIDs(t, r), 1, "deleteWebhook without drop_pending_updates keeps the queue")
}

// TestWebhookResendsAnUpdateUntilItIsAnswered2xx: as Telegram repeats an
// unsuccessful webhook request, the emulator POSTs a queued update again
// (with the secret header) while the webhook's server refuses the
// connection, leaves the POST unanswered past the timeout, or answers a
// status other than 2xx; the update stays pending (getWebhookInfo's
// last_error_message says why) until a 2xx answer confirms it.
func TestWebhookResendsAnUpdateUntilItIsAnswered2xx(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithLocalBotAPI(), tgemu.WithWebhookTiming(time.Second, 20*time.Millisecond))
	addr := testkit.FreeAddr(t) // nothing listens yet: refused
	code, _ := rawCall(ctx, t, emu, "setWebhook", url.Values{"url": {"http://" + addr + "/hook"}, "secret_token": {"s3cret"}})
	require.Equal(t, http.StatusOK, code)
	u, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 5, Text: "hello"})
	require.NoError(t, err)

	require.NoError(t, emu.WaitUntil(ctx, func() bool { return len(emu.WebhookDeliveries()) >= 2 }))
	require.Len(t, emu.PendingUpdates(), 1, "refused: not confirmed")
	_, r := rawCall(ctx, t, emu, "getWebhookInfo", nil)
	var info struct {
		Pending   int    `json:"pending_update_count"`
		LastError string `json:"last_error_message"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &info))
	require.Equal(t, 1, info.Pending)
	require.Equal(t, "Connection refused", info.LastError)

	release := make(chan struct{})
	var mu sync.Mutex
	var posts int
	var secrets []string
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		n := posts
		secrets = append(secrets, r.Header.Get("X-Telegram-Bot-Api-Secret-Token"))
		mu.Unlock()
		switch n {
		case 1:
			<-release // unanswered past the timeout
		case 2:
			w.WriteHeader(http.StatusInternalServerError)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(release); _ = srv.Close() })

	require.NoError(t, emu.WaitUntil(ctx, func() bool { return len(emu.PendingUpdates()) == 0 }))
	var kinds []string
	for _, d := range emu.WebhookDeliveries() {
		require.Equal(t, u.ID, d.UpdateID)
		kind := d.Err
		if kind == "" {
			kind = strconv.Itoa(d.Status)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != kind {
			kinds = append(kinds, kind)
		}
	}
	require.Equal(t, []string{"Connection refused", "Connection timed out", "500", "200"}, kinds)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"s3cret", "s3cret", "s3cret"}, secrets)
}
