package tgapi

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
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
