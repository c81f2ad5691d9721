package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// A bot of TestTwoBotsShareOneClusterEachInItsOwnSlot: its harness (its
// own emulator, so its own token and chats), its VALKEY_KEY_TAG and its
// user's chat.
type clusterBot struct {
	h    *harness
	tag  string
	chat int64
	run  *running
}

// TestTwoBotsShareOneClusterEachInItsOwnSlot: two bots (two emulators, two
// tokens) on one three-primary Valkey Cluster, VALKEY_KEY_TAG bot-1 and
// bot-2, whose slots (CLUSTER KEYSLOT) are on different primaries. Both
// run at once, each holding its own poller lease, and each does the same
// things in its own chats: /start from a user and from the admin, /play,
// /weight, a broadcast sent and delivered, /healthz. Then a SCAN of every
// node finds every key under one of the two tags, each tag's keys all on
// the primary of its slot, the same keys (by kind) and as many of them
// under both tags, and each bot's audience holding only its own chats.
// Last, with the first bot stopped, the second handles more (a new chat,
// another broadcast): not one key of the first appears, goes or changes
// (DUMP) meanwhile.
func TestTwoBotsShareOneClusterEachInItsOwnSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := valkeytest.StartClusterWith(t, valkeytest.ClusterOptions{Primaries: 3})
	c := srv.Client(t)

	// Two user chats whose buckets (chat id mod 1,024 and mod 4,096) are
	// the same, so both bots write keys of the same names but the tag.
	bots := []*clusterBot{{tag: "bot-1", chat: 700_001}, {tag: "bot-2", chat: 700_001 + 4096}}
	primaries := map[string]string{} // tag -> the address of its slot's primary
	for _, b := range bots {
		primary, _, err := srv.Owner(ctx, c, "{"+b.tag+"}:x")
		if !errors.Is(err, valkeyserver.ErrNoReplica) { // no replicas here
			require.NoError(t, err)
		}
		require.NotNil(t, primary)
		primaries[b.tag] = primary.Addr
	}
	require.NotEqual(t, primaries["bot-1"], primaries["bot-2"], "the two tags' slots are on different primaries")

	for i, b := range bots {
		token := fmt.Sprintf("%d:AAclusterTestTokenOfBot%dxxxxxxxx", 100_000_001+i, i+1)
		b.h = newHarnessEmu(t, []tgemu.Option{tgemu.WithToken(token)}, "VALKEY_KEY_TAG="+b.tag)
		b.h.onServer(srv)
		b.h.tag = b.tag
		b.run = b.h.start(nil)
	}
	for _, b := range bots {
		b.h.waitLeader(b.run) // each bot polls: two leases, not one to share
	}
	for _, b := range bots {
		require.NotEmpty(t, b.h.ask(0, user(b.chat, "U"), "/start"))
		require.NotEmpty(t, b.h.ask(0, user(adminID, "Admin"), "/start"))
	}
	for _, b := range bots {
		exercise(t, b, "📣 one")
	}
	for _, b := range bots {
		for _, m := range b.h.emu.AllMessages() {
			require.Contains(t, []int64{b.chat, adminID}, m.ChatID, "bot %s sends only to its own chats", b.tag)
		}
		b.run.stop()
	}

	keys := scanNodes(t, srv)
	byTag := map[string][]string{}
	for node, ks := range keys {
		for _, k := range ks {
			tag := tagOf(k)
			require.Contains(t, primaries, tag, "key %q carries one of the bots' tags", k)
			require.Equal(t, primaries[tag], node, "key %q is on the primary of its tag's slot", k)
			byTag[tag] = append(byTag[tag], k)
		}
	}
	kinds := map[string][]string{}
	for _, b := range bots {
		kinds[b.tag] = keyKinds(t, c, b, byTag[b.tag])
		audience, err := chats.NewAudience(c, b.tag).Chats(ctx)
		require.NoError(t, err)
		sort.Slice(audience, func(i, j int) bool { return audience[i] < audience[j] })
		require.Equal(t, []int64{adminID, b.chat}, audience, "bot %s's audience is its own chats", b.tag)
	}
	t.Logf("keys per tag: %d / %d, of which kept a minute or more %d / %d: %s", len(byTag["bot-1"]), len(byTag["bot-2"]),
		len(kinds["bot-1"]), len(kinds["bot-2"]), strings.Join(kinds["bot-1"], " "))
	// Each bot wrote its own state under its own tag (which keys with a
	// short life are still there when it stops depends on the host's
	// pace: a progress edit, a pace log; so the core kinds are compared,
	// not every key; a key written under the other bot's tag is the
	// DUMP check's below).
	for _, b := range bots {
		for _, kind := range []string{":app:audit", ":app:in:offset", ":s:weight", ":g:game:<chat>", ":n:bc:<id>", ":app:bcp:<id>"} {
			require.Contains(t, kinds[b.tag], kind, "bot %s wrote its %s under its own tag", b.tag, kind)
		}
	}

	// The first bot stopped, the second goes on: a new chat, a broadcast.
	before := dumpTag(t, c, srv, "bot-1")
	second := bots[1]
	second.run = second.h.start(nil)
	second.h.waitLeader(second.run)
	require.NotEmpty(t, second.h.ask(0, user(second.chat+4096, "V"), "/start"))
	sendBroadcast(t, second, "📣 two", 3)
	second.run.stop()
	after := dumpTag(t, c, srv, "bot-1")
	for k, v := range before {
		if v.ttl == -1 || v.ttl >= 60_000 {
			require.Contains(t, after, k, "the second bot deleted no key of the first")
			require.True(t, v.dump == after[k].dump, "the second bot changed no key of the first: %s", k)
		}
	}
	for k := range after {
		require.Contains(t, before, k, "the second bot wrote no key under the first's tag")
	}
}

// exercise has bot b do one of everything that writes keys: /play (a
// game, its board), /weight (the weights, the audit), a broadcast to its
// two chats (its preview, progress, copies), /healthz (the probe).
func exercise(t *testing.T, b *clusterBot, text string) {
	t.Helper()
	h := b.h
	h.say(0, user(b.chat, "U"), "/play")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, h.emu.WaitUntil(ctx, func() bool { _, ok := h.board(b.chat); return ok }), "bot %s's board", b.tag)
	require.Contains(t, h.ask(0, user(adminID, "Admin"), fmt.Sprintf("/weight %d 3", b.chat)), "3")
	sendBroadcast(t, b, text, 2)
	code, _ := h.get(b.run, "/healthz")
	require.Equal(t, http.StatusOK, code)
}

// sendBroadcast sends text to b's audience of n chats and waits until it is
// done.
func sendBroadcast(t *testing.T, b *clusterBot, text string, n int) {
	t.Helper()
	h := b.h
	pv, buttons := h.broadcastPreview(text)
	_, toast := h.tapAdmin(pv.ID, buttons["✅ Send"])
	require.Equal(t, fmt.Sprintf("📣 Sending to %d chats.", n), toast)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	done := fmt.Sprintf("✅ Broadcast done: %d sent", n)
	require.NoError(t, h.emu.WaitUntil(ctx, func() bool {
		for _, m := range h.progressMsgs() {
			if strings.HasPrefix(m.CurrentText(), done) {
				return true
			}
		}
		return false
	}), "bot %s's broadcast is done", b.tag)
}

// scanNodes returns every key of every node of srv (SCAN on each), by
// node address.
func scanNodes(t *testing.T, srv *valkeytest.Server) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, n := range srv.Nodes() {
		nc := valkeytest.NodeClient(t, n)
		var cursor uint64
		for {
			e, err := nc.Do(context.Background(), nc.B().Scan().Cursor(cursor).Count(1000).Build()).AsScanEntry()
			require.NoError(t, err)
			out[n.Addr] = append(out[n.Addr], e.Elements...)
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	return out
}

// tagOf is the hash tag of key k ("{tag}:..."), or "" when k has none.
func tagOf(k string) string {
	rest, ok := strings.CutPrefix(k, "{")
	if !ok {
		return ""
	}
	tag, _, ok := strings.Cut(rest, "}")
	if !ok {
		return ""
	}
	return tag
}

// keyKinds returns the kinds of b's keys that live a minute or more (no
// expiry, or more than a minute left; the others are send logs, leases
// and probes that come and go with time): each name with its tag cut and
// every segment that is b's user chat or an id written as <id>, sorted,
// with repeats (so two bots that did the same have equal lists).
func keyKinds(t *testing.T, c valkey.Client, b *clusterBot, keys []string) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		ttl, err := c.Do(context.Background(), c.B().Pttl().Key(k).Build()).AsInt64()
		require.NoError(t, err)
		if ttl != -1 && ttl < 60_000 {
			continue
		}
		segs := strings.Split(strings.TrimPrefix(k, "{"+b.tag+"}"), ":")
		for i, s := range segs {
			if s == strconv.FormatInt(b.chat, 10) {
				segs[i] = "<chat>"
			} else if len(s) >= 16 { // job, broadcast and preview ids
				segs[i] = "<id>"
			}
		}
		out = append(out, strings.Join(segs, ":"))
	}
	sort.Strings(out)
	return out
}

// dumped is a key's serialized value (DUMP) and its time to live (PTTL,
// ms; -1: none).
type dumped struct {
	dump string
	ttl  int64
}

// dumpTag returns every key under tag (SCAN of every node) with its value
// and time to live (a key that expired between the SCAN and the DUMP is
// left out).
func dumpTag(t *testing.T, c valkey.Client, srv *valkeytest.Server, tag string) map[string]dumped {
	t.Helper()
	ctx := context.Background()
	out := map[string]dumped{}
	for _, ks := range scanNodes(t, srv) {
		for _, k := range ks {
			if tagOf(k) != tag {
				continue
			}
			v, err := c.Do(ctx, c.B().Dump().Key(k).Build()).ToString()
			if valkey.IsValkeyNil(err) {
				continue
			}
			require.NoError(t, err)
			ttl, err := c.Do(ctx, c.B().Pttl().Key(k).Build()).AsInt64()
			require.NoError(t, err)
			out[k] = dumped{dump: v, ttl: ttl}
		}
	}
	return out
}

// TestASecondBotOnAnotherBotsTagRefusesToStart: the first bot to learn its
// identity owns its VALKEY_KEY_TAG ({T}:app:owner); a second bot (another
// token) configured with the same tag stops at start with a configuration
// error naming VALKEY_KEY_TAG (exit 2), writing no update of its own, while
// the first keeps running and may restart on its tag.
func TestASecondBotOnAnotherBotsTagRefusesToStart(t *testing.T) {
	t.Parallel()
	first := newHarness(t)
	r := first.start(nil)
	first.waitLeader(r)
	require.NotEmpty(t, first.ask(0, user(801, "U"), "/start"))

	second := newHarnessEmu(t, []tgemu.Option{tgemu.WithToken("200000002:AAsecondBotOnTheSameTagxxxxxxxxxx")}, "VALKEY_KEY_TAG="+first.tag)
	err := second.runUntilError(nil)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "VALKEY_KEY_TAG", ce.Var)
	require.Contains(t, ce.Want, "belong to another bot")
	require.Contains(t, second.logs.String(), "another bot owns this key namespace; stopping")
	for _, rq := range second.emu.Requests() {
		require.NotEqual(t, "getupdates", strings.ToLower(rq.Method), "the second bot fetched no update")
	}

	require.NotEmpty(t, first.ask(0, user(801, "U"), "/help"), "the first bot runs on")
	r.stop()
	r = first.start(nil)
	first.waitLeader(r)
	require.NotEmpty(t, first.ask(0, user(801, "U"), "/help"), "and restarts on its own tag")
}
