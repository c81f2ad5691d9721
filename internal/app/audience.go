package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/valkey-io/valkey-go"
)

// audience owns the broadcast audience and the tracked broadcasts: every
// Valkey command on {T}:app:chats (set of chat ids that sent the bot an
// update) and {T}:app:bc (hash: broadcast id -> tracked JSON) is one of its
// methods, and every one returns its error.
type audience struct {
	c    valkey.Client
	keys keyspace
}

// AddChat records chat as known (a broadcast reaches it).
func (s *audience) AddChat(ctx context.Context, chat int64) error {
	if err := s.c.Do(ctx, s.addChat(chat)).Error(); err != nil {
		return fmt.Errorf("record chat %d: %w", chat, err)
	}
	return nil
}

// addChat is AddChat's command (SADD), for a caller that pipelines it with
// other per-update commands (chatMiddleware).
func (s *audience) addChat(chat int64) valkey.Completed {
	return s.c.B().Sadd().Key(s.keys.chats()).Member(strconv.FormatInt(chat, 10)).Build()
}

// Chats lists every chat that sent the bot an update, in ascending order.
func (s *audience) Chats(ctx context.Context) ([]int64, error) {
	var out []int64
	var cursor uint64
	for {
		e, err := s.c.Do(ctx, s.c.B().Sscan().Key(s.keys.chats()).Cursor(cursor).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return nil, fmt.Errorf("app: known chats: %w", err)
		}
		for _, v := range e.Elements {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil && id != 0 {
				out = append(out, id)
			}
		}
		if cursor = e.Cursor; cursor == 0 {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// IsKnown reports whether chat is in the audience (it wrote to the bot).
func (s *audience) IsKnown(ctx context.Context, chat int64) (bool, error) {
	ok, err := s.c.Do(ctx, s.c.B().Sismember().Key(s.keys.chats()).Member(strconv.FormatInt(chat, 10)).Build()).AsBool()
	if err != nil {
		return false, fmt.Errorf("app: known chat %d: %w", chat, err)
	}
	return ok, nil
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
