package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/redact"
)

// APIError is an ok=false answer of the Bot API.
type APIError struct {
	Method      string
	Code        int    // error_code, e.g. 409, 429
	Description string // Telegram's text
	RetryAfter  int    // parameters.retry_after, seconds (429)
}

func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// IsConflict reports whether err is Telegram's 409: another getUpdates (or a
// webhook) is active for this bot.
func IsConflict(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusConflict
}

// isWebhookConflict reports whether err is the 409 Telegram answers
// getUpdates while a webhook is set: "Conflict: can't use getUpdates method
// while webhook is active; use deleteWebhook to delete the webhook first".
func isWebhookConflict(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusConflict && strings.Contains(ae.Description, "webhook is active")
}

// Client calls getUpdates directly: go-telegram/bot exports no raw
// request, and its own polling loop confirms a batch before the handlers
// ran. The URL holds the token: it is never logged, and errors are redacted.
type Client struct {
	base     string // e.g. https://api.telegram.org
	token    string
	hc       *http.Client
	redactor *redact.Redactor
}

// NewClient returns a getUpdates client of the Bot API at base (e.g.
// https://api.telegram.org) for token, sending with hc and redacting the
// token from its errors with redactor.
func NewClient(base, token string, hc *http.Client, redactor *redact.Redactor) *Client {
	return &Client{base: base, token: token, hc: hc, redactor: redactor}
}

// maxUpdates is getUpdates' limit parameter (Telegram allows 1..100).
const maxUpdates = 100

// GetUpdates long-polls for up to timeout (seconds resolution, at least 0)
// and returns the updates the server handed out, in order (normally those
// with update_id >= offset; a server whose id space was reset hands out
// lower ids, see the package doc). Errors are *APIError for an ok=false
// answer, or a redacted transport error.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	form := url.Values{}
	if offset != 0 {
		form.Set("offset", strconv.FormatInt(offset, 10))
	}
	form.Set("limit", strconv.Itoa(maxUpdates))
	form.Set("timeout", strconv.Itoa(int(timeout/time.Second)))
	var result []json.RawMessage
	if err := c.do(ctx, "getUpdates", form, &result); err != nil {
		return nil, err
	}
	out := make([]Update, 0, len(result))
	for _, raw := range result {
		var id struct {
			UpdateID int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, fmt.Errorf("getUpdates: update without update_id: %w", err)
		}
		out = append(out, Update{ID: id.UpdateID, JSON: raw})
	}
	return out, nil
}

// WebhookURL returns the webhook URL set for the bot ("" when none), from
// getWebhookInfo. Errors as GetUpdates.
func (c *Client) WebhookURL(ctx context.Context) (string, error) {
	var info struct {
		URL string `json:"url"`
	}
	if err := c.do(ctx, "getWebhookInfo", url.Values{}, &info); err != nil {
		return "", err
	}
	return info.URL, nil
}

// DeleteWebhook removes the webhook, never with drop_pending_updates: the
// updates Telegram queued for it stay queued for getUpdates. Errors as
// GetUpdates.
func (c *Client) DeleteWebhook(ctx context.Context) error {
	var ok bool
	return c.do(ctx, "deleteWebhook", url.Values{}, &ok)
}

// do POSTs form to method and decodes an ok answer's result into result.
// Errors are *APIError for an ok=false answer, or a redacted transport or
// decoding error naming the method.
func (c *Client) do(ctx context.Context, method string, form url.Values, result any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, strings.NewReader(form.Encode()))
	if err != nil {
		return c.redactor.Error(fmt.Errorf("%s: %w", method, err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.redactor.Error(fmt.Errorf("%s: %w", method, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return c.redactor.Error(fmt.Errorf("%s: read answer: %w", method, err))
	}
	var r struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		ErrorCode   int             `json:"error_code"`
		Description string          `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%s: HTTP %d, answer is not Bot API JSON: %w", method, resp.StatusCode, err)
	}
	if !r.OK {
		code := r.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return &APIError{Method: method, Code: code, Description: c.redactor.String(r.Description), RetryAfter: r.Parameters.RetryAfter}
	}
	if err := json.Unmarshal(r.Result, result); err != nil {
		return fmt.Errorf("%s: unexpected result: %w", method, err)
	}
	return nil
}

// SetWebhook sets the bot's webhook: Telegram POSTs each update to url
// with header X-Telegram-Bot-Api-Secret-Token: secret, for the update
// types in allowed (setWebhook's allowed_updates; never
// drop_pending_updates: updates queued for getUpdates are delivered to the
// webhook). Errors as GetUpdates; Telegram refuses a URL it cannot use
// with a 400 *APIError ("Bad Request: bad webhook: An HTTPS URL must be
// provided for webhook").
func (c *Client) SetWebhook(ctx context.Context, url, secret string, allowed []string) error {
	form := urlValues("url", url, "secret_token", secret)
	b, err := json.Marshal(allowed)
	if err != nil {
		return fmt.Errorf("setWebhook: %w", err)
	}
	form.Set("allowed_updates", string(b))
	var ok bool
	return c.do(ctx, "setWebhook", form, &ok)
}

func urlValues(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}
