package chats

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/valkey-io/valkey-go"
)

// Directory owns the chat directory: how each chat that wrote to the bot is
// named, as the bot last saw it (a group's title, a user's name and
// @username), and a lexicographic index of those names for the console's
// search ({T}:app:chatname:<b>, Buckets buckets by chat id, and
// {T}:app:chatidx:<i>, IndexBuckets; written by chatname.lua only when a
// name changes), and the one hash and sorted set kept before the buckets
// ({T}:app:chatname, {T}:app:chatidx: read, and moved by Migrate). It is
// as large as the audience, one entry per known chat (five index members
// at most: four starts of its title and its username). A bucket stays a
// listpack, a few bytes an entry, while it holds at most 512 names (hash)
// and 128 index members (sorted set) of at most 64 bytes: the name as
// shown is cut to maxShown bytes, a search key to maxKey.
type Directory struct {
	c      valkey.Client
	keys   Keys
	script string // chatname.lua's source, sent with EVAL in the update's pipeline

	// known caches the names this process recorded (chat id -> shown
	// name), so a chat's later updates send nothing: an EVAL on every
	// update cost the server 7.0 µs per update, 21 times the 0.33 µs of
	// the rest of the chat bookkeeping; sent only on a change it is 0.34
	// (BenchmarkChatBookkeeping, commandstats, median of 7 windows). At most knownMax entries (then emptied:
	// only a cache, refilled on the next update of each chat).
	mu    sync.Mutex
	known map[int64]string
}

// NewDirectory returns the chat directory kept in c under hash tag tag.
// Errors: chatname.lua missing from the embedded files (a build error).
func NewDirectory(c valkey.Client, tag string) (*Directory, error) {
	src, err := luaFS.ReadFile("lua/chatname.lua")
	if err != nil {
		return nil, fmt.Errorf("chats: chatname.lua: %w", err)
	}
	return &Directory{c: c, keys: NewKeys(tag), script: string(src)}, nil
}

// knownMax bounds Directory.known (about 100 bytes an entry).
const knownMax = 20_000

// unchanged reports whether this process already recorded chat as named n.
func (d *Directory) unchanged(chat int64, n Name) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.known[chat]
	return ok && v == n.shown()
}

// remember notes that chat is recorded as named n.
func (d *Directory) remember(chat int64, n Name) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.known == nil || len(d.known) >= knownMax {
		d.known = make(map[int64]string)
	}
	d.known[chat] = n.shown()
}

// Name is a chat's name as the directory knows it.
type Name struct {
	Title    string // a group's title, or a user's first and last name
	Username string // without the @, "" when none
}

// shown is how the console shows n: "Title (@username)".
func (n Name) shown() string {
	switch {
	case n.Username == "":
		return n.Title
	case n.Title == "":
		return "@" + n.Username
	}
	return n.Title + " (@" + n.Username + ")"
}

// searchKey is the index form of a name: lowercased, NUL-free.
func searchKey(s string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "\x00", ""))
}

// maxTitleWords is how many words of a title are searchable as a start
// (the title from each of its first maxTitleWords words on).
const maxTitleWords = 4

// searchKeys are the index forms chat n is found by: its title from each
// of its first words on ("rust lovers club", "lovers club", "club"), and its
// username.
func searchKeys(n Name) []string {
	var out []string
	words := strings.Fields(searchKey(n.Title))
	for i := range min(len(words), maxTitleWords) {
		out = append(out, strings.Join(words[i:], " "))
	}
	if k := searchKey(n.Username); k != "" {
		out = append(out, k)
	}
	return out
}

// maxShown is the most bytes of a name as shown the directory keeps (a
// longer one is cut, with "…"): Valkey keeps a hash bucket as a listpack
// only while every value is at most hash-max-listpack-value (64) bytes.
const maxShown = 64

// maxKey is the most bytes of a search key (a longer one is cut, and so is
// a query): "<key>\0<chat id>" then stays within zset-max-listpack-value
// (64 bytes) for chat ids of up to 17 characters.
const maxKey = 46

// clip returns s cut to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// shownValue is the name as shown that the directory keeps for n: at most
// maxShown bytes, without \x1f (the separator of the format before).
func shownValue(n Name) string {
	v := strings.ReplaceAll(n.shown(), "\x1f", "")
	if len(v) > maxShown {
		v = clip(v, maxShown-len("…")) + "…"
	}
	return v
}

// member is the index member of search key k of chat id.
func member(k, id string) string { return clip(k, maxKey) + "\x00" + id }

// Record returns the command recording chat as named n, for the pipeline
// of an update's chat bookkeeping (the app's chatMiddleware), and ok false
// (send nothing) when this process already recorded that name. Call
// Recorded(chat, n) once the command succeeded. The command is an EVAL of
// chatname.lua, so it needs no script load first; it writes only when the
// name changed, and moves the chat's entry of before the buckets if there
// is one.
func (d *Directory) Record(chat int64, n Name) (cmd valkey.Completed, ok bool) {
	if d.unchanged(chat, n) {
		return valkey.Completed{}, false
	}
	return d.record(chat, n), true
}

// Recorded notes that chat is recorded as named n (its Record command
// succeeded), so its later updates send nothing.
func (d *Directory) Recorded(chat int64, n Name) { d.remember(chat, n) }

// record is the command recording chat's name n, whether this process
// recorded it already or not.
func (d *Directory) record(chat int64, n Name) valkey.Completed {
	id := strconv.FormatInt(chat, 10)
	args := []string{id, shownValue(n)}
	for _, k := range searchKeys(n) {
		args = append(args, member(k, id))
	}
	return d.recordCmd(chat, args)
}

// recordCmd is chatname.lua's EVAL for chat with ARGV args.
func (d *Directory) recordCmd(chat int64, args []string) valkey.Completed {
	return d.c.B().Eval().Script(d.script).Numkeys(4).
		Key(d.keys.Name(chat), d.keys.Index(chat), d.keys.LegacyName(), d.keys.LegacyIndex()).
		Arg(args...).Build()
}

// Name returns how chat is named ("" when the bot never saw it named): its
// bucket's entry, else the entry kept before the buckets (one round trip).
func (d *Directory) Name(ctx context.Context, chat int64) (string, error) {
	names, err := d.names(ctx, []int64{chat})
	if err != nil {
		return "", fmt.Errorf("chats: chat %d name: %w", chat, err)
	}
	return names[0], nil
}

// names returns how each of chats is named ("" for none), in one round
// trip: HGET of its bucket and of the hash kept before the buckets.
func (d *Directory) names(ctx context.Context, chats []int64) ([]string, error) {
	cmds := make(valkey.Commands, 0, 2*len(chats))
	for _, chat := range chats {
		id := strconv.FormatInt(chat, 10)
		cmds = append(cmds, d.c.B().Hget().Key(d.keys.Name(chat)).Field(id).Build(),
			d.c.B().Hget().Key(d.keys.LegacyName()).Field(id).Build())
	}
	rs := d.c.DoMulti(ctx, cmds...)
	out := make([]string, len(chats))
	for i := range chats {
		for _, r := range rs[2*i : 2*i+2] {
			v, err := r.ToString()
			if valkey.IsValkeyNil(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[i] = shownOf(v)
			break
		}
	}
	return out, nil
}

// shownOf is the name as shown of a chatname field's value (the name; in
// the hash kept before the buckets, the name, \x1f, its search members, or
// the name alone before that format).
func shownOf(v string) string {
	name, _, _ := strings.Cut(v, "\x1f")
	return name
}

// indexPerRead is how many index buckets one round trip of Find searches.
const indexPerRead = 128

// Ref is a chat as the bot knows it: its id and name (title, or the
// user's name and @username; "" when never seen named).
type Ref struct {
	ID   int64
	Name string
}

// Find returns up to n chats whose title, a word of its title on, or
// username starts with prefix (case-insensitive; a leading @ is ignored;
// only the first maxKey bytes count), in name order, with their names: a
// ZRANGE BYLEX LIMIT n of every index bucket (indexPerRead a round trip)
// and of the index kept before the buckets, then one round trip for the
// names; O(buckets + n) commands, each O(its bucket) while the buckets are
// listpacks (128 members at most), O(log bucket + n) beyond.
func (d *Directory) Find(ctx context.Context, prefix string, n int) ([]Ref, error) {
	k := clip(searchKey(strings.TrimPrefix(strings.TrimSpace(prefix), "@")), maxKey)
	if k == "" || n < 1 {
		return nil, nil
	}
	search := func(key string) valkey.Completed {
		return d.c.B().Zrange().Key(key).Min("["+k).Max("["+k+"\xff").Bylex().Limit(0, int64(n)).Build()
	}
	var ms []string
	for first := int64(0); first < IndexBuckets; first += indexPerRead {
		cmds := make(valkey.Commands, 0, indexPerRead+1)
		for b := first; b < min(first+indexPerRead, IndexBuckets); b++ {
			cmds = append(cmds, search(d.keys.IndexBucket(b)))
		}
		if first == 0 {
			cmds = append(cmds, search(d.keys.LegacyIndex()))
		}
		for _, r := range d.c.DoMulti(ctx, cmds...) {
			got, err := r.AsStrSlice()
			if err != nil {
				return nil, fmt.Errorf("chats: find chat %q: %w", prefix, err)
			}
			ms = append(ms, got...)
		}
	}
	slices.Sort(ms)
	var chats []int64
	seen := map[string]bool{}
	for _, m := range ms[:min(len(ms), n)] {
		_, id, ok := strings.Cut(m, "\x00")
		chat, err := strconv.ParseInt(id, 10, 64)
		if ok && err == nil && !seen[id] {
			seen[id] = true
			chats = append(chats, chat)
		}
	}
	if len(chats) == 0 {
		return nil, nil
	}
	names, err := d.names(ctx, chats)
	if err != nil {
		return nil, fmt.Errorf("chats: find chat %q: %w", prefix, err)
	}
	out := make([]Ref, 0, len(chats))
	for i, chat := range chats {
		out = append(out, Ref{ID: chat, Name: names[i]})
	}
	return out, nil
}

// Migrate moves the chat directory kept before the buckets (the one hash
// {T}:app:chatname and sorted set {T}:app:chatidx) into the buckets, in
// steps of about migrateStep chats (HSCAN, then one pipeline of
// chatname.lua per chat, its members those of the old entry cut to maxKey,
// its name cut to maxShown), and returns how many chats it moved. A chat
// recorded in its bucket since keeps that (newer) name; its old entry is
// dropped. Safe while the bot runs and from several processes at once:
// each chat moves atomically, and the readers read both. Errors: the
// server's (what was moved stays moved).
func (d *Directory) Migrate(ctx context.Context) (int, error) {
	moved := 0
	var cursor uint64
	for {
		e, err := d.c.Do(ctx, d.c.B().Hscan().Key(d.keys.LegacyName()).Cursor(cursor).Count(migrateStep).Build()).AsScanEntry()
		if err != nil {
			return moved, fmt.Errorf("chats: move the chat directory to its buckets: %w", err)
		}
		fields := map[string]string{}
		for i := 0; i+1 < len(e.Elements); i += 2 {
			fields[e.Elements[i]] = e.Elements[i+1]
		}
		var cmds valkey.Commands
		for id, v := range fields {
			chat, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				continue // an "<id>:i" field: read with its chat's
			}
			name, ms, ok := strings.Cut(v, "\x1f")
			if !ok { // the format before: the members in "<id>:i"
				if ms, ok = fields[id+":i"]; !ok {
					ms, err = d.c.Do(ctx, d.c.B().Hget().Key(d.keys.LegacyName()).Field(id+":i").Build()).ToString()
					if err != nil && !valkey.IsValkeyNil(err) {
						return moved, fmt.Errorf("chats: move the chat directory to its buckets: %w", err)
					}
				}
			}
			args := []string{id, shownValue(Name{Title: name}), "\x01"}
			for m := range strings.SplitSeq(ms, "\x1e") {
				if k, mid, ok := strings.Cut(m, "\x00"); ok && mid == id {
					args = append(args, member(k, id))
				}
			}
			cmds = append(cmds, d.recordCmd(chat, args))
		}
		for _, r := range d.c.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return moved, fmt.Errorf("chats: move the chat directory to its buckets: %w", err)
			}
		}
		moved += len(cmds)
		if cursor = e.Cursor; cursor == 0 {
			return moved, nil
		}
	}
}
