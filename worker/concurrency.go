package worker

import (
	"math"
	"net/http"
	"sync"
	"time"
)

// Concurrency from the budget (see Run). The number of batches sent at once
// follows Little's law: to deliver rate messages/s when each message holds
// its sender for t seconds (the Bot API round trip plus the settle, e.g.
// 300 ms from a host far from Telegram), rate × t sends must be in flight.
// The worker measures t (holdEstimate) and keeps
//
//	ceil(rate × t × sendersHeadroom) + sendersSpare
//
// senders, at least Config.MinSenders and at most Config.Senders.
const (
	// sendersHeadroom covers the variation of t between measurements and
	// the claim's own round trip: 25% more senders than the mean needs.
	sendersHeadroom = 1.25
	// sendersSpare are extra senders for a batch of a weighted lane (its
	// messages go one after another, holding one sender for all of them)
	// and for a reply arriving while the budget's senders are busy.
	sendersSpare = 2
	// holdUp and holdDown are the weights of a new measurement in the
	// estimate when it is above, or below, the current one: the estimate
	// follows a latency rise within a few sends (Telegram holding requests
	// near its limits) and falls back slowly, so one quick answer does not
	// drop senders that the next slow ones need.
	holdUp, holdDown = 0.2, 0.05
)

// DefaultSenders is Config.Senders' default: the most sends one worker has
// in flight. At Telegram's paid-broadcast ceiling (1,000 messages/s) it
// covers a 1.2 s round trip (1,000 × 1.2 × 1.25 + 2 = 1,502); a longer one
// then caps the rate at DefaultSenders ÷ round trip. Only the senders the
// budget needs are started (a bot at 30/s and 300 ms runs 14), so the cap
// costs nothing until it is used. Cost at the cap: one goroutine (a few
// KiB of stack) and one keep-alive connection (socket, buffers, about
// 40 KiB with TLS) per sender over HTTP/1.1 (HTTP/2, as api.telegram.org
// offers, carries many sends per connection), so about 60 MiB and 1,538
// file descriptors; measured with the emulator (HTTP/1.1, no TLS) at
// 1,000/s and 1 s: see docs/delivery.md.
const DefaultSenders = 1536

// MaxSenders is the highest Config.Senders (WORKERS).
const MaxSenders = 4096

// DefaultMinSenders is Config.MinSenders' default.
const DefaultMinSenders = 4

// sendersFor is how many batches to send at once for rate messages/s
// (0: unknown, then hi) when a message holds its sender for hold; at least
// lo, at most hi.
func sendersFor(rate int, hold time.Duration, lo, hi int) int {
	if rate <= 0 {
		return hi
	}
	n := int(math.Ceil(float64(rate)*hold.Seconds()*sendersHeadroom)) + sendersSpare
	return min(max(n, lo), hi)
}

// holdEstimate is the running estimate of how long one message holds its
// sender (from the start of the claim that fetched its batch to the batch's
// last settle, divided by its messages: at a low latency the claim is a
// good part of it).
// Safe for concurrent use.
type holdEstimate struct {
	mu   sync.Mutex
	est  time.Duration
	seen bool
}

// observe adds one measurement d.
func (h *holdEstimate) observe(d time.Duration) {
	if d <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.seen {
		h.est, h.seen = d, true
		return
	}
	w := holdDown
	if d > h.est {
		w = holdUp
	}
	h.est += time.Duration(w * float64(d-h.est))
}

// get returns the estimate (0 before any measurement).
func (h *holdEstimate) get() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.est
}

// NewTransport returns the HTTP transport for a worker of senders senders
// (Config.Senders): http.DefaultTransport's timeouts (dial 30 s with 30 s
// TCP keep-alive, TLS handshake 10 s, idle connections closed after 90 s)
// and its HTTP/2 attempt (used where the server offers h2 over TLS, as
// api.telegram.org does: one connection then carries many sends), with
// connection reuse sized for the senders: senders+2 connections to the Bot
// API host kept alive when idle (DefaultTransport keeps 2 per host, so a
// busy worker would close and re-dial, paying a TLS handshake, all the
// time). The +2 are for the warm-up and a request arriving while a
// connection is being closed. The sockets in use are bounded by the
// senders themselves (one request in flight per sender over HTTP/1.1), so
// no MaxConnsPerHost is set: a send never waits for a connection slot.
func NewTransport(senders int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	n := max(senders, 1) + 2
	tr.MaxIdleConns = n
	tr.MaxIdleConnsPerHost = n
	return tr
}
