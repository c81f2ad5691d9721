package tgapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Direct connections. net/http's client runs two goroutines per
// connection (its read and write loops) and hands every request and answer
// between them and the caller: at a worker's 1,000 sends/s that and its
// per-request allocations (73 a send) are most of a send's CPU. conns sends
// each call on a keep-alive HTTP/1.1 connection of its own pool, written
// and read by the calling goroutine itself, with fasthttp's request writer
// and answer reader (5 allocations a send; BenchmarkSendCPU). What net/http
// gave that conns keeps:
//
//   - a call ends when its context does: its deadline is the connection's,
//     and a cancel (context.AfterFunc) sets a deadline in the past, which
//     cuts the read or write under way;
//   - an idle connection the server closed is not reused: before reuse a
//     non-blocking peek (connAlive) sees its end, as net/http's read loop
//     would have seen it (a reused dead connection fails a send written in
//     full, whose outcome is then unknown);
//   - Written says whether the request was written in full;
//   - errors are *url.Error with the URL redacted, context.DeadlineExceeded
//     and context.Canceled matching with errors.Is.
//
// What it does not do: HTTP/2, proxies, a custom RoundTripper; New uses
// net/http for those (Config.HTTPClient, or a proxy named by the
// environment).
const (
	// connIdleFor is how long a connection may sit idle and still be
	// reused: less than the usual keep-alive timeouts of servers (nginx 75
	// s, net/http 90 s).
	connIdleFor = 50 * time.Second
	// dialTimeout bounds a dial (and a TLS handshake) when the call's
	// context has a later deadline or none.
	dialTimeout = 30 * time.Second
	// connBuf is each connection's read and write buffer size; an answer's
	// header must fit in it (Telegram's are under 1 KiB; net/http allows
	// 1 MiB).
	connBuf = 8 << 10
	// sweepEvery is how often put sweeps the pool's bottom.
	sweepEvery = time.Second
)

// conns is a pool of keep-alive HTTP/1.1 connections to one server. Safe for
// concurrent use.
type conns struct {
	addr    string      // host:port
	tls     *tls.Config // nil: plain TCP
	dialer  net.Dialer
	maxIdle int           // the most idle connections kept
	dialFor time.Duration // bounds a dial and its TLS handshake (dialTimeout)

	mu    sync.Mutex
	idle  []*conn   // most recently used last
	swept time.Time // when put last swept the pool's bottom
}

// conn is one connection with its buffers.
type conn struct {
	nc   net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	used time.Time // when it went idle
}

// newConns returns a pool for server (an http or https URL) keeping at
// most maxIdle idle connections. Errors: a URL of another scheme or
// without a host.
func newConns(server string, maxIdle int) (*conns, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	p := &conns{maxIdle: max(maxIdle, 1), dialer: net.Dialer{KeepAlive: 30 * time.Second}, dialFor: dialTimeout}
	port := u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		p.tls = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	default:
		return nil, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	p.addr = net.JoinHostPort(u.Hostname(), port)
	return p, nil
}

// get returns an idle connection that is still open, or dials one by
// deadline dl (zero: none but ctx and dialTimeout).
func (p *conns) get(ctx context.Context, dl time.Time) (*conn, error) {
	now := time.Now()
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if now.Sub(c.used) < connIdleFor && connAlive(c.nc) {
			return c, nil
		}
		_ = c.nc.Close()
	}
	// The dial and the TLS handshake end by dl, and within dialFor
	// whatever dl is (a dialer's own timeout would not bound the
	// handshake).
	if limit := time.Now().Add(p.dialFor); dl.IsZero() || limit.Before(dl) {
		dl = limit
	}
	ctx, cancel := context.WithDeadline(ctx, dl)
	defer cancel()
	nc, err := p.dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if p.tls != nil {
		tc := tls.Client(nc, p.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, err
		}
		nc = tc
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, connBuf), bw: bufio.NewWriterSize(nc, connBuf)}, nil
}

// put gives back c for reuse, or closes it when the pool is full. At most
// once every sweepEvery it also closes the idle connections at the bottom
// of the pool (idle longest) that the server closed or that sat idle
// connIdleFor, up to the first one still open: servers close idle
// connections oldest first, and net/http's read loops would have closed
// them at once (a closed one left in the pool holds its socket in
// CLOSE_WAIT until a burst reaches it).
func (p *conns) put(c *conn) {
	now := time.Now()
	c.used = now
	var stale []*conn
	p.mu.Lock()
	if len(p.idle) < p.maxIdle {
		p.idle = append(p.idle, c)
		c = nil
	}
	if now.Sub(p.swept) >= sweepEvery {
		p.swept = now
		n := 0
		for n < len(p.idle)-1 && (now.Sub(p.idle[n].used) >= connIdleFor || !connAlive(p.idle[n].nc)) {
			n++
		}
		stale = append(stale, p.idle[:n]...)
		p.idle = append(p.idle[:0], p.idle[n:]...)
	}
	p.mu.Unlock()
	if c != nil {
		_ = c.nc.Close()
	}
	for _, s := range stale {
		_ = s.nc.Close()
	}
}

// closeIdle closes the idle connections.
func (p *conns) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		_ = c.nc.Close()
	}
}

// do sends req and reads the answer into resp (its body at most maxAnswer
// bytes), bounded by ctx and by timeout (0: none) from now, which is taken
// as a deadline of the connection's (no context and timer of its own for
// each call). written reports that the request was written in full.
// Errors: the dial's, the write's, the read's; context.DeadlineExceeded
// (with the cause) when the deadline passed, ctx's error
// (context.Canceled) when ctx ended first.
func (p *conns) do(ctx context.Context, timeout time.Duration, req *fasthttp.Request, resp *fasthttp.Response) (written bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	dl, _ := ctx.Deadline()
	if timeout > 0 {
		if own := time.Now().Add(timeout); dl.IsZero() || own.Before(dl) {
			dl = own
		}
	}
	c, err := p.get(ctx, dl)
	if err != nil {
		return false, ctxErr(ctx, dl, err)
	}
	_ = c.nc.SetDeadline(dl) // zero: none
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	err = req.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err == nil {
		written = true
		err = resp.ReadLimitBody(c.br, maxAnswer)
	}
	if !stop() { // the cut ran (or runs): the connection's deadline is spent
		_ = c.nc.Close()
		if err == nil {
			return written, nil // the answer was read before the cut
		}
		return written, ctxErr(ctx, dl, err)
	}
	if err != nil || resp.ConnectionClose() || c.br.Buffered() > 0 {
		_ = c.nc.Close()
		return written, ctxErr(ctx, dl, err)
	}
	_ = c.nc.SetDeadline(time.Time{})
	p.put(c)
	return written, nil
}

// ctxErr is ctx's error when ctx ended, or context.DeadlineExceeded when
// deadline dl (zero: none) passed, with err, what that caused (the
// connection's deadline error, which fasthttp's reader turns into
// fasthttp.ErrTimeout), as its cause; otherwise err.
func ctxErr(ctx context.Context, dl time.Time, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%w)", cerr, err)
	}
	timedOut := errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, fasthttp.ErrTimeout)
	if !dl.IsZero() && timedOut && !time.Now().Before(dl) {
		return fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
	}
	return err
}
