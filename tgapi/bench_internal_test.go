package tgapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/go-telegram/bot/models"
)

// sentAnswer is the emulator's answer to a sendMessage with a keyboard
// (what the worker's hot path decodes once per send).
const sentAnswer = `{"ok":true,"result":{"message_id":1234,"from":{"id":4242,"is_bot":true,"first_name":"Codemojex","username":"codemojex_bot"},` +
	`"chat":{"id":987654321,"type":"private","first_name":"User 987654321"},"date":1764870000,"text":"🔐 New code: 4 emojis from 🍎 🍌 🍇 🍒 🍋 🥝",` +
	`"reply_markup":{"inline_keyboard":[[{"text":"🍎","callback_data":"g:1:a"},{"text":"🍌","callback_data":"g:1:b"},{"text":"🍇","callback_data":"g:1:c"}]]}}}`

// tooManyAnswer is a 429 answer.
const tooManyAnswer = `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 5","parameters":{"retry_after":5}}`

// oldAPIResponse and oldDecode are go-telegram/bot v1.19.0's decoding of an
// answer (raw_request.go: io.ReadAll, apiResponse, then the result into
// the method's model; an error built with fmt.Errorf), the path the worker
// decoded with before tgapi.
type oldAPIResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result,omitempty"`
	Description string          `json:"description,omitempty"`
	ErrorCode   int             `json:"error_code,omitempty"`
	Parameters  struct {
		RetryAfter      int `json:"retry_after,omitempty"`
		MigrateToChatID int `json:"migrate_to_chat_id,omitempty"`
	} `json:"parameters,omitempty"`
}

func oldDecode(body io.Reader, dest any) error {
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	var r oldAPIResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("error decode response body for method %s, %s, %w", "sendMessage", b, err)
	}
	if !r.OK {
		return fmt.Errorf("too many requests, %s: retry_after %d", r.Description, r.Parameters.RetryAfter)
	}
	return json.Unmarshal(r.Result, dest)
}

// BenchmarkDecode compares the decoding of one answer (read the body,
// decode it into a Message or an error) by go-telegram/bot's path (old)
// and this package's (new: into a models.Message as SendMessage; new-id:
// the message_id alone as SendMessageID), for a sent message and a 429.
func BenchmarkDecode(b *testing.B) {
	c, err := New(Config{Token: "1:benchmark-token-secret"})
	if err != nil {
		b.Fatal(err)
	}
	for _, a := range []struct{ name, body string }{{"sent", sentAnswer}, {"429", tooManyAnswer}} {
		body := []byte(a.body)
		b.Run(a.name+"/old", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var m models.Message
				_ = oldDecode(bytes.NewReader(body), &m)
			}
		})
		b.Run(a.name+"/new", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp := http.Response{StatusCode: 200, ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body))}
				buf, raw, _ := c.readAnswer(&resp)
				var m models.Message
				_ = c.decode("sendMessage", resp.StatusCode, raw, &m)
				c.answers.Put(buf)
			}
		})
		b.Run(a.name+"/new-id", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp := http.Response{StatusCode: 200, ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body))}
				buf, raw, _ := c.readAnswer(&resp)
				var m messageID
				_ = c.decode("sendMessage", resp.StatusCode, raw, &m)
				c.answers.Put(buf)
			}
		})
	}
}
