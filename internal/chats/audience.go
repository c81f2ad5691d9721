package chats

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/luascript"
)

// Audience owns the broadcast audience, every chat that sent the bot an
// update: every Valkey command on {T}:app:chats:<b> (Buckets sets of
// decimal chat ids, by chat id: Keys.Audience) and on {T}:app:chats (the
// one set of before the buckets, read until Migrate has emptied it) is one
// of its methods, and every one returns its error.
type Audience struct {
	c    valkey.Client
	keys Keys
	move *valkey.Lua // movechats.lua
}

// NewAudience returns the broadcast audience kept in c under hash tag tag.
func NewAudience(c valkey.Client, tag string) *Audience {
	return &Audience{c: c, keys: NewKeys(tag), move: luascript.Must(luaFS, "movechats")}
}

// Add records chat as known (a broadcast reaches it).
func (s *Audience) Add(ctx context.Context, chat int64) error {
	if err := s.c.Do(ctx, s.AddCmd(chat)).Error(); err != nil {
		return fmt.Errorf("chats: record chat %d: %w", chat, err)
	}
	return nil
}

// AddCmd is Add's command (SADD to chat's bucket), for a caller that
// pipelines it with other per-update commands (the app's chatMiddleware).
func (s *Audience) AddCmd(chat int64) valkey.Completed {
	return s.c.B().Sadd().Key(s.keys.Audience(chat)).Member(strconv.FormatInt(chat, 10)).Build()
}

// bucketsPerRead is how many audience buckets one round trip of Chats
// reads (SMEMBERS each: at most set-max-intset-entries members a bucket
// while the buckets stay intsets).
const bucketsPerRead = 128

// Chats lists every chat that sent the bot an update, in ascending order:
// every bucket (bucketsPerRead SMEMBERS a round trip), and the set of
// before the buckets while it holds any (SSCAN, 1,000 a step).
func (s *Audience) Chats(ctx context.Context) ([]int64, error) {
	seen := make(map[int64]struct{})
	var out []int64
	add := func(vs []string) {
		for _, v := range vs {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil && id != 0 {
				if _, ok := seen[id]; !ok {
					seen[id] = struct{}{}
					out = append(out, id)
				}
			}
		}
	}
	for first := int64(0); first < Buckets; first += bucketsPerRead {
		cmds := make(valkey.Commands, 0, bucketsPerRead)
		for b := first; b < min(first+bucketsPerRead, Buckets); b++ {
			cmds = append(cmds, s.c.B().Smembers().Key(s.keys.AudienceBucket(b)).Build())
		}
		for _, r := range s.c.DoMulti(ctx, cmds...) {
			vs, err := r.AsStrSlice()
			if err != nil {
				return nil, fmt.Errorf("chats: known chats: %w", err)
			}
			add(vs)
		}
	}
	var cursor uint64
	for {
		e, err := s.c.Do(ctx, s.c.B().Sscan().Key(s.keys.LegacyAudience()).Cursor(cursor).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return nil, fmt.Errorf("chats: known chats: %w", err)
		}
		add(e.Elements)
		if cursor = e.Cursor; cursor == 0 {
			break
		}
	}
	slices.Sort(out)
	return out, nil
}

// IsKnown reports whether chat is in the audience (it wrote to the bot):
// in its bucket or in the set of before the buckets (one round trip).
func (s *Audience) IsKnown(ctx context.Context, chat int64) (bool, error) {
	m := strconv.FormatInt(chat, 10)
	for _, r := range s.c.DoMulti(ctx,
		s.c.B().Sismember().Key(s.keys.Audience(chat)).Member(m).Build(),
		s.c.B().Sismember().Key(s.keys.LegacyAudience()).Member(m).Build()) {
		ok, err := r.AsBool()
		if err != nil {
			return false, fmt.Errorf("chats: known chat %d: %w", chat, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// migrateStep is how many entries one step of a migration to the buckets
// moves (Audience.Migrate, Directory.Migrate).
const migrateStep = 500

// Migrate moves the chats of the audience set kept before the buckets
// ({T}:app:chats) into their buckets, in steps of about migrateStep
// (SSCAN, then movechats.lua), and returns how many it moved. Safe while
// the bot runs and from several processes at once: a chat is in the old
// set or in its bucket at every moment (each step moves its chats
// atomically), and the readers read both. A member that is not a chat id
// (none is written) is left where it is. Errors: the server's (what was
// moved stays moved).
func (s *Audience) Migrate(ctx context.Context) (int, error) {
	moved := 0
	var cursor uint64
	for {
		e, err := s.c.Do(ctx, s.c.B().Sscan().Key(s.keys.LegacyAudience()).Cursor(cursor).Count(migrateStep).Build()).AsScanEntry()
		if err != nil {
			return moved, fmt.Errorf("chats: move the audience to its buckets: %w", err)
		}
		keys := []string{s.keys.LegacyAudience()}
		var chats []string
		for _, v := range e.Elements {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil && id != 0 {
				keys = append(keys, s.keys.Audience(id))
				chats = append(chats, v)
			}
		}
		if len(chats) > 0 {
			n, err := s.move.Exec(ctx, s.c, keys, chats).AsInt64()
			if err != nil {
				return moved, fmt.Errorf("chats: move the audience to its buckets: %w", err)
			}
			moved += int(n)
		}
		if cursor = e.Cursor; cursor == 0 {
			return moved, nil
		}
	}
}

// Walk returns at most max chats of the audience after cursor, bucket by
// bucket (Bucket order, each bucket's chats in ascending order), and the
// cursor after them: "" once every bucket was read (notifier.Audience).
// A cursor is "<bucket>" (the bucket's start) or "<bucket>:<last chat
// taken>"; "" is the start, where Walk first moves the set of before the
// buckets into them (Migrate), so a walk reads the buckets only. A chat
// added behind the cursor is not returned; none is returned twice. It reads
// one bucket (SMEMBERS) a round trip, then up to walkAhead at once while
// they are small. Errors: a malformed cursor ("chats: malformed audience cursor"); the
// server's.
func (s *Audience) Walk(ctx context.Context, cursor string, max int) ([]int64, string, error) {
	b, last, hasLast, err := parseWalkCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	if cursor == "" {
		if _, err := s.Migrate(ctx); err != nil {
			return nil, "", err
		}
	}
	var out []int64
	ahead := int64(1)
	for b < Buckets && len(out) < max {
		n := min(ahead, Buckets-b)
		cmds := make(valkey.Commands, 0, n)
		for i := b; i < b+n; i++ {
			cmds = append(cmds, s.c.B().Smembers().Key(s.keys.AudienceBucket(i)).Build())
		}
		for _, r := range s.c.DoMulti(ctx, cmds...) {
			vs, err := r.AsStrSlice()
			if err != nil {
				return nil, "", fmt.Errorf("chats: walk the audience: %w", err)
			}
			ids := parseChats(vs)
			if hasLast {
				i, _ := slices.BinarySearch(ids, last+1)
				ids = ids[i:]
			}
			if room := max - len(out); len(ids) > room {
				out = append(out, ids[:room]...)
				return out, strconv.FormatInt(b, 10) + ":" + strconv.FormatInt(ids[room-1], 10), nil
			}
			out = append(out, ids...)
			b, hasLast = b+1, false
			if len(out) == max {
				break
			}
		}
		ahead = walkAhead
	}
	if b >= Buckets {
		return out, "", nil
	}
	return out, strconv.FormatInt(b, 10), nil
}

// walkAhead is how many buckets one round trip of Walk reads once the
// first bucket of a step did not fill it.
const walkAhead = 16

// parseChats returns the chat ids among vs in ascending order (members
// that are not chat ids, none written, are left out).
func parseChats(vs []string) []int64 {
	ids := make([]int64, 0, len(vs))
	for _, v := range vs {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && id != 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// parseWalkCursor splits a Walk cursor into its bucket and the last chat
// taken in it (hasLast false when none).
func parseWalkCursor(cursor string) (b, last int64, hasLast bool, err error) {
	if cursor == "" {
		return 0, 0, false, nil
	}
	bs, ls, hasLast := strings.Cut(cursor, ":")
	b, err = strconv.ParseInt(bs, 10, 64)
	if err == nil && hasLast {
		last, err = strconv.ParseInt(ls, 10, 64)
	}
	if err != nil || b < 0 || b > Buckets {
		return 0, 0, false, fmt.Errorf("chats: malformed audience cursor %q", cursor)
	}
	return b, last, hasLast, nil
}

// Size is how many chats the audience holds: the buckets' sizes (SCARD,
// one pipelined round trip) plus the set of before the buckets (its chats
// may be counted twice until Migrate ran: an estimate).
func (s *Audience) Size(ctx context.Context) (int, error) {
	cmds := make(valkey.Commands, 0, Buckets+1)
	for b := int64(0); b < Buckets; b++ {
		cmds = append(cmds, s.c.B().Scard().Key(s.keys.AudienceBucket(b)).Build())
	}
	cmds = append(cmds, s.c.B().Scard().Key(s.keys.LegacyAudience()).Build())
	total := 0
	for _, r := range s.c.DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err != nil {
			return 0, fmt.Errorf("chats: audience size: %w", err)
		}
		total += int(n)
	}
	return total, nil
}

// Remaining is how many chats a walk from cursor would still return now
// (notifier.Audience): the chats after the cursor's last one in its
// bucket (one SMEMBERS) plus the sizes of the buckets after it (SCARD),
// in one pipelined round trip; Size for "" (the start). Errors: a
// malformed cursor; the server's.
func (s *Audience) Remaining(ctx context.Context, cursor string) (int, error) {
	if cursor == "" {
		return s.Size(ctx)
	}
	b, last, hasLast, err := parseWalkCursor(cursor)
	if err != nil {
		return 0, err
	}
	cmds := make(valkey.Commands, 0, Buckets-b+1)
	first := b
	if hasLast {
		cmds = append(cmds, s.c.B().Smembers().Key(s.keys.AudienceBucket(b)).Build())
		first++
	}
	for i := first; i < Buckets; i++ {
		cmds = append(cmds, s.c.B().Scard().Key(s.keys.AudienceBucket(i)).Build())
	}
	if len(cmds) == 0 {
		return 0, nil
	}
	total := 0
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		if i == 0 && hasLast {
			vs, err := r.AsStrSlice()
			if err != nil {
				return 0, fmt.Errorf("chats: audience remaining: %w", err)
			}
			ids := parseChats(vs)
			at, _ := slices.BinarySearch(ids, last+1)
			total += len(ids) - at
			continue
		}
		n, err := r.AsInt64()
		if err != nil {
			return 0, fmt.Errorf("chats: audience remaining: %w", err)
		}
		total += int(n)
	}
	return total, nil
}

// Knows is IsKnown (notifier.Audience).
func (s *Audience) Knows(ctx context.Context, chat int64) (bool, error) { return s.IsKnown(ctx, chat) }
