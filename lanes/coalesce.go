package lanes

import (
	"context"
	"fmt"
)

// enqueueCoalesce is Enqueue with the Coalesce option (validated): one
// coalesce.lua call for it.
func (s *Store) enqueueCoalesce(ctx context.Context, queue string, cfg enqueueConfig, it Item) (EnqueueResult, error) {
	keys, args := s.header(queue, 4)
	keys = append(keys, s.keys.coalesce(queue, cfg.coalesceKey))
	args = append(args, ms(cfg.coalesceTTL), it.Group, string(it.ID), string(it.Payload))
	v, err := s.scripts.coalesce.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with coalesce: %w", err)
	}
	if len(v) != 2 {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with coalesce: malformed reply")
	}
	fresh, err := v[0].AsInt64()
	if err != nil {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with coalesce: malformed reply: %w", err)
	}
	id, err := v[1].ToString()
	if err != nil {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with coalesce: malformed reply: %w", err)
	}
	res := EnqueueResult{IDs: []JobID{JobID(id)}}
	if fresh == 0 {
		res.Coalesced = 1
	} else {
		res.Added = 1
	}
	return res, nil
}
