package notifier_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// A copy's sent tally is the same whichever broadcasts' tallies the
// notifier gave before (it keeps the last broadcast's): each call of a
// sequence that goes back and forth between two broadcasts, free and
// paid, with a malformed id between, equals a fresh notifier's first, and
// the malformed id is refused even right after a valid one.
func TestASentTallyIsTheSameWhicheverTalliesCameBefore(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	s, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, s, notifier.Config{})
	require.NoError(t, err)
	const a, b = "bc_01ARZ3NDEKTSV4RRFFQ69G5FAV", "bc_01BX5ZZKBKACTAV9WEVGEMMVRZ"
	for i, call := range []struct {
		id   string
		paid bool
	}{
		{a, false}, {a, false}, {a, true}, {b, true}, {a, true}, {b, false}, {"nope", false}, {b, false}, {b, true}, {a, false},
	} {
		got, err := n.SentTally(call.id, call.paid)
		fresh, err2 := notifier.New(c, s, notifier.Config{})
		require.NoError(t, err2)
		want, wantErr := fresh.SentTally(call.id, call.paid)
		if wantErr != nil {
			require.ErrorIs(t, err, notifier.ErrInvalid, "call %d (%s)", i, call.id)
			continue
		}
		require.NoError(t, err, "call %d", i)
		require.Equal(t, want, got, "call %d: %s paid %v", i, call.id, call.paid)
		// The progress hash's fields (keys.go): Sent, and PaidSent when paid.
		fields := []string{"s"}
		if call.paid {
			fields = append(fields, "ps")
		}
		require.Equal(t, fields, got.Fields, "call %d", i)
		require.True(t, strings.HasSuffix(got.Key, ":bc:"+call.id) && got.Untrack == got.Key+":out", "call %d: %+v", i, got)
	}
}
