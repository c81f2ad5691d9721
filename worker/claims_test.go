package worker_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

// peakTransport passes requests to the real transport and records the
// most sendMessage requests it had in flight at once.
type peakTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	cur  int
	peak int
}

func (p *peakTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/sendMessage") {
		return p.next.RoundTrip(r)
	}
	p.mu.Lock()
	p.cur++
	p.peak = max(p.peak, p.cur)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.cur--
		p.mu.Unlock()
	}()
	return p.next.RoundTrip(r)
}

func (p *peakTransport) max() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// With a claim rate that keeps the most claims in flight (8) and only 3
// senders, the claims in flight never take more senders' slots than are
// free: the Bot API never has more than 3 sends of this worker in flight,
// each chat's messages (weighted lanes of up to 4 per turn among them,
// sends slowed by the emulator so batches hold their slots) arrive once
// each in enqueue order, and nothing is dead-lettered.
func TestConcurrentClaimsNeverExceedTheSendersAndKeepEachChatsOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		senders int
		latency time.Duration
	}{
		{"3 senders, answers after 20 ms", 3, 20 * time.Millisecond},
		{"1 sender, immediate answers", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{latency: tc.latency, unlimited: "the senders must bind, not a rate"})
			const chats, per = 12, 8
			for c := 1; c <= chats; c++ {
				if c%3 == 0 {
					require.NoError(t, e.store.Inspector().SetWeight(e.ctx, itoa(c), 4))
				}
			}
			for i := range per {
				for c := 1; c <= chats; c++ {
					e.notify(int64(c), orderedText(c, i), notifier.Notification)
				}
			}
			peak := &peakTransport{next: worker.NewTransport(tc.senders)}
			cfg := e.config()
			cfg.Senders, cfg.MinSenders = tc.senders, tc.senders
			cfg.ClaimRate = 1_000_000 // claimsFor: 8 in flight at any claim round trip above 4 µs
			cfg.HTTPClient = &http.Client{Transport: peak}
			e.start(cfg)
			e.requireEachChatInOrder(chats, per)
			require.Equal(t, chats*per, e.emu.Stats().Sent, "each message once")
			require.LessOrEqual(t, peak.max(), tc.senders, "sends in flight at once")
			require.Positive(t, peak.max())
			require.Empty(t, e.dead(tgjob.QueueNotify))
		})
	}
}

// At a high claim rate one claim serves several chats (lanes
// ClaimRequest.Lanes, a batch per lane on a sender of its own): 240 chats
// with one message each are delivered once each in fewer claims than
// three quarters of the messages (a claim of one lane per message would
// need at least 240),
// never more sends at once than senders, nothing dead-lettered.
func TestAClaimAtAHighRateServesSeveralChats(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{latency: 20 * time.Millisecond, unlimited: "the claims per message are measured, not a rate"})
	const chats, senders = 240, 32
	for c := 1; c <= chats; c++ {
		e.notify(int64(c), orderedText(c, 0), notifier.Notification)
	}
	peak := &peakTransport{next: worker.NewTransport(senders)}
	cfg := e.config()
	cfg.Senders, cfg.MinSenders = senders, senders
	cfg.ClaimRate = 2_000 // 16 lanes a claim (lanesFor)
	cfg.HTTPClient = &http.Client{Transport: peak}
	e.start(cfg)
	e.requireEachChatInOrder(chats, 1)
	require.Equal(t, chats, e.emu.Stats().Sent, "each message once")
	require.LessOrEqual(t, peak.max(), senders, "sends in flight at once")
	require.Empty(t, e.dead(tgjob.QueueNotify))
	claims := e.histogramCount("codemojex_worker_claim_duration_seconds")
	t.Logf("%d claims for %d messages", claims, chats)
	// How many lanes a claim asks for follows the senders free at that
	// moment (min(free senders, lanesFor)): on a quiet host they come back
	// one or two at a time and a run took 121-127 claims, under load 40;
	// a claim per message (lanesFor 1) takes at least 240.
	require.Less(t, claims, uint64(chats*3/4), "claims: several chats each")
}
