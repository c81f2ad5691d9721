package tgapi

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// Over TLS (as api.telegram.org is reached), the client's own connections
// send and read answers, keep one connection alive between calls, and do
// not reuse one the server closed while it sat idle: the emulator served
// over HTTPS by a TLS test server that trusts only its own certificate.
func TestTheClientsOwnConnectionsWorkOverTLS(t *testing.T) {
	t.Parallel()
	emu := testkit.NewEmulator(t, testkit.Unlimited("the transport over TLS, not pacing"))
	emu.AddChat(models.Chat{ID: 1})
	srv := httptest.NewUnstartedServer(emu)
	var accepted atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Config.IdleTimeout = 300 * time.Millisecond
	srv.StartTLS()
	t.Cleanup(srv.Close)

	c, err := New(Config{Token: emu.Token(), ServerURL: srv.URL})
	require.NoError(t, err)
	require.NotNil(t, c.direct, "no HTTPClient: the client's own connections")
	require.NotNil(t, c.direct.tls)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	c.direct.tls.RootCAs = roots
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	send := func() {
		id, err := c.SendMessageID(ctx, &bot.SendMessageParams{ChatID: 1, Text: "over TLS"})
		require.NoError(t, err)
		require.NotZero(t, id)
	}
	for range 5 {
		send()
	}
	require.Equal(t, int32(1), accepted.Load(), "one connection kept alive for calls in turn")
	time.Sleep(time.Second) // the server closes the idle connection
	send()
	require.Equal(t, int32(2), accepted.Load(), "a new connection after the server closed the idle one")
	require.Len(t, emu.Messages(1), 6)
}

// A dial's TLS handshake is bounded even when the call has no deadline: a
// server that accepts the connection and never answers the handshake
// fails the call after the pool's dial bound (30 s, dialTimeout; 300 ms
// here), as net/http's TLS handshake timeout would.
func TestATLSHandshakeThatNeverEndsIsCutAtTheDialBound(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = nc.Close() }) // held open, silent
		}
	}()
	c, err := New(Config{Token: "1:handshake-test-secret", ServerURL: "https://" + ln.Addr().String()})
	require.NoError(t, err)
	require.NotNil(t, c.direct)
	c.direct.dialFor = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a bound for the test, far past the pool's
	defer cancel()
	t0 := time.Now()
	_, err = c.SendMessageID(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x"})
	require.Error(t, err)
	require.Less(t, time.Since(t0), 5*time.Second, "cut at the pool's dial bound: %v", err)
	e := AsError(err)
	require.NotNil(t, e)
	require.False(t, e.Written, "nothing was written")
}

// Idle connections the server closed are closed by the pool while calls go
// on (put sweeps the pool's bottom once a second), not left in CLOSE_WAIT
// until a burst reaches them: 8 connections opened by 8 calls at once,
// closed by the server after 100 ms idle while one call at a time keeps
// the top one busy: the pool keeps that one alone.
func TestIdleConnectionsTheServerClosedAreSweptWhileCallsGoOn(t *testing.T) {
	t.Parallel()
	emu := testkit.NewEmulator(t, testkit.Unlimited("the transport's connections, not pacing"), tgemu.WithIdleTimeout(100*time.Millisecond),
		tgemu.WithLatency(50*time.Millisecond))
	emu.AddChat(models.Chat{ID: 1})
	c, err := New(Config{Token: emu.Token(), ServerURL: emu.URL(), Timeout: 10 * time.Second})
	require.NoError(t, err)
	send := func() error {
		_, err := c.SendMessageID(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "x"})
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = send() })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	idle := func() int {
		c.direct.mu.Lock()
		defer c.direct.mu.Unlock()
		return len(c.direct.idle)
	}
	require.Greater(t, idle(), 1, "the calls at once left several connections idle")
	// One call at a time, 20 ms apart: the connection on top stays open
	// (each call takes it), the ones below idle past the server's 100 ms.
	deadline := time.Now().Add(10 * time.Second)
	for idle() > 1 && time.Now().Before(deadline) {
		require.NoError(t, send())
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, 1, idle(), "the closed connections were swept")
}
