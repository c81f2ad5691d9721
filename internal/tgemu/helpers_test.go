package tgemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// newBot is the real go-telegram/bot client pointed at emu, without the
// startup getMe and with silent handlers.
func newBot(t *testing.T, emu *tgemu.Emulator, opts ...bot.Option) *bot.Bot {
	t.Helper()
	base := []bot.Option{
		bot.WithServerURL(emu.URL()),
		bot.WithSkipGetMe(),
		bot.WithErrorsHandler(func(error) {}),
		bot.WithDefaultHandler(func(context.Context, *bot.Bot, *models.Update) {}),
	}
	b, err := bot.New(emu.Token(), append(base, opts...)...)
	require.NoError(t, err)
	return b
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeClock is a manual clock for WithClock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// apiReply is the Bot API envelope, decoded loosely for raw-HTTP tests.
type apiReply struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  map[string]any  `json:"parameters"`
}

// rawCall posts an url-encoded form to method and decodes the reply.
func rawCall(ctx context.Context, t *testing.T, emu *tgemu.Emulator, method string, form url.Values) (int, apiReply) {
	t.Helper()
	return rawDo(ctx, t, emu.URL()+"/bot"+emu.Token()+"/"+method, "application/x-www-form-urlencoded", form.Encode())
}

func rawDo(ctx context.Context, t *testing.T, u, contentType, body string) (int, apiReply) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var r apiReply
	require.NoError(t, json.Unmarshal(data, &r), "body: %s", data)
	return resp.StatusCode, r
}

// updateIDs decodes a getUpdates result into its update ids.
func updateIDs(t *testing.T, r apiReply) []int64 {
	t.Helper()
	require.True(t, r.OK, "reply: %+v", r)
	var ups []models.Update
	require.NoError(t, json.Unmarshal(r.Result, &ups))
	ids := []int64{}
	for _, u := range ups {
		ids = append(ids, u.ID)
	}
	return ids
}

func sendErr(ctx context.Context, b *bot.Bot, chatID int64) error {
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chatID, Text: "m"})
	return err
}

// send sends one message and returns retry_after when answered 429 (-1 when
// accepted); other errors fail the test.
func send(ctx context.Context, t *testing.T, b *bot.Bot, chatID int64) int {
	t.Helper()
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chatID, Text: "m"})
	return retryOf(t, err)
}

// retryOf is -1 for a nil error, retry_after for a 429; any other error
// fails the test.
func retryOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return -1
	}
	var tm *bot.TooManyRequestsError
	require.True(t, errors.As(err, &tm), "want 429, got %v", err)
	require.ErrorContains(t, err, "Too Many Requests: retry after")
	return tm.RetryAfter
}

// limitStep is one send in a limits scenario.
type limitStep struct {
	advance time.Duration // fake clock advance before sending
	chatID  int64         // 0: only advance
	retry   int           // -1 accepted, else expected retry_after
}

// repeatChat is n accepted sends to one chat.
func repeatChat(n int, chatID int64) []limitStep {
	var s []limitStep
	for range n {
		s = append(s, limitStep{chatID: chatID, retry: -1})
	}
	return s
}
