package broadcast

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/notifier"
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

// Running returns the progress of every tracked broadcast (its progress
// message still kept up to date: running, halted, or done and waiting for
// its final edit), by broadcast id; a tracked broadcast whose progress is
// gone (expired) or whose id is malformed is left out, as the Tracker
// untracks it. For /metrics (httpserver.BroadcastCollector): one HGETALL
// of the tracked set plus one per broadcast. Errors: the store's.
func (s *Service) Running(ctx context.Context) ([]notifier.Progress, error) {
	all, err := s.tracking.Tracked(ctx)
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(all))
	out := make([]notifier.Progress, 0, len(ids))
	for _, id := range ids {
		p, err := s.notifier.Progress(ctx, id)
		switch {
		case errors.Is(err, notifier.ErrUnknownBroadcast), errors.Is(err, notifier.ErrInvalid):
			continue
		case err != nil:
			return nil, fmt.Errorf("broadcast: running broadcasts: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}
