package admin

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// TestAuditStreamIsCapped: the audit stream keeps about its cap (XADD
// MAXLEN ~ N trims whole stream nodes): after 5x the cap it holds at least
// the cap and less than the cap plus one node (stream-node-max-entries,
// 100 by default), and the newest entry is the last one recorded.
func TestAuditStreamIsCapped(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	ctx := context.Background()
	const limit = 200
	l := NewAuditLog(c, valkeytest.Namespace(t), limit, nil)
	for i := range 5 * limit {
		require.NoError(t, l.Record(ctx, Who(adminID), ActionWeightSet, fmt.Sprintf("entry %d", i)))
	}
	n, err := l.Len(ctx)
	require.NoError(t, err)
	node, err := c.Do(ctx, c.B().ConfigGet().Parameter("stream-node-max-entries").Build()).AsStrMap()
	require.NoError(t, err)
	t.Logf("audit stream: %d entries after %d recorded, cap ~%d, stream-node-max-entries %s", n, 5*limit, limit, node["stream-node-max-entries"])
	require.GreaterOrEqual(t, n, limit)
	require.Less(t, n, limit+101)
	last, err := l.Last(ctx, AuditShown)
	require.NoError(t, err)
	require.Len(t, last, AuditShown)
	require.Equal(t, fmt.Sprintf("entry %d", 5*limit-1), last[0].Detail)
	require.Equal(t, fmt.Sprintf("entry %d", 5*limit-AuditShown), last[AuditShown-1].Detail)
}
