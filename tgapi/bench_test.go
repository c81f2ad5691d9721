package tgapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/tgapi"
)

// oldStatusKey, oldStatusBox and oldStatusClient are the worker's send path
// before tgapi: go-telegram/bot with an http.Client wrapper that smuggled
// the HTTP status back through the request's context.
type oldStatusKey struct{}

type oldStatusBox struct{ code atomic.Int32 }

type oldStatusClient struct{ c *http.Client }

func (s oldStatusClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := s.c.Do(req)
	if box, ok := req.Context().Value(oldStatusKey{}).(*oldStatusBox); ok && resp != nil {
		box.code.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// BenchmarkSend is one worker send (sendMessage with a keyboard, the
// status and whether the request was written kept) over loopback to the
// emulator, by the old path (go-telegram/bot, multipart body, status
// through the context) and the new (tgapi.SendMessageID, JSON body), in
// the same run. B/op counts the whole process: the emulator's work too
// (it parses a multipart body for the old path, JSON for the new).
func BenchmarkSend(b *testing.B) {
	emu := testkit.NewEmulator(b, testkit.Unlimited("measures one call's cost, not pacing"))
	const chat = int64(42)
	emu.AddChat(models.Chat{ID: chat})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	markup := json.RawMessage(`{"inline_keyboard":[[{"text":"🍎","callback_data":"g:1:a"},{"text":"🍌","callback_data":"g:1:b"}]]}`)
	params := func() *bot.SendMessageParams {
		return &bot.SendMessageParams{ChatID: chat, Text: "🔐 New code: 4 emojis from 🍎 🍌 🍇 🍒 🍋 🥝", ReplyMarkup: markup, DisableNotification: true}
	}
	b.Run("old", func(b *testing.B) {
		old, err := bot.New(emu.Token(), bot.WithSkipGetMe(), bot.WithServerURL(emu.URL()), bot.WithHTTPClient(time.Minute, oldStatusClient{c: hc}))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			box := &oldStatusBox{}
			var wrote atomic.Bool
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) },
			})
			ctx, cancel := context.WithTimeout(context.WithValue(ctx, oldStatusKey{}, box), time.Minute)
			m, err := old.SendMessage(ctx, params())
			cancel()
			if err != nil || m.ID == 0 || box.code.Load() != http.StatusOK {
				b.Fatal(err)
			}
		}
	})
	b.Run("new", func(b *testing.B) {
		c, err := tgapi.New(tgapi.Config{Token: emu.Token(), ServerURL: emu.URL(), HTTPClient: hc})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			id, err := c.SendMessageID(ctx, params())
			cancel()
			if err != nil || id == 0 {
				b.Fatal(err)
			}
		}
	})
}
