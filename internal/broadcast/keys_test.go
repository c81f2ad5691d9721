package broadcast

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The keys are those running deployments hold data under (the app kept
// them before this package existed): byte-identical.
func TestKeysAreTheDeployedOnes(t *testing.T) {
	k := NewKeys("cmx")
	require.Equal(t, "{cmx}:app:bc", k.Tracked())
	require.Equal(t, "{cmx}:app:bcp:abcdefghijklmnop", k.Preview("abcdefghijklmnop"))
	require.Equal(t, "{cmx}:app:bcl:tg:9001", k.Latest("tg:9001"))
}
