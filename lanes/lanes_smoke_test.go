package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

func TestSmokeEnqueueClaimAck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	for i := 0; i < 3; i++ {
		ok, err := s.Enqueue(ctx, "q", "A", m.New(), []byte("a"))
		require.NoError(t, err)
		require.True(t, ok)
	}
	ok, err := s.Enqueue(ctx, "q", "B{x}: é", m.New(), []byte("b"))
	require.NoError(t, err)
	require.True(t, ok)
	var got []string
	for i := 0; i < 4; i++ {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		got = append(got, c.Jobs[0].Group)
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
	}
	require.Equal(t, []string{"A", "B{x}: é", "A", "A"}, got)
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: 1})
	require.NoError(t, err)
	require.Empty(t, c.Jobs)
	require.Equal(t, time.Duration(-1), c.RetryIn)
	keys, err := valkeytest.Keys(ctx, s.Client(), s.Keys().Pattern())
	require.NoError(t, err)
	require.Empty(t, keys)
}
