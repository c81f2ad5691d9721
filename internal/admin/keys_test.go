package admin

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The key is the one running deployments hold their audit trail under
// (the app kept it before this package existed): byte-identical.
func TestKeysAreTheDeployedOnes(t *testing.T) {
	require.Equal(t, "{cmx}:app:audit", NewKeys("cmx").Audit())
	require.Equal(t, "{cmx}:app:hist", NewKeys("cmx").History())
	require.Equal(t, "{cmx}:app:audit:once:stop:bc_1", NewKeys("cmx").AuditOnce("stop:bc_1"), "under the tag: one slot with the stream")
}
