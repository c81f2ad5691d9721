package notifier_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// listAudience is an Audience over a list of chats in Valkey-free memory
// (the walk's contract: a step after the cursor, none twice; a chat added
// joins the end of the list, ahead of any cursor); the app's audience
// over its Valkey buckets is internal/chats' Audience, tested with the
// whole bot in internal/app.
type listAudience struct {
	mu    sync.Mutex
	chats []int64
}

func newListAudience(chats []int64) *listAudience {
	return &listAudience{chats: slices.Clone(chats)}
}

// add appends chats to the audience (they join during a walk).
func (a *listAudience) add(chats ...int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.chats = append(a.chats, chats...)
}

func (a *listAudience) at(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	return strconv.Atoi(cursor)
}

func (a *listAudience) Walk(_ context.Context, cursor string, max int) ([]int64, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i, err := a.at(cursor)
	if err != nil {
		return nil, "", err
	}
	end := min(i+max, len(a.chats))
	next := strconv.Itoa(end)
	if end == len(a.chats) {
		next = ""
	}
	return slices.Clone(a.chats[i:end]), next, nil
}

func (a *listAudience) Remaining(_ context.Context, cursor string) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i, err := a.at(cursor)
	return len(a.chats) - i, err
}

func (a *listAudience) Size(ctx context.Context) (int, error) { return a.Remaining(ctx, "") }

func (a *listAudience) Knows(_ context.Context, chat int64) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Contains(a.chats, chat), nil
}

// lazyRig is a notifier on a store without rate limits, a filler over an
// audience of chats 1..n, and a drain that plays the worker: claims copies,
// expands them, acks them and records them sent.
type lazyRig struct {
	t      *testing.T
	c      valkey.Client
	tag    string
	n      *notifier.Notifier
	f      *notifier.Filler
	aud    *listAudience
	got    map[int64][]string // chat -> texts received
	queues map[string]int     // copies delivered per queue
}

func newLazyRig(t *testing.T, chats []int64, cfg notifier.FillConfig) *lazyRig {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	tag := valkeytest.Namespace(t)
	s, err := notifier.NewStore(c, notifier.Limits{}, 0, lanes.WithTag(tag))
	require.NoError(t, err)
	n, err := notifier.New(c, s, notifier.Config{})
	require.NoError(t, err)
	aud := newListAudience(chats)
	f, err := n.NewFiller(aud, cfg)
	require.NoError(t, err)
	return &lazyRig{t: t, c: c, tag: tag, n: n, f: f, aud: aud, got: map[int64][]string{}, queues: map[string]int{}}
}

// sendThenFill fills and delivers until n copies are sent, then fills the
// window once more: copies wait on their lanes with n sent.
func (r *lazyRig) sendThenFill(n int) {
	r.t.Helper()
	for sent := 0; sent < n; {
		_, err := r.f.Fill(r.t.Context())
		require.NoError(r.t, err)
		sent += r.deliver(n - sent)
	}
	_, err := r.f.Fill(r.t.Context())
	require.NoError(r.t, err)
}

// deliver claims up to max copies (any queue) and settles each as the
// worker does; it returns how many it delivered.
func (r *lazyRig) deliver(max int) int {
	ctx := r.t.Context()
	done := 0
	for done < max {
		cl, err := r.n.Store().Claim(ctx, lanes.ClaimRequest{Queues: tgjob.AllQueues(), Lease: time.Minute, Max: 100})
		require.NoError(r.t, err)
		if len(cl.Jobs) == 0 {
			return done
		}
		for _, j := range cl.Jobs {
			p, err := tgjob.Decode(j.Payload)
			require.NoError(r.t, err)
			require.True(r.t, p.IsCopy(), "a lazy copy carries no text: %s", j.Payload)
			full, err := r.n.ExpandCopy(ctx, p)
			require.NoError(r.t, err)
			chat, err := tgjob.ChatID(j.Group)
			require.NoError(r.t, err)
			r.got[chat] = append(r.got[chat], full.Text)
			r.queues[j.Queue]++
			tally, err := r.n.SentTally(p.Broadcast, false)
			require.NoError(r.t, err)
			require.NoError(r.t, r.n.Store().Ack(ctx, j.Lease, lanes.Counting(tally)))
			done++
		}
	}
	return done
}

func chatsUpTo(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

func (r *lazyRig) pendingCopies() int {
	total := 0
	for _, q := range tgjob.AllQueues() {
		total += pending(r.t, r.n, q)
	}
	return total
}

// A lazy broadcast reaches every chat of its audience exactly once, a text
// of two parts in order, with never more copies on the lanes than its
// window (the queue's rate × Lead, at least a step) plus one step; chats
// marked inactive are left out and counted as skipped (not failed); a
// chat that migrated goes to its new id unless the audience has that one;
// the counts end at Sent = Total.
func TestLazyBroadcastReachesEachChatOnceAWindowAhead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	chats := chatsUpTo(5000)
	chats = append(chats, 7001, 7002) // migrated: 7001 -> 3 (known), 7002 -> 9002 (unknown)
	const step, rate, lead = 100, 50, time.Second
	r := newLazyRig(t, chats, notifier.FillConfig{StepChats: step, Rates: map[string]int{tgjob.QueueNotify: rate}, Lead: lead})
	cs := r.n.Chats()
	require.NoError(t, cs.SetAlias(ctx, 7001, 3))
	require.NoError(t, cs.SetAlias(ctx, 7002, 9002))
	for _, c := range []int64{10, 20, 30} {
		require.NoError(t, cs.MarkInactive(ctx, c))
	}
	text := strings.Repeat("a", 4096) + "tail"
	id, err := r.f.Start(ctx, notifier.Message{Text: text}, notifier.Plan{})
	require.NoError(t, err)
	p, err := r.n.Progress(ctx, id)
	require.NoError(t, err)
	require.True(t, p.Lazy && p.Walking)
	require.Equal(t, (len(chats)-3)*2, p.Total, "the plan: the audience without its inactive chats, two parts each")
	require.Positive(t, r.pendingCopies(), "Start made the first step")
	window := max(step*2, rate*int(lead.Seconds()))
	peak := 0
	for range 10_000 {
		_, err := r.f.Fill(ctx)
		require.NoError(t, err)
		peak = max(peak, r.pendingCopies())
		if r.deliver(37) == 0 {
			if p, err = r.n.Progress(ctx, id); err == nil && p.Done() {
				break
			}
		}
	}
	require.NoError(t, err)
	require.True(t, p.Done(), "%+v", p)
	require.LessOrEqual(t, peak, window+step*2, "copies on the lanes never beyond the window and a step")
	for _, c := range chats {
		switch c {
		case 10, 20, 30:
			require.Empty(t, r.got[c], "inactive chat %d skipped", c)
		case 7001, 7002:
			require.Empty(t, r.got[c], "migrated chat %d sent to its new id", c)
		default:
			require.Equal(t, []string{strings.Repeat("a", 4096), "tail"}, r.got[c], "chat %d: both parts, in order, once", c)
		}
	}
	require.Len(t, r.got[9002], 2, "a migrated chat's new id, unknown to the audience, gets the copy")
	require.Equal(t, len(chats)-3-1, len(r.got), "every other chat once")
	require.Equal(t, 2*(len(chats)-4), p.Sent)
	require.Equal(t, p.Sent, p.Total, "walked: Total is the copies made")
	require.Equal(t, 6, p.Skipped, "3 inactive chats × 2 parts")
	require.Empty(t, p.Failed, "inactive chats are not failures")
	require.Zero(t, r.pendingCopies())
}

// A Start that fails leaves nothing behind, so repeating it with its key
// begins the broadcast and fills it: a failure between the record and its
// place among the broadcasts to fill left a record that was never filled,
// and the repeat, finding the key, started nothing (chaos seed 28: a Send
// tap's Start cut by a Valkey restart, 5,000 chats without a copy). The
// failure is made real: the broadcasts to fill's key is a string
// (WRONGTYPE) for the first call.
func TestAStartThatFailedLeavesNothingSoItsRepeatWithTheKeyIsFilled(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	chats := chatsUpTo(300)
	r := newLazyRig(t, chats, notifier.FillConfig{StepChats: 100, Rates: map[string]int{tgjob.QueueNotify: 1000}, Lead: time.Second})
	active := "{" + r.tag + "}:n:bcs"
	require.NoError(t, r.c.Do(ctx, r.c.B().Set().Key(active).Value("not a sorted set").Build()).Error())
	msg := notifier.Message{Text: "Hello", Key: "send-tap-1"}
	_, err := r.f.Start(ctx, msg, notifier.Plan{})
	require.ErrorContains(t, err, "WRONGTYPE")
	keys, err := r.c.Do(ctx, r.c.B().Keys().Pattern("{"+r.tag+"}:n:*").Build()).AsStrSlice()
	require.NoError(t, err)
	require.Equal(t, []string{active}, keys, "the failed Start wrote no record and no key")

	require.NoError(t, r.c.Do(ctx, r.c.B().Del().Key(active).Build()).Error())
	id, err := r.f.Start(ctx, msg, notifier.Plan{})
	require.NoError(t, err)
	again, err := r.f.Start(ctx, msg, notifier.Plan{})
	require.NoError(t, err)
	require.Equal(t, id, again, "a repeat after a Start that began finds it")
	var p notifier.Progress
	for range 100 {
		_, err := r.f.Fill(ctx)
		require.NoError(t, err)
		r.deliver(1000)
		if p, err = r.n.Progress(ctx, id); err == nil && p.Done() {
			break
		}
	}
	require.NoError(t, err)
	require.True(t, p.Done(), "%+v", p)
	require.Equal(t, len(chats), p.Sent)
	require.Len(t, r.got, len(chats), "every chat once")
}

// Several fillers filling one broadcast at once (processes racing, or one
// resuming another's step after a crash) make each chat's copy once: every
// step is one atomic enqueue at its cursor.
func TestLazyBroadcastFillersRacingMakeEachCopyOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	chats := chatsUpTo(3000)
	r := newLazyRig(t, chats, notifier.FillConfig{StepChats: 50, Rates: map[string]int{tgjob.QueueNotify: 1000}, Lead: time.Second})
	others := make([]*notifier.Filler, 3)
	for i := range others {
		f, err := r.n.NewFiller(r.aud, notifier.FillConfig{StepChats: 50, Rates: map[string]int{tgjob.QueueNotify: 1000}, Lead: time.Second})
		require.NoError(t, err)
		others[i] = f
	}
	id, err := r.f.Start(ctx, notifier.Message{Text: "race"}, notifier.Plan{})
	require.NoError(t, err)
	for {
		var wg sync.WaitGroup
		for _, f := range others {
			wg.Go(func() {
				_, err := f.Fill(ctx)
				require.NoError(t, err)
			})
		}
		wg.Wait()
		if r.deliver(5000) == 0 {
			p, err := r.n.Progress(ctx, id)
			require.NoError(t, err)
			if !p.Walking {
				break
			}
		}
	}
	for _, c := range chats {
		require.Equal(t, []string{"race"}, r.got[c], "chat %d once", c)
	}
	p, err := r.n.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, len(chats), p.Sent)
	require.True(t, p.Done())
}

// A stop during the walk: no copy is made after it (the window is
// cancelled, every later step refused), the copies never made count as
// cancelled, so sent + cancelled = the planned count; the broadcast leaves
// the fillers' list.
func TestLazyBroadcastStopMakesNoCopyAfter(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	chats := chatsUpTo(2000)
	r := newLazyRig(t, chats, notifier.FillConfig{StepChats: 100})
	id, err := r.f.Start(ctx, notifier.Message{Text: "stop me"}, notifier.Plan{})
	require.NoError(t, err)
	r.sendThenFill(150)
	require.Positive(t, r.pendingCopies(), "copies waiting at the stop")
	p, err := r.n.StopBroadcast(ctx, id)
	require.NoError(t, err)
	require.True(t, p.Stopped)
	require.False(t, p.Walking)
	for range 3 {
		n, err := r.f.Fill(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "nothing made after the stop")
	}
	require.Zero(t, r.deliver(10_000), "nothing left on a lane")
	p, err = r.n.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 150, p.Sent)
	require.Equal(t, len(chats), p.Total)
	require.Equal(t, len(chats), p.Sent+p.Cancelled)
	require.True(t, p.Done())
	// A second stop changes no count.
	again, err := r.n.StopBroadcast(ctx, id)
	require.NoError(t, err)
	require.Equal(t, p.Cancelled, again.Cancelled)
}

// A stop cut short (StopBroadcast's deadline, a killed process, a Valkey
// fault: here the state it leaves after its first round trip, or after
// the window's cancel too) leaves a halted paid lazy broadcast Stopped but
// not StopFinished, its counts not adding up: copies waiting on the halted
// paid queue and copies never made are counted as neither sent, failed
// nor cancelled. StopBroadcast again finishes it: nothing waits on a lane,
// the halt is lifted, Sent + Failed + Cancelled = Total with nothing in
// flight; once more changes no count (chaos seed 7: the retried Stop
// answered "already stopped … 498 cancelled of 5111, 2113 in flight").
func TestAStopCutShortIsFinishedByTheNextAndThenAddsUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		windowCancel bool // the cut came after the window's cancel
	}{
		{"cut after the stop mark", false},
		{"cut after the window's cancel", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			chats := chatsUpTo(2000)
			r := newLazyRig(t, chats, notifier.FillConfig{StepChats: 100})
			id, err := r.f.Start(ctx, notifier.Message{Text: "paid news", Paid: true}, notifier.Plan{})
			require.NoError(t, err)
			r.sendThenFill(150)
			ok, err := r.n.HaltPaid(ctx, id)
			require.NoError(t, err)
			require.True(t, ok)
			waiting := pending(t, r.n, tgjob.QueuePaid)
			require.Positive(t, waiting, "copies wait on the halted paid queue")

			// The cut-short stop: what StopBroadcast writes first (the
			// stop field and the stop key), and maybe its window's cancel.
			key := "{" + r.tag + "}:n:bc:" + id
			require.NoError(t, r.c.Do(ctx, r.c.B().Hset().Key(key).FieldValue().FieldValue("x", "1").Build()).Error())
			require.NoError(t, r.c.Do(ctx, r.c.B().Set().Key(key+":stop").Value("1").Build()).Error())
			if tc.windowCancel {
				out, err := r.c.Do(ctx, r.c.B().Zrange().Key(key+":out").Min("0").Max("-1").Build()).AsStrSlice()
				require.NoError(t, err)
				ids := make([]lanes.JobID, len(out))
				for i, s := range out {
					ids[i] = lanes.JobID(s)
				}
				res, err := r.n.Store().Cancel(ctx, tgjob.QueuePaid, ids, lanes.Tally{Key: key, Field: "c"})
				require.NoError(t, err)
				require.Equal(t, waiting, res.Cancelled)
				require.NoError(t, r.c.Do(ctx, r.c.B().Zrem().Key(key+":out").Member(out...).Build()).Error())
			}
			cut, err := r.n.Progress(ctx, id)
			require.NoError(t, err)
			require.True(t, cut.Stopped)
			require.False(t, cut.StopFinished, "cut short: not finished")
			require.Positive(t, cut.Remaining, "cut short: copies counted as in flight that no send will take")

			p, err := r.n.StopBroadcast(ctx, id)
			require.NoError(t, err)
			require.True(t, p.StopFinished)
			require.Zero(t, r.pendingCopies(), "nothing waits on a lane")
			halted, err := r.n.PaidHalted(ctx)
			require.NoError(t, err)
			require.Empty(t, halted, "the paid queue's halt is lifted")
			require.Equal(t, 150, p.Sent)
			require.Equal(t, len(chats), p.Total)
			require.Equal(t, len(chats)-150, p.Cancelled, "the waiting and the never made copies: cancelled")
			require.Zero(t, p.Remaining, "nothing in flight")
			require.True(t, p.Done())

			again, err := r.n.StopBroadcast(ctx, id)
			require.NoError(t, err)
			require.Equal(t, p, again, "a stop once more changes no count")
			require.Zero(t, r.deliver(10_000), "nothing sent after the stop")
		})
	}
}

// A scheduled broadcast makes no copy before its start; a spread one makes
// copies no faster than its rate (copies ÷ Spread) plus one step; a paid
// one with PaidMax puts that many copies on the paid queue and the rest on
// the notify queue.
func TestLazyBroadcastPlanHoldsItsStartRateAndPaidCap(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t.Run("scheduled", func(t *testing.T) {
		r := newLazyRig(t, chatsUpTo(100), notifier.FillConfig{})
		at := time.Now().Add(time.Hour)
		id, err := r.f.Start(ctx, notifier.Message{Text: "later"}, notifier.Plan{At: at})
		require.NoError(t, err)
		n, err := r.f.Fill(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Zero(t, r.pendingCopies(), "nothing before its start")
		p, err := r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.True(t, p.Scheduled(time.Now()))
		require.Equal(t, at.UnixMilli(), p.At.UnixMilli())
		p, err = r.n.StopBroadcast(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 100, p.Cancelled, "stopped before its start: every copy cancelled")
	})
	t.Run("spread", func(t *testing.T) {
		r := newLazyRig(t, chatsUpTo(10_000), notifier.FillConfig{StepChats: 10, Rates: map[string]int{tgjob.QueueNotify: 1000}})
		start := time.Now()
		id, err := r.f.Start(ctx, notifier.Message{Text: "slowly"}, notifier.Plan{Spread: 100 * time.Second}) // 100 copies/s
		require.NoError(t, err)
		for range 5 {
			_, err := r.f.Fill(ctx)
			require.NoError(t, err)
			r.deliver(10_000)
		}
		elapsed := time.Since(start)
		p, err := r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.InDelta(t, 100.0, p.Rate, 0.01)
		require.LessOrEqual(t, p.Queued, int(100*elapsed.Seconds())+10+1, "no faster than the spread allows")
		require.Positive(t, p.Queued)
	})
	t.Run("spread thin", func(t *testing.T) {
		// 10 chats over 8 h: 0.000347 copies/s, kept as such (a rate
		// rounded to 0 would read as no spread: all at once).
		// Paced again at every pass (Replan), the first copy's lead is
		// not granted again.
		for _, replan := range []time.Duration{0, time.Nanosecond} {
			r := newLazyRig(t, chatsUpTo(10), notifier.FillConfig{Replan: replan})
			id, err := r.f.Start(ctx, notifier.Message{Text: "thin"}, notifier.Plan{Spread: 8 * time.Hour})
			require.NoError(t, err)
			for range 20 {
				_, err := r.f.Fill(ctx)
				require.NoError(t, err)
			}
			p, err := r.n.Progress(ctx, id)
			require.NoError(t, err)
			require.InDelta(t, 10.0/(8*3600), p.Rate, 1e-9, "the plan holds (no chat joined): so does its pace")
			require.LessOrEqual(t, p.Queued, 1, "replan %v: one copy at the start, the next one about 48 min later", replan)
		}
	})
	t.Run("paid up to a cap", func(t *testing.T) {
		r := newLazyRig(t, chatsUpTo(1000), notifier.FillConfig{StepChats: 100})
		id, err := r.f.Start(ctx, notifier.Message{Text: "paid", Paid: true}, notifier.Plan{PaidMax: 250})
		require.NoError(t, err)
		for range 100 {
			_, err := r.f.Fill(ctx)
			require.NoError(t, err)
			r.deliver(10_000)
		}
		p, err := r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.True(t, p.Done())
		require.Equal(t, 1000, p.Sent)
		require.Equal(t, 250, r.queues[tgjob.QueuePaid], "the paid cap")
		require.Equal(t, 750, r.queues[tgjob.QueueNotify], "the rest free")
		require.Equal(t, 250, p.PaidMax)
	})
}

// Chats that join the audience during a walk, ahead of its cursor, get
// the broadcast, and the counts follow them (FillConfig.Replan): Total
// grows to the audience as it is by the walk's end, which Sent reaches;
// stopped after they joined, sent + cancelled is that larger total (the
// chats never reached are cancelled, not lost from the counts); a spread
// is paced again from the copies left and the time left, so it still ends
// on time, and once its end is near it goes at the budget's pace.
func TestLazyBroadcastCountsAndPaceFollowChatsThatJoinMidWalk(t *testing.T) {
	t.Parallel()
	cfg := notifier.FillConfig{StepChats: 50, Rates: map[string]int{tgjob.QueueNotify: 100}, Lead: time.Second, Replan: time.Nanosecond}
	fillAndDeliver := func(t *testing.T, r *lazyRig, n int) {
		for got := 0; got < n; {
			_, err := r.f.Fill(t.Context())
			require.NoError(t, err)
			d := r.deliver(n - got)
			require.Positive(t, d+r.pendingCopies(), "the walk makes copies")
			got += d
		}
	}
	t.Run("walked to the end", func(t *testing.T) {
		ctx := t.Context()
		r := newLazyRig(t, chatsUpTo(1000), cfg)
		id, err := r.f.Start(ctx, notifier.Message{Text: "joiners"}, notifier.Plan{})
		require.NoError(t, err)
		fillAndDeliver(t, r, 300)
		r.aud.add(chatsUpTo(1500)[1000:]...)
		_, err = r.f.Fill(ctx)
		require.NoError(t, err)
		p, err := r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.True(t, p.Walking)
		require.Equal(t, 1500, p.Total, "made again: the chats that joined are in the total")
		for !p.Done() {
			fillAndDeliver(t, r, 1)
			p, err = r.n.Progress(ctx, id)
			require.NoError(t, err)
		}
		require.Equal(t, 1500, p.Sent)
		require.Equal(t, 1500, p.Total)
		require.Len(t, r.got, 1500, "every chat once, the joiners too")
	})
	t.Run("stopped after chats joined", func(t *testing.T) {
		ctx := t.Context()
		r := newLazyRig(t, chatsUpTo(1000), cfg)
		id, err := r.f.Start(ctx, notifier.Message{Text: "joiners, stopped"}, notifier.Plan{})
		require.NoError(t, err)
		fillAndDeliver(t, r, 200)
		r.aud.add(chatsUpTo(1500)[1000:]...)
		_, err = r.f.Fill(ctx)
		require.NoError(t, err)
		p, err := r.n.StopBroadcast(ctx, id)
		require.NoError(t, err)
		require.True(t, p.Stopped)
		require.Zero(t, r.deliver(10_000), "none left: the stop cancelled the window")
		p, err = r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.True(t, p.Done())
		require.Equal(t, 1500, p.Total)
		require.Equal(t, p.Total, p.Sent+p.Cancelled, "every chat of the audience at the stop is sent or cancelled")
		require.Equal(t, len(r.got), p.Sent)
	})
	t.Run("spread paced again", func(t *testing.T) {
		ctx := t.Context()
		r := newLazyRig(t, chatsUpTo(1000), cfg)
		start := time.Now()
		id, err := r.f.Start(ctx, notifier.Message{Text: "joiners, spread"}, notifier.Plan{Spread: time.Hour})
		require.NoError(t, err)
		p, err := r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.InDelta(t, 1000.0/3600, p.Rate, 0.001, "1,000 copies over an hour")
		r.aud.add(chatsUpTo(3000)[1000:]...)
		for range 20 { // paced again at every pass: the first copy's lead is not granted again
			_, err = r.f.Fill(ctx)
			require.NoError(t, err)
		}
		p, err = r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 3000, p.Total)
		require.InDelta(t, float64(3000-p.Queued)/3600, p.Rate, 0.01, "the copies left over the hour left: three times the pace")
		require.LessOrEqual(t, p.Queued, 1+int(time.Since(start).Seconds()*3000/3600),
			"the first copy at the start, then no faster than 3,000 copies an hour")
	})
	t.Run("spread at its end", func(t *testing.T) {
		ctx := t.Context()
		r := newLazyRig(t, chatsUpTo(1000), cfg)
		id, err := r.f.Start(ctx, notifier.Message{Text: "spread, ending"}, notifier.Plan{Spread: time.Second})
		require.NoError(t, err)
		p, err := r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.Zero(t, p.Rate, "within a second of its end: the budget's pace")
		fillAndDeliver(t, r, 1000)
		p, err = r.n.Progress(ctx, id)
		require.NoError(t, err)
		require.True(t, p.Done())
		require.Equal(t, 1000, p.Sent)
	})
}

// Progress.InChats counts chats, as the preview does: a text of three
// parts sent to 10 chats is 10 copies, not 30 messages; a chat with a part
// still to settle stays remaining until every part settled.
func TestProgressInChatsCountsChatsNotMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   notifier.Progress
		want notifier.Progress
	}{
		{name: "one part is as is",
			in:   notifier.Progress{Parts: 1, Total: 10, Sent: 4, Remaining: 6, Failed: map[string]int{}},
			want: notifier.Progress{Parts: 1, Total: 10, Sent: 4, Remaining: 6, Failed: map[string]int{}}},
		{name: "three parts, midway",
			in:   notifier.Progress{Parts: 3, Total: 30, Queued: 30, Sent: 13, Failed: map[string]int{"forbidden": 3}, Remaining: 14},
			want: notifier.Progress{Parts: 3, Total: 10, Queued: 10, Sent: 4, Failed: map[string]int{"forbidden": 1}, Remaining: 5}},
		{name: "done",
			in:   notifier.Progress{Parts: 3, Total: 30, Queued: 30, Sent: 27, Failed: map[string]int{"forbidden": 3}, Remaining: 0},
			want: notifier.Progress{Parts: 3, Total: 10, Queued: 10, Sent: 9, Failed: map[string]int{"forbidden": 1}, Remaining: 0}},
		{name: "a last part in flight",
			in:   notifier.Progress{Parts: 2, Total: 20, Queued: 20, Sent: 19, Failed: map[string]int{}, Remaining: 1},
			want: notifier.Progress{Parts: 2, Total: 10, Queued: 10, Sent: 9, Failed: map[string]int{}, Remaining: 1}},
		{name: "stopped: cancelled and skipped in chats",
			in:   notifier.Progress{Parts: 2, Total: 20, Sent: 4, Cancelled: 16, Skipped: 6, Stopped: true, Failed: map[string]int{}},
			want: notifier.Progress{Parts: 2, Total: 10, Sent: 2, Cancelled: 8, Skipped: 3, Stopped: true, Failed: map[string]int{}}},
	} {
		require.Equal(t, tc.want, tc.in.InChats(), tc.name)
	}
}

// A lazy broadcast with texts per language gives each chat its language's
// text (FillConfig.Languages, read per step), in as many parts as the
// default; a chat of a language without a text, or of none, gets the
// default; each chat once, Sent = the copies. A language whose text splits
// into another number of parts, or texts without FillConfig.Languages,
// are refused with nothing started.
func TestLazyBroadcastGivesEachChatItsLanguagesText(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	langOf := func(c int64) string { return []string{"", "ru", "es", "fa", "en"}[c%5] }
	var calls int
	cfg := notifier.FillConfig{StepChats: 7, Rates: map[string]int{tgjob.QueueNotify: 1000}, Lead: time.Second,
		Languages: func(_ context.Context, chats []int64) ([]string, error) {
			calls++
			out := make([]string, len(chats))
			for i, c := range chats {
				out[i] = langOf(c)
			}
			return out, nil
		}}
	chats := chatsUpTo(60)
	r := newLazyRig(t, chats, cfg)
	texts := map[string]string{"ru": "Привет", "es": "Hola"}
	id, err := r.f.Start(ctx, notifier.Message{Text: "Hello"}, notifier.Plan{Texts: texts})
	require.NoError(t, err)
	for range 1000 {
		_, err := r.f.Fill(ctx)
		require.NoError(t, err)
		if r.deliver(100) == 0 && r.pendingCopies() == 0 {
			break
		}
	}
	p, err := r.n.Progress(ctx, id)
	require.NoError(t, err)
	require.True(t, p.Done(), "%+v", p)
	require.Equal(t, len(chats), p.Sent)
	for _, c := range chats {
		want := "Hello"
		if t, ok := texts[langOf(c)]; ok {
			want = t
		}
		require.Equal(t, []string{want}, r.got[c], "chat %d (%q)", c, langOf(c))
	}
	require.Positive(t, calls, "the languages are read per step")

	for _, tc := range []struct {
		name  string
		rig   *lazyRig
		texts map[string]string
	}{
		{"a language's text in two parts, the default in one", r, map[string]string{"ru": strings.Repeat("я", 4097)}},
		{"texts without FillConfig.Languages", newLazyRig(t, chats, notifier.FillConfig{}), texts},
	} {
		_, err := tc.rig.f.Start(ctx, notifier.Message{Text: "Hello", Key: tc.name}, notifier.Plan{Texts: tc.texts})
		require.ErrorIs(t, err, notifier.ErrInvalid, tc.name)
	}
}

// A copy's template is read from the server by the process's first
// ExpandCopy of its broadcast; from then on CachedCopy expands its copies
// alike without the server (the worker makes no context for them), and a
// part the template lacks is still ErrInvalid.
func TestACopysTemplateIsReadOnceThenExpandedFromTheCache(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r := newLazyRig(t, chatsUpTo(3), notifier.FillConfig{Rates: map[string]int{tgjob.QueueNotify: 30}})
	_, err := r.f.Start(ctx, notifier.Message{Text: "Hello <b>all</b>", ParseMode: "HTML"}, notifier.Plan{})
	require.NoError(t, err)
	cl, err := r.n.Store().Claim(ctx, lanes.ClaimRequest{Queues: tgjob.AllQueues(), Lease: time.Minute, Max: 100, Lanes: 3})
	require.NoError(t, err)
	require.Len(t, cl.Jobs, 3)
	var copies []tgjob.Job
	for _, j := range cl.Jobs {
		p, err := tgjob.Decode(j.Payload)
		require.NoError(t, err)
		copies = append(copies, p)
	}
	_, ok, _ := r.n.CachedCopy(copies[0])
	require.False(t, ok, "nothing cached before the first ExpandCopy")
	first, err := r.n.ExpandCopy(ctx, copies[0])
	require.NoError(t, err)
	require.Equal(t, "Hello <b>all</b>", first.Text)
	for _, p := range copies {
		want, err := r.n.ExpandCopy(ctx, p)
		require.NoError(t, err)
		got, ok, err := r.n.CachedCopy(p)
		require.True(t, ok, "cached after the first ExpandCopy")
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, p.Chat, got.Chat)
	}
	lacking := copies[0]
	lacking.Part, lacking.Parts = 2, 2
	_, ok, err = r.n.CachedCopy(lacking)
	require.True(t, ok)
	require.ErrorIs(t, err, notifier.ErrInvalid)
}

// A broadcast's window is refilled a whole step at a time: a Fill makes no
// copies while the window has room for less than a step (or half the
// window, when that is less), and one step of exactly the room once it
// has; the broadcast still ends with every chat sent once.
func TestTheFillerWaitsForRoomForAWholeStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		rate             int // the queue's budget, copies/s (Lead 1 s: the window)
		step             int // StepChats
		window, stepRoom int
	}{
		{"window of 10 steps: a whole step", 1000, 100, 1000, 100},
		{"window of one step: half of it", 50, 100, 100, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			chats := chatsUpTo(3 * tc.window)
			r := newLazyRig(t, chats, notifier.FillConfig{StepChats: tc.step, Rates: map[string]int{tgjob.QueueNotify: tc.rate}, Lead: time.Second})
			id, err := r.f.Start(ctx, notifier.Message{Text: "hello"}, notifier.Plan{})
			require.NoError(t, err)
			for range 20 {
				_, err := r.f.Fill(ctx)
				require.NoError(t, err)
			}
			require.Equal(t, tc.window, r.pendingCopies(), "the first window")
			require.Equal(t, tc.stepRoom-1, r.deliver(tc.stepRoom-1))
			added, err := r.f.Fill(ctx)
			require.NoError(t, err)
			require.Zero(t, added, "room for less than a step: no step")
			require.Equal(t, 1, r.deliver(1))
			added, err = r.f.Fill(ctx)
			require.NoError(t, err)
			require.Equal(t, tc.stepRoom, added, "room for a step: one step of it")
			require.Equal(t, tc.window, r.pendingCopies())
			var p notifier.Progress
			for range 1000 {
				_, err := r.f.Fill(ctx)
				require.NoError(t, err)
				r.deliver(tc.stepRoom / 3)
				if p, err = r.n.Progress(ctx, id); err == nil && p.Done() {
					break
				}
			}
			require.NoError(t, err)
			require.True(t, p.Done(), "%+v", p)
			require.Equal(t, len(chats), len(r.got), "every chat")
			for _, c := range chats {
				require.Len(t, r.got[c], 1, "chat %d once", c)
			}
		})
	}
}
