package notifier_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

func newNotifier(t *testing.T) *notifier.Notifier {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	s, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, s, notifier.Config{})
	require.NoError(t, err)
	return n
}

func checkParts(t *testing.T, text string, parts []string, max int) {
	t.Helper()
	require.Equal(t, text, strings.Join(parts, ""))
	for _, p := range parts {
		require.True(t, utf8.ValidString(p))
		require.LessOrEqual(t, tgtext.UTF16Len(p), max)
		require.NotEmpty(t, p)
	}
}

func pending(t *testing.T, n *notifier.Notifier, queue string) int {
	t.Helper()
	st, err := n.Store().Inspector().Stats(t.Context(), queue, 10)
	require.NoError(t, err)
	return st.Pending
}
