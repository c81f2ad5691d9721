package broadcast

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/valkey-io/valkey-go"
)

// tracking owns the tracked broadcasts, those whose progress message is
// kept up to date: every Valkey command on {T}:app:bc (hash: broadcast id
// -> tracked JSON) is one of its methods, and every one returns its error.
type tracking struct {
	c    valkey.Client
	keys Keys
}

// IsTracked reports whether broadcast id's progress message is tracked.
func (s *tracking) IsTracked(ctx context.Context, id string) (bool, error) {
	ok, err := s.c.Do(ctx, s.c.B().Hexists().Key(s.keys.Tracked()).Field(id).Build()).AsBool()
	if err != nil {
		return false, fmt.Errorf("broadcast: tracked broadcast %s: %w", id, err)
	}
	return ok, nil
}

// Track stores (or replaces) broadcast id's tracking state.
func (s *tracking) Track(ctx context.Context, id string, t tracked) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("broadcast: track broadcast %s: %w", id, err)
	}
	if err := s.c.Do(ctx, s.c.B().Hset().Key(s.keys.Tracked()).FieldValue().FieldValue(id, string(b)).Build()).Error(); err != nil {
		return fmt.Errorf("broadcast: track broadcast %s: %w", id, err)
	}
	return nil
}

// Tracked returns every tracked broadcast's raw JSON by broadcast id.
func (s *tracking) Tracked(ctx context.Context) (map[string]string, error) {
	all, err := s.c.Do(ctx, s.c.B().Hgetall().Key(s.keys.Tracked()).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("broadcast: tracked broadcasts: %w", err)
	}
	return all, nil
}

// Untrack stops tracking broadcast id.
func (s *tracking) Untrack(ctx context.Context, id string) error {
	if err := s.c.Do(ctx, s.c.B().Hdel().Key(s.keys.Tracked()).Field(id).Build()).Error(); err != nil {
		return fmt.Errorf("broadcast: untrack broadcast %s: %w", id, err)
	}
	return nil
}
