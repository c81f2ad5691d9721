package tgemu_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault tgemu.Fault
		// check inspects the library's error for the faulted request
		check func(t *testing.T, err error)
		// delivered: whether the faulted request still sent the message
		delivered bool
		status    int // recorded HTTP status
	}{
		{
			name:  "502 with an HTML body",
			fault: tgemu.BadGateway(),
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "error decode response body")
				require.ErrorContains(t, err, "502 Bad Gateway")
			},
			status: 502,
		},
		{
			name:  "500 with a JSON body",
			fault: tgemu.InternalServerError(),
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "error response from telegram for method sendMessage, 500 Internal Server Error")
			},
			status: 500,
		},
		{
			name:  "custom status and body",
			fault: tgemu.HTTPError(503, `{"ok":false,"error_code":503,"description":"Service Unavailable"}`),
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "503 Service Unavailable")
			},
			status: 503,
		},
		{
			name:  "dropped connection",
			fault: tgemu.DropConnection(),
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "error do request for method sendMessage")
			},
		},
		{
			name:  "dropped connection after delivery",
			fault: tgemu.DropConnection().Processed(),
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "error do request for method sendMessage")
			},
			delivered: true,
		},
		{
			name:  "502 after delivery",
			fault: tgemu.BadGateway().Processed(),
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "502 Bad Gateway")
			},
			delivered: true,
			status:    502,
		},
		{
			name:  "429 with retry_after",
			fault: tgemu.TooManyRequests(7),
			check: func(t *testing.T, err error) {
				var tm *bot.TooManyRequestsError
				require.True(t, errors.As(err, &tm))
				require.Equal(t, 7, tm.RetryAfter)
				require.ErrorContains(t, err, "Too Many Requests: retry after 7")
			},
			status: 429,
		},
		{
			name:  "429 without parameters",
			fault: tgemu.TooManyRequests(0),
			check: func(t *testing.T, err error) {
				var tm *bot.TooManyRequestsError
				require.True(t, errors.As(err, &tm))
				require.Zero(t, tm.RetryAfter)
			},
			status: 429,
		},
		{
			name:  "200 with a non-JSON body",
			fault: tgemu.NonJSON(),
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "error decode response body for method sendMessage")
			},
			status: 200,
		},
	}
	ctx := testCtx(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			emu := testkit.NewEmulator(t, testkit.Unlimited("injected faults, not the limiter's 429s (limits_test.go)"))
			emu.AddChat(models.Chat{ID: 1})
			b := newBot(t, emu)
			// three faults, then success
			emu.InjectFault(tc.fault.For("sendMessage").Times(3))
			require.Equal(t, 1, emu.PendingFaults())
			for i := range 3 {
				_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "m"})
				require.Error(t, err, "attempt %d", i)
				tc.check(t, err)
			}
			require.Zero(t, emu.PendingFaults())
			m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "m"})
			require.NoError(t, err)

			want := 1
			if tc.delivered {
				want = 4
			}
			require.Equal(t, want, m.ID)
			require.Len(t, emu.Messages(1), want)
			reqs := emu.SendRequests()
			require.Len(t, reqs, 4)
			for _, r := range reqs[:3] {
				require.NotEqual(t, tgemu.FaultNone, r.Fault)
				require.Equal(t, tc.status, r.HTTPStatus)
				require.Equal(t, tc.delivered, r.MessageID != 0)
			}
			require.Equal(t, tgemu.FaultNone, reqs[3].Fault)
			require.Equal(t, 3, emu.Stats().Faults)
			require.Zero(t, emu.Stats().TooManyRequests, "injected 429s are not limiter 429s")

			// getMe was never faulted: the fault is scoped to sendMessage.
			_, err = b.GetMe(ctx)
			require.NoError(t, err)
		})
	}
}

func TestFaultScopeByChatAndMethod(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, testkit.Unlimited("injected faults, not the limiter's 429s (limits_test.go)"), tgemu.WithAllowAnyChat())
	b := newBot(t, emu)
	emu.InjectFault(tgemu.TooManyRequests(3).For("SENDMESSAGE").ForChat(2).Times(-1))
	emu.InjectFault(tgemu.InternalServerError().For("getMe"))

	tests := []struct {
		name string
		do   func() error
		fail bool
	}{
		{"other chat unaffected", func() error { return sendErr(ctx, b, 1) }, false},
		{"scoped chat fails", func() error { return sendErr(ctx, b, 2) }, true},
		{"scoped chat keeps failing (unlimited)", func() error { return sendErr(ctx, b, 2) }, true},
		{"getMe fails once", func() error { _, err := b.GetMe(ctx); return err }, true},
		{"getMe recovers", func() error { _, err := b.GetMe(ctx); return err }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.fail {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
		})
	}
	require.Equal(t, 1, emu.PendingFaults())
	emu.ClearFaults()
	require.NoError(t, sendErr(ctx, b, 2))
}

func TestDelayFault(t *testing.T) {
	const d = 300 * time.Millisecond
	tests := []struct {
		name      string
		fault     tgemu.Fault
		timeout   time.Duration
		wantErr   bool
		delivered bool
	}{
		{name: "delay then success", fault: tgemu.Delay(d), timeout: time.Minute, delivered: true},
		// The client gives up long before a delay of a minute ends (the
		// emulator records the request as canceled: it did not wait it out).
		{name: "client gives up during the delay: not processed", fault: tgemu.Delay(time.Minute), timeout: 50 * time.Millisecond, wantErr: true},
		{name: "processed then delayed, client gives up: delivered anyway", fault: tgemu.Delay(time.Minute).Processed(), timeout: 50 * time.Millisecond,
			wantErr: true, delivered: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			emu := testkit.NewEmulator(t)
			emu.AddChat(models.Chat{ID: 1})
			b := newBot(t, emu)
			emu.InjectFault(tc.fault)

			rctx, cancel := context.WithTimeout(ctx, tc.timeout)
			defer cancel()
			start := time.Now()
			_, err := b.SendMessage(rctx, &bot.SendMessageParams{ChatID: 1, Text: "slow"})
			elapsed := time.Since(start)
			if tc.wantErr {
				require.ErrorIs(t, err, context.DeadlineExceeded)
			} else {
				require.NoError(t, err)
				require.GreaterOrEqual(t, elapsed, d)
			}
			reqs, err := emu.WaitForRequests(ctx, "sendMessage", 1)
			require.NoError(t, err)
			require.Equal(t, tgemu.FaultDelay, reqs[0].Fault)
			require.Equal(t, tc.wantErr, reqs[0].Canceled)
			if tc.delivered {
				require.Len(t, emu.Messages(1), 1)
			} else {
				require.Empty(t, emu.Messages(1))
			}
		})
	}
}

func TestDelayEndsOnClose(t *testing.T) {
	emu, err := tgemu.New()
	require.NoError(t, err)
	emu.InjectFault(tgemu.Delay(time.Minute))
	b := newBot(t, emu)
	errc := make(chan error, 1)
	go func() { _, err := b.GetMe(testCtx(t)); errc <- err }()
	require.NoError(t, emu.WaitUntil(testCtx(t), func() bool { return emu.PendingFaults() == 0 }))
	require.NoError(t, emu.Close())
	select { // Close ends it: the delay's own end is a minute away, half of it is the margin of a busy host
	case err := <-errc:
		require.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the delay did not end on Close")
	}
}

func TestFaultKindString(t *testing.T) {
	for k, s := range map[tgemu.FaultKind]string{
		tgemu.FaultNone: "", tgemu.FaultHTTPError: "http_error", tgemu.FaultDrop: "drop", tgemu.FaultDelay: "delay",
		tgemu.FaultTooManyRequests: "too_many_requests", tgemu.FaultNonJSON: "non_json", tgemu.FaultKind(99): "FaultKind(99)",
	} {
		require.Equal(t, s, k.String())
	}
}

// TestHeldResponseDeliversThenClosesWithoutAnswer: the message is sent at
// once, the connection is held for the hold time with no answer, then
// closed: a client with a shorter timeout gives up, one with a longer one
// sees the connection end without a response.
func TestHeldResponseDeliversThenClosesWithoutAnswer(t *testing.T) {
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithAllowAnyChat())
	b := newBot(t, emu)

	emu.InjectFault(tgemu.HeldResponse(time.Second).For("sendMessage"))
	start := time.Now()
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 11, Text: "held"})
	require.Error(t, err, "no answer")
	require.GreaterOrEqual(t, time.Since(start), time.Second, "held for the hold time")
	require.Len(t, emu.Messages(11), 1, "delivered")

	emu.InjectFault(tgemu.HeldResponse(time.Minute).For("sendMessage"))
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = b.SendMessage(cctx, &bot.SendMessageParams{ChatID: 11, Text: "held longer than the client waits"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, emu.Messages(11), 2, "delivered although the client gave up")
	reqs := emu.Requests()
	require.Equal(t, tgemu.FaultHold, reqs[len(reqs)-1].Fault)
}

// WithLatency answers every request d after it arrived and counts the
// message halfway (the way to Telegram), composes with a fault (an
// injected 429 still comes after the full delay) and changes at run time;
// many requests wait at once, not one after another.
func TestLatencyDelaysEveryAnswer(t *testing.T) {
	const d = 300 * time.Millisecond
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithLatency(d), tgemu.WithAllowAnyChat())
	b := newBot(t, emu)

	start := time.Now()
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "far"})
	require.NoError(t, err)
	end := time.Now()
	require.GreaterOrEqual(t, end.Sub(start), d, "answered after the latency")
	msgs := emu.Messages(1)
	require.Len(t, msgs, 1)
	require.GreaterOrEqual(t, msgs[0].Time.Sub(start), d/2, "processed after the way there")
	require.GreaterOrEqual(t, end.Sub(msgs[0].Time), d/2, "processed before the way back")

	emu.InjectFault(tgemu.TooManyRequests(3).For("sendMessage"))
	start = time.Now()
	err = sendErr(ctx, b, 1)
	var tm *bot.TooManyRequestsError
	require.ErrorAs(t, err, &tm)
	require.GreaterOrEqual(t, time.Since(start), d, "a fault's answer also comes after the latency")

	// 20 requests at once wait together, not one after another: when the
	// first answer comes back (a whole latency after its request), every
	// one of the 20 messages has been processed (each half a latency after
	// its request); one after another, only the first would have been.
	const together = 2 * time.Second
	emu.SetLatency(together)
	answered := make(chan int, 20)
	errs := make([]error, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, errs[i] = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(100 + i), Text: "together"})
			answered <- i
		})
	}
	<-answered
	processed := 0
	for i := range 20 {
		processed += len(emu.Messages(int64(100 + i)))
	}
	require.Equal(t, 20, processed, "all 20 processed by the first answer")
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}

	// Changed at run time, both ways: at a latency of a minute a client
	// that waits 100 ms gives up; switched off, a request answers at once
	// (a client that waits 30 s, half the minute it would wait with it on).
	emu.SetLatency(time.Minute)
	sctx, scancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer scancel()
	_, err = b.GetMe(sctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "latency switched on")
	emu.SetLatency(0)
	qctx, qcancel := context.WithTimeout(ctx, 30*time.Second)
	defer qcancel()
	_, err = b.GetMe(qctx)
	require.NoError(t, err, "latency switched off")
}

// TestFaultUntilLastsASpanOfTime: a fault armed Until a time on the
// emulator's clock fails every matching request before it, none after, and
// is disarmed then; a fault without Expires is untouched.
func TestFaultUntilLastsASpanOfTime(t *testing.T) {
	ctx := testCtx(t)
	clk := newFakeClock()
	emu := testkit.NewEmulator(t, testkit.Unlimited("injected faults, not the limiter's 429s"), tgemu.WithAllowAnyChat(), tgemu.WithClock(clk.Now))
	b := newBot(t, emu)
	emu.InjectFault(tgemu.BadGateway().For("sendMessage").Until(clk.Now().Add(2 * time.Second)).Times(-1))
	emu.InjectFault(tgemu.InternalServerError().For("getMe").Times(-1))

	steps := []struct {
		advance time.Duration
		fail    bool
	}{
		{0, true},
		{time.Second, true},
		{999 * time.Millisecond, true},
		{time.Millisecond, false}, // at Expires: over
		{time.Hour, false},
	}
	for i, st := range steps {
		clk.Advance(st.advance)
		err := sendErr(ctx, b, 1)
		if st.fail {
			require.Error(t, err, "step %d", i)
		} else {
			require.NoError(t, err, "step %d", i)
		}
	}
	require.Equal(t, 1, emu.PendingFaults(), "the expired fault is disarmed, the other kept")
	_, err := b.GetMe(ctx)
	require.Error(t, err, "the fault without Expires still applies")
}

// TestJitteredLatencyVariesPerRequestAroundItsMean: with ±50% on 200 ms,
// every answer takes at least 100 ms (the shortest both ways can be) and
// 20 requests one after another do not all take the same time (a steady
// latency would: their spread stays within the host's noise, about 20 ms on a busy
// 2-CPU host, where ±50% spreads 20 answers over about 150 ms).
func TestJitteredLatencyVariesPerRequestAroundItsMean(t *testing.T) {
	const d = 200 * time.Millisecond
	ctx := testCtx(t)
	emu := testkit.NewEmulator(t, tgemu.WithLatency(d), tgemu.WithJitter(0.5), tgemu.WithAllowAnyChat())
	b := newBot(t, emu)
	var took []time.Duration
	for i := range 20 {
		start := time.Now()
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(1 + i), Text: "jitter"})
		require.NoError(t, err)
		took = append(took, time.Since(start))
		require.GreaterOrEqual(t, took[i], d/2, "no answer before half the latency")
	}
	require.Greater(t, slices.Max(took)-slices.Min(took), 60*time.Millisecond, "the latency varies per request: %v", took)
}
