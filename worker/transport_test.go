package worker_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/worker"
)

// NewTransport keeps senders+2 connections alive per host: three rounds of
// 6 getMe calls at once (6 senders' worth for 4 senders) against the
// emulator answering after 100 ms open 6 connections in the first round and
// reuse them after, and a second such run opens none.
func TestTransportKeepsConnectionsAlive(t *testing.T) {
	t.Parallel()
	emu := testkit.NewEmulator(t, tgemu.WithToken(token), tgemu.WithLatency(100*time.Millisecond))
	c := &http.Client{Transport: worker.NewTransport(4), Timeout: 10 * time.Second}
	var dialled atomic.Int32
	get := func() error {
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) {
				if !i.Reused {
					dialled.Add(1)
				}
			},
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, emu.URL()+"/bot"+token+"/getMe", nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	round := func() {
		for range 3 {
			errs := make([]error, 6)
			var wg sync.WaitGroup
			for i := range errs {
				wg.Go(func() { errs[i] = get() })
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
		}
	}
	round()
	first := dialled.Load()
	require.Equal(t, int32(6), first, "connections opened for 6 requests at once, kept between rounds")
	round()
	require.Equal(t, first, dialled.Load(), "idle connections kept alive and reused")
}

// NewTransport speaks HTTP/2 to a server that offers it over TLS (as
// api.telegram.org does).
func TestTransportUsesHTTP2WhereOffered(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr := worker.NewTransport(4)
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 2, resp.ProtoMajor)
	require.Equal(t, "HTTP/2.0", string(body))
}
