package app

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/chatstate"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/luascript"
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
// Run: go test -run '^$' -bench ChatBookkeeping -benchtime 1x ./internal/app/
func BenchmarkChatBookkeeping(b *testing.B) {
	ctx := context.Background()
	srv := valkeytest.Start(b, valkeytest.Options{})
	c := srv.Client(b)
	keys := keyspace{tag: "bench"}
	src, err := luaFS.ReadFile("lua/chatname.lua")
	require.NoError(b, err)
	dir := &chatDir{c: c, keys: keys, script: string(src)}
	aud := &audience{c: c, keys: keys, move: luascript.Must(luaFS, "movechats")}
	chats := chatstate.New(c, "bench", time.Hour)
	const perWindow, nChats, windows = 2000, 200, 7
	usec := func() float64 {
		info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
		require.NoError(b, err)
		total := 0.0
		for line := range strings.Lines(info) {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(k, "cmdstat_") || k == "cmdstat_info" {
				continue
			}
			for kv := range strings.SplitSeq(v, ",") {
				if name, val, _ := strings.Cut(kv, "="); name == "usec" {
					f, _ := strconv.ParseFloat(val, 64)
					total += f
				}
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
			n := chatName{Title: "Player " + strconv.FormatInt(chat, 10), Username: "p" + strconv.FormatInt(chat, 10)}
			also := []valkey.Completed{aud.addChat(chat)}
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
