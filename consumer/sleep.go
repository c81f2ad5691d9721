package consumer

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends; it returns ctx.Err() then, nil after
// the full wait. A d of 0 or less returns at once (ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
