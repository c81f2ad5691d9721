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
// and returns the updates with update_id >= offset, in order. Errors are
// *APIError for an ok=false answer, or a redacted transport error.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	form := url.Values{}
	if offset != 0 {
		form.Set("offset", strconv.FormatInt(offset, 10))
	}
	form.Set("limit", strconv.Itoa(maxUpdates))
	form.Set("timeout", strconv.Itoa(int(timeout/time.Second)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/getUpdates", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, c.redactor.Error(fmt.Errorf("getUpdates: %w", err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.redactor.Error(fmt.Errorf("getUpdates: %w", err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, c.redactor.Error(fmt.Errorf("getUpdates: read answer: %w", err))
	}
	var r struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		ErrorCode   int               `json:"error_code"`
		Description string            `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("getUpdates: HTTP %d, answer is not Bot API JSON: %w", resp.StatusCode, err)
	}
	if !r.OK {
		code := r.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return nil, &APIError{Method: "getUpdates", Code: code, Description: c.redactor.String(r.Description), RetryAfter: r.Parameters.RetryAfter}
	}
	out := make([]Update, 0, len(r.Result))
	for _, raw := range r.Result {
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
