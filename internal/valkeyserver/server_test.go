package valkeyserver_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// TestNoBinaryErrorNamesWhatIsMissing: without a server binary on PATH,
// starting a server fails with ErrNoServer, whose text names the missing
// binary and says VALKEY_URL does not replace it, whether VALKEY_URL is
// set or not.
func TestNoBinaryErrorNamesWhatIsMissing(t *testing.T) {
	for _, url := range []string{"", "redis://127.0.0.1:6379/0"} {
		t.Run("VALKEY_URL="+url, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv("VALKEY_URL", url)
			_, err := valkeyserver.Start("standalone", valkeyserver.Options{})
			require.ErrorIs(t, err, valkeyserver.ErrNoServer)
			require.Contains(t, err.Error(), "no valkey-server or redis-server on PATH")
			require.Contains(t, err.Error(), "VALKEY_URL does not replace it")
			require.NotContains(t, err.Error(), "VALKEY_URL is unset")
		})
	}
}
