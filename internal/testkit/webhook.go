package testkit

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// PostUpdate POSTs body (an update's JSON) to a webhook at url as Telegram
// does, with the X-Telegram-Bot-Api-Secret-Token header secret ("" none),
// and returns the answer's status code.
func PostUpdate(t testing.TB, url, secret string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}
