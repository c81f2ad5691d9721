package lanes_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// WeightsPage pages through every non-default weight, a bounded step at
// a time, each once it was set and not after it is back to the default:
// the pages together are what Weights reads (600 weights: more than a
// listpack holds, so HSCAN pages).
func TestWeightsPageScansEveryNonDefaultWeight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := newStore(t).Inspector()
	ws, next, err := in.WeightsPage(ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, ws)
	require.Empty(t, next, "nothing to scan")
	for i := range 600 {
		require.NoError(t, in.SetWeight(ctx, strconv.Itoa(1000+i), 2+i%50))
	}
	require.NoError(t, in.SetWeight(ctx, "1000", 1), "back to the default: not listed")
	want, err := in.Weights(ctx)
	require.NoError(t, err)
	require.Len(t, want, 599)
	got := map[string]int{}
	cursor, pages := "", 0
	for {
		ws, next, err := in.WeightsPage(ctx, cursor, 50)
		require.NoError(t, err)
		pages++
		for _, w := range ws {
			got[w.Group] = w.Weight
		}
		if next == "" {
			break
		}
		cursor = next
		require.Less(t, pages, 100, "the scan ends")
	}
	require.Equal(t, want, got)
	require.Greater(t, pages, 1, "600 weights (more than a listpack holds) are more than one page of 50")
	_, _, err = in.WeightsPage(ctx, "x", 10)
	require.ErrorIs(t, err, lanes.ErrInvalid)
}
