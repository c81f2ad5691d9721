package tgemu_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

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
