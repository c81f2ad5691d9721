package tgapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/tgapi"
)

// transports are the two ways a Client sends: its own connections (no
// HTTPClient: the worker's) and net/http (an HTTPClient given).
var transports = []struct {
	name string
	hc   func() *http.Client
}{
	{"direct", func() *http.Client { return nil }},
	{"net-http", func() *http.Client { return &http.Client{} }},
}

// chatClient is an emulator without limits (its options opts) with chat
// 1, and a client of it on transport hc (nil: the client's own
// connections).
func chatClient(t *testing.T, hc *http.Client, opts ...tgemu.Option) (*tgemu.Emulator, *tgapi.Client) {
	t.Helper()
	emu := testkit.NewEmulator(t, append([]tgemu.Option{testkit.Unlimited("the transport's connections, not pacing")}, opts...)...)
	emu.AddChat(models.Chat{ID: 1})
	return emu, newClient(t, emu, tgapi.Config{HTTPClient: hc})
}

// Calls one after another reuse one connection (keep-alive), on either
// transport: 20 sends, one connection accepted by the emulator.
func TestCallsInTurnShareOneKeepAliveConnection(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			emu, c := chatClient(t, tr.hc())
			ctx := ctxFor(t, 30*time.Second)
			for range 20 {
				_, err := c.SendMessageID(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x"})
				require.NoError(t, err)
			}
			require.Len(t, emu.Messages(1), 20)
			require.Equal(t, 1, emu.ConnsAccepted())
		})
	}
}

// A keep-alive connection the server closed while it sat idle is not
// written on again: the next send dials a new one and is answered (a send
// written on the dead one would get no answer, its outcome unknown, and be
// sent again: a duplicate).
func TestAnIdleConnectionTheServerClosedIsNotReused(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			emu, c := chatClient(t, tr.hc(), tgemu.WithIdleTimeout(50*time.Millisecond))
			ctx := ctxFor(t, 30*time.Second)
			for i := range 3 {
				_, err := c.SendMessageID(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x"})
				require.NoError(t, err, "send %d", i)
				time.Sleep(300 * time.Millisecond) // the server closes the idle connection
			}
			require.Len(t, emu.Messages(1), 3)
			require.Equal(t, 3, emu.ConnsAccepted())
		})
	}
}

// A call whose context is cancelled while it waits for the answer ends
// at once, with context.Canceled and its outcome unknown (the request was
// written); the client's next call is answered.
func TestACancelledCallEndsAtOnceWithItsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			emu, c := chatClient(t, tr.hc())
			emu.InjectFault(tgemu.Delay(10 * time.Second).For("sendMessage").Times(1))
			ctx, cancel := context.WithCancel(ctxFor(t, 30*time.Second))
			time.AfterFunc(200*time.Millisecond, cancel)
			t0 := time.Now()
			_, err := c.SendMessageID(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x"})
			took := time.Since(t0)
			require.ErrorIs(t, err, context.Canceled)
			require.False(t, errors.Is(err, context.DeadlineExceeded))
			e := tgapi.AsError(err)
			require.NotNil(t, e)
			require.True(t, e.OutcomeUnknown(), "written, no answer: %v", err)
			require.Less(t, took, 5*time.Second, "cut at the cancel, not at the fault's 10 s")
			_, err = c.SendMessageID(ctxFor(t, 30*time.Second), &bot.SendMessageParams{ChatID: 1, Text: "y"})
			require.NoError(t, err)
		})
	}
}
