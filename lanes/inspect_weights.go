package lanes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// GroupWeight is one lane group's non-default weight.
type GroupWeight struct {
	Group  string
	Weight int
}

// WeightsPage reads a page of the non-default weights (Weights' map, a
// bounded step at a time): HSCAN from cursor ("" or "0": the start) with
// COUNT n, sorted by group within the page. next is the cursor of the
// next page, "" once the scan is over. A page holds about n weights (the
// server may return fewer or, for a hash small enough to be a listpack
// (hash-max-listpack-entries: 512 by default), all); a weight set or
// removed during the scan may be seen or not, and one may show on two
// pages (HSCAN's guarantees). Errors: ErrInvalid for n < 1; the server's.
func (in *Inspector) WeightsPage(ctx context.Context, cursor string, n int) (ws []GroupWeight, next string, err error) {
	if n < 1 {
		return nil, "", fmt.Errorf("%w: weights page: n %d: want >= 1", ErrInvalid, n)
	}
	cur := uint64(0)
	if cursor != "" {
		if cur, err = strconv.ParseUint(cursor, 10, 64); err != nil {
			return nil, "", fmt.Errorf("%w: weights page: cursor %q", ErrInvalid, cursor)
		}
	}
	e, err := in.c.Do(ctx, in.c.B().Hscan().Key(in.keys.weight()).Cursor(cur).Count(int64(n)).Build()).AsScanEntry()
	if err != nil {
		return nil, "", fmt.Errorf("lanes: weights page: %w", err)
	}
	for i := 0; i+1 < len(e.Elements); i += 2 {
		w, _ := strconv.Atoi(e.Elements[i+1])
		ws = append(ws, GroupWeight{Group: e.Elements[i], Weight: w})
	}
	slices.SortFunc(ws, func(a, b GroupWeight) int {
		if len(a.Group) != len(b.Group) { // numeric groups (chat ids) in number order
			return len(a.Group) - len(b.Group)
		}
		if a.Group < b.Group {
			return -1
		}
		if a.Group > b.Group {
			return 1
		}
		return 0
	})
	if e.Cursor != 0 {
		next = strconv.FormatUint(e.Cursor, 10)
	}
	return ws, next, nil
}
