package intake

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Job ids sort as (epoch, update_id), name one update each and decode back.
func TestJobIDSortsByEpochThenUpdateID(t *testing.T) {
	t.Parallel()
	pairs := [][2]int64{{0, 0}, {0, 1}, {0, 9}, {0, 10}, {0, 900000000}, {0, 1 << 40}, {1, 0}, {1, 120000000}, {2, 5}, {300, 1}}
	ids := make([]string, len(pairs))
	for i, p := range pairs {
		id := JobID(p[0], p[1])
		require.NoError(t, id.Validate())
		e, u, err := parseJobID(id)
		require.NoError(t, err)
		require.Equal(t, p, [2]int64{e, u})
		ids[i] = string(id)
	}
	require.True(t, sort.StringsAreSorted(ids), "byte order is (epoch, update_id) order")
	require.Equal(t, JobID(3, 7), JobID(3, 7), "the same update, the same id")
}
