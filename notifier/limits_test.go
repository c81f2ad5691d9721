package notifier_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

func TestStoreOptionsFromLimits(t *testing.T) {
	t.Parallel()
	// The options build a valid store; zero limits mean no rate options.
	c := valkeytest.Shared(t).Client(t)
	_, err := lanes.New(c, notifier.DefaultLimits().StoreOptions(3)...)
	require.NoError(t, err)
	_, err = lanes.New(c, notifier.Limits{}.StoreOptions(0)...)
	require.NoError(t, err)
}
