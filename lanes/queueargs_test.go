package lanes

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A configured queue's script arguments are made once at New (a claim and
// every settle send them) and read the same as made afresh; a queue not
// configured gets the defaults' afresh. No server needed: New does not
// call it.
func TestQueueArgsAreMadeOnceAndReadAsMadeAfresh(t *testing.T) {
	t.Parallel()
	s, err := New(nil, WithTag("qa"), WithQueue("paid", QueueConfig{Ordered: true, Rate: 1000, Window: time.Second, MaxAttempts: 8}),
		WithQueue("notify", QueueConfig{LaneLimit: 3}), WithLanePace(Pace{Limit: 1, Period: time.Minute}))
	require.NoError(t, err)
	for _, q := range []string{"paid", "notify", "other"} {
		require.Equal(t, s.makeQueueArgs(q), s.queueArgs(q), q)
	}
	require.Equal(t, []string{"{qa}:q:paid:", "1", "1000000", "8", "60000"}, s.queueArgs("paid"))
	a, b := s.queueArgs("paid"), s.queueArgs("paid")
	require.Same(t, &a[0], &b[0], "made once")
	require.NotContains(t, s.qargs, "other")
}
