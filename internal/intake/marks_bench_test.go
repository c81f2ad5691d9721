package intake

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// BenchmarkMarkHandled measures the server time of an update's finish
// (done.lua, one EVALSHA per handled update, as MarkHandled sends it for
// an update fetched by getUpdates: no finished set) with the handled marks
// of 100,000 chats in buckets (Keys.Done: ChatBuckets listpack hashes) and,
// as the baseline in the same run, in one hash of every chat (the layout
// before the buckets: a hash table), on a dedicated server: cmdstat_evalsha
// usec per call (the script's own commands included), in alternated
// windows of 2,000 finishes on random chats, the median of 7 windows each
// and the ratio to the baseline. The round trips are the same (one call).
//
// Run: go test -run '^$' -bench MarkHandled -benchtime 1x ./internal/intake/
func BenchmarkMarkHandled(b *testing.B) {
	ctx := context.Background()
	srv := valkeytest.Start(b, valkeytest.Options{})
	c := srv.Client(b)
	const chats, perWindow, windows = 100_000, 2000, 7
	in := NewInbox(c, nil, "bench")
	one := "{bench}:app:in:one"
	for first := 0; first < chats; first += 1000 {
		cmds := make(valkey.Commands, 0, 2000)
		for i := first; i < first+1000; i++ {
			lane := strconv.Itoa(1_000_000 + i)
			cmds = append(cmds,
				c.B().Hset().Key(in.keys.Done(lane)).FieldValue().FieldValue(lane, "0:1").Build(),
				c.B().Hset().Key(one).FieldValue().FieldValue(lane, "0:1").Build())
		}
		for _, r := range c.DoMulti(ctx, cmds...) {
			require.NoError(b, r.Error())
		}
	}
	enc, err := c.Do(ctx, c.B().ObjectEncoding().Key(in.keys.Done("1000000")).Build()).ToString()
	require.NoError(b, err)
	require.Equal(b, "listpack", enc)
	usec := func() (float64, float64) {
		st := valkeytest.CommandStats(ctx, b, c)["evalsha"]
		return st.Calls, st.Usec
	}
	id := int64(1)
	window := func(buckets bool) float64 {
		c0, u0 := usec()
		for range perWindow {
			id++
			lane := strconv.Itoa(1_000_000 + rand.IntN(chats))
			done := in.keys.Done(lane)
			if !buckets {
				done = one
			}
			keys := []string{done, in.keys.Recorded(), in.keys.Journal(id), in.keys.Seen(lane), in.keys.LegacyFloor(), in.keys.LegacyDone()}
			args := []string{lane, "0", strconv.FormatInt(id, 10), "job", "1", seenMember(0, id),
				strconv.Itoa(SeenCap), strconv.Itoa(int(SeenTTL / time.Second)), "1"}
			require.NoError(b, in.fin.Exec(ctx, c, keys, args).Error())
		}
		c1, u1 := usec()
		require.InDelta(b, perWindow, c1-c0, 1)
		return (u1 - u0) / (c1 - c0)
	}
	window(true)
	window(false)
	var bucketed, single []float64
	for range windows {
		single = append(single, window(false))
		bucketed = append(bucketed, window(true))
	}
	slices.Sort(bucketed)
	slices.Sort(single)
	mb, ms := bucketed[windows/2], single[windows/2]
	b.ReportMetric(ms, "server-us/finish-one-hash")
	b.ReportMetric(mb, "server-us/finish-buckets")
	b.ReportMetric(mb/ms, "buckets/one-hash")
	b.Logf("an update's finish (done.lua), server µs per call, median of %d windows of %d on %d chats: marks in one hash %.2f, in %d buckets %.2f (x%.2f)",
		windows, perWindow, chats, ms, ChatBuckets, mb, mb/ms)
}
