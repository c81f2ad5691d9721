package chats

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/chatstate"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// BenchmarkChatBookkeeping measures what recording a chat's name (the
// chat directory's EVAL of chatname.lua, sent in the update's bookkeeping
// pipeline) adds to a handled update's chat bookkeeping on the server:
// server time per update (INFO commandstats usec, the script's own
// commands included) without it, with the EVAL on every update (the name
// unchanged, so the script only reads), and as chatMiddleware sends it
// (only when this process has not recorded that name: the steady state
// sends nothing), in alternated windows of 2,000 updates from 200 chats on
// a dedicated server; the median of 7 windows each and the ratios to the
// baseline without. The round trips are the same (one pipeline).
//
// Run: go test -run '^$' -bench ChatBookkeeping -benchtime 1x ./internal/chats/
func BenchmarkChatBookkeeping(b *testing.B) {
	ctx := context.Background()
	srv := valkeytest.Start(b, valkeytest.Options{})
	c := srv.Client(b)
	keys := NewKeys("bench")
	dir, err := NewDirectory(c, keys.tag)
	require.NoError(b, err)
	aud := NewAudience(c, keys.tag)
	chats := chatstate.New(c, "bench", time.Hour)
	const perWindow, nChats, windows = 2000, 200, 7
	usec := func() float64 {
		total := 0.0
		for name, st := range valkeytest.CommandStats(ctx, b, c) {
			if name != "info" {
				total += st.Usec
			}
		}
		return total
	}
	const (
		none = iota
		always
		cached
	)
	window := func(mode int) float64 {
		before := usec()
		for i := range perWindow {
			chat := int64(1000 + i%nChats)
			n := Name{Title: "Player " + strconv.FormatInt(chat, 10), Username: "p" + strconv.FormatInt(chat, 10)}
			also := []valkey.Completed{aud.AddCmd(chat)}
			send := mode == always || (mode == cached && !dir.unchanged(chat, n))
			if send {
				also = append(also, dir.record(chat, n))
			}
			require.NoError(b, chats.MarkActiveWith(ctx, chat, also...))
			if send {
				dir.remember(chat, n)
			}
		}
		return (usec() - before) / perWindow
	}
	window(always) // the names recorded once: the steady state follows
	runs := make([][]float64, 3)
	for range windows {
		for mode := range runs {
			runs[mode] = append(runs[mode], window(mode))
		}
	}
	med := make([]float64, 3)
	for mode, r := range runs {
		slices.Sort(r)
		med[mode] = r[windows/2]
	}
	b.ReportMetric(med[none], "server-us/update-without-name")
	b.ReportMetric(med[always], "server-us/update-eval-every-update")
	b.ReportMetric(med[cached], "server-us/update-as-sent")
	b.Logf("chat bookkeeping, server µs per update (median of %d windows of %d): without the name %.2f; EVAL on every update %.2f (x%.1f); as chatMiddleware sends it %.2f (x%.2f)",
		windows, perWindow, med[none], med[always], med[always]/med[none], med[cached], med[cached]/med[none])
}

// BenchmarkChatFind measures the console's search by name (Directory.Find,
// 10 results) over 100,000 chats named "Player <n>" (@p<n>): the server
// time per search (INFO commandstats usec of zrange and hget), with the
// index in IndexBuckets buckets as Find reads it, and, as the
// baseline in the same run, with the same members in the one sorted set
// kept before the buckets (a skiplist, searched alone: O(log chats + n));
// the median of 7 alternated windows of 20 searches, and their bytes per
// chat (MEMORY USAGE of the index keys).
//
// Run: go test -run '^$' -bench ChatFind -benchtime 1x ./internal/chats/
func BenchmarkChatFind(b *testing.B) {
	ctx := context.Background()
	srv := valkeytest.Start(b, valkeytest.Options{})
	c := srv.Client(b)
	buckets, err := NewDirectory(c, "bench")
	require.NoError(b, err)
	one, err := NewDirectory(c, "one")
	require.NoError(b, err)
	const chats, perWindow, windows = 100_000, 20, 7
	for first := 0; first < chats; first += 1000 {
		cmds := make(valkey.Commands, 0, 2000)
		for i := first; i < first+1000; i++ {
			chat := int64(1_000_000 + i)
			n := Name{Title: "Player " + strconv.Itoa(i), Username: "p" + strconv.Itoa(i)}
			cmds = append(cmds, buckets.record(chat, n))
			id := strconv.FormatInt(chat, 10)
			z := c.B().Zadd().Key(one.keys.LegacyIndex()).ScoreMember()
			for _, k := range searchKeys(n) {
				z = z.ScoreMember(0, member(k, id))
			}
			cmds = append(cmds, z.Build(), c.B().Hset().Key(one.keys.LegacyName()).FieldValue().FieldValue(id, n.shown()).Build())
		}
		for _, r := range c.DoMulti(ctx, cmds...) {
			require.NoError(b, r.Error())
		}
	}
	usec := func() float64 {
		return valkeytest.UsecOf(valkeytest.CommandStats(ctx, b, c), "zrange", "hget")
	}
	q := 0
	window := func(d *Directory) float64 {
		before := usec()
		for range perWindow {
			q++
			found, err := d.Find(ctx, "player "+strconv.Itoa(q%1000), 10)
			require.NoError(b, err)
			require.NotEmpty(b, found)
		}
		return (usec() - before) / perWindow
	}
	window(buckets)
	var inBuckets, inOne []float64
	for range windows {
		inOne = append(inOne, window(one))
		inBuckets = append(inBuckets, window(buckets))
	}
	slices.Sort(inBuckets)
	slices.Sort(inOne)
	mb, mo := inBuckets[windows/2], inOne[windows/2]
	bytesOf := func(keys ...string) float64 {
		total := 0.0
		for _, k := range keys {
			n, err := c.Do(ctx, c.B().MemoryUsage().Key(k).Samples(0).Build()).AsInt64()
			if err == nil {
				total += float64(n)
			}
		}
		return total / chats
	}
	var idx []string
	for bk := range int64(IndexBuckets) {
		idx = append(idx, buckets.keys.IndexBucket(bk))
	}
	bb, bo := bytesOf(idx...), bytesOf(one.keys.LegacyIndex())
	b.ReportMetric(mo, "server-us/search-one-set")
	b.ReportMetric(mb, "server-us/search-buckets")
	b.ReportMetric(bo, "index-B/chat-one-set")
	b.ReportMetric(bb, "index-B/chat-buckets")
	b.Logf("chat search over %d chats (3 members each), server µs per search (median of %d windows of %d): one sorted set %.1f, %d buckets %.1f (x%.1f); index bytes per chat %.1f vs %.1f",
		chats, windows, perWindow, mo, IndexBuckets, mb, mb/mo, bo, bb)
}
