package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/intake"
)

// audience owns the broadcast audience and the tracked broadcasts: every
// Valkey command on {T}:app:chats:<b> (intake.ChatBuckets sets of the chat
// ids that sent the bot an update, by chat id: keyspace.chats), on
// {T}:app:chats (the one set of before the buckets, read until Migrate has
// emptied it) and {T}:app:bc (hash: broadcast id -> tracked JSON) is one
// of its methods, and every one returns its error.
type audience struct {
	c    valkey.Client
	keys keyspace
	move *valkey.Lua // movechats.lua
}

// AddChat records chat as known (a broadcast reaches it).
func (s *audience) AddChat(ctx context.Context, chat int64) error {
	if err := s.c.Do(ctx, s.addChat(chat)).Error(); err != nil {
		return fmt.Errorf("record chat %d: %w", chat, err)
	}
	return nil
}

// addChat is AddChat's command (SADD to chat's bucket), for a caller that
// pipelines it with other per-update commands (chatMiddleware).
func (s *audience) addChat(chat int64) valkey.Completed {
	return s.c.B().Sadd().Key(s.keys.chats(chat)).Member(strconv.FormatInt(chat, 10)).Build()
}

// bucketsPerRead is how many audience buckets one round trip of Chats
// reads (SMEMBERS each: at most set-max-intset-entries members a bucket
// while the buckets stay intsets).
const bucketsPerRead = 128

// Chats lists every chat that sent the bot an update, in ascending order:
// every bucket (bucketsPerRead SMEMBERS a round trip), and the set of
// before the buckets while it holds any (SSCAN, 1,000 a step).
func (s *audience) Chats(ctx context.Context) ([]int64, error) {
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
	for first := int64(0); first < intake.ChatBuckets; first += bucketsPerRead {
		cmds := make(valkey.Commands, 0, bucketsPerRead)
		for b := first; b < min(first+bucketsPerRead, intake.ChatBuckets); b++ {
			cmds = append(cmds, s.c.B().Smembers().Key(s.keys.chatsBucket(b)).Build())
		}
		for _, r := range s.c.DoMulti(ctx, cmds...) {
			vs, err := r.AsStrSlice()
			if err != nil {
				return nil, fmt.Errorf("app: known chats: %w", err)
			}
			add(vs)
		}
	}
	var cursor uint64
	for {
		e, err := s.c.Do(ctx, s.c.B().Sscan().Key(s.keys.legacyChats()).Cursor(cursor).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return nil, fmt.Errorf("app: known chats: %w", err)
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
func (s *audience) IsKnown(ctx context.Context, chat int64) (bool, error) {
	m := strconv.FormatInt(chat, 10)
	for _, r := range s.c.DoMulti(ctx,
		s.c.B().Sismember().Key(s.keys.chats(chat)).Member(m).Build(),
		s.c.B().Sismember().Key(s.keys.legacyChats()).Member(m).Build()) {
		ok, err := r.AsBool()
		if err != nil {
			return false, fmt.Errorf("app: known chat %d: %w", chat, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// migrateStep is how many entries one step of a migration to the buckets
// moves (audience.Migrate, chatDir.Migrate).
const migrateStep = 500

// Migrate moves the chats of the audience set kept before the buckets
// ({T}:app:chats) into their buckets, in steps of about migrateStep
// (SSCAN, then movechats.lua), and returns how many it moved. Safe while
// the bot runs and from several processes at once: a chat is in the old
// set or in its bucket at every moment (each step moves its chats
// atomically), and the readers read both. A member that is not a chat id
// (none is written) is left where it is. Errors: the server's (what was
// moved stays moved).
func (s *audience) Migrate(ctx context.Context) (int, error) {
	moved := 0
	var cursor uint64
	for {
		e, err := s.c.Do(ctx, s.c.B().Sscan().Key(s.keys.legacyChats()).Cursor(cursor).Count(migrateStep).Build()).AsScanEntry()
		if err != nil {
			return moved, fmt.Errorf("app: move the audience to its buckets: %w", err)
		}
		keys := []string{s.keys.legacyChats()}
		var chats []string
		for _, v := range e.Elements {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil && id != 0 {
				keys = append(keys, s.keys.chats(id))
				chats = append(chats, v)
			}
		}
		if len(chats) > 0 {
			n, err := s.move.Exec(ctx, s.c, keys, chats).AsInt64()
			if err != nil {
				return moved, fmt.Errorf("app: move the audience to its buckets: %w", err)
			}
			moved += int(n)
		}
		if cursor = e.Cursor; cursor == 0 {
			return moved, nil
		}
	}
}

// IsTracked reports whether broadcast id's progress message is tracked.
func (s *audience) IsTracked(ctx context.Context, id string) (bool, error) {
	ok, err := s.c.Do(ctx, s.c.B().Hexists().Key(s.keys.broadcasts()).Field(id).Build()).AsBool()
	if err != nil {
		return false, fmt.Errorf("app: tracked broadcast %s: %w", id, err)
	}
	return ok, nil
}

// Track stores (or replaces) broadcast id's tracking state.
func (s *audience) Track(ctx context.Context, id string, t tracked) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := s.c.Do(ctx, s.c.B().Hset().Key(s.keys.broadcasts()).FieldValue().FieldValue(id, string(b)).Build()).Error(); err != nil {
		return fmt.Errorf("app: track broadcast %s: %w", id, err)
	}
	return nil
}

// Tracked returns every tracked broadcast's raw JSON by broadcast id.
func (s *audience) Tracked(ctx context.Context) (map[string]string, error) {
	all, err := s.c.Do(ctx, s.c.B().Hgetall().Key(s.keys.broadcasts()).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("app: tracked broadcasts: %w", err)
	}
	return all, nil
}

// Untrack stops tracking broadcast id.
func (s *audience) Untrack(ctx context.Context, id string) error {
	if err := s.c.Do(ctx, s.c.B().Hdel().Key(s.keys.broadcasts()).Field(id).Build()).Error(); err != nil {
		return fmt.Errorf("app: untrack broadcast %s: %w", id, err)
	}
	return nil
}
