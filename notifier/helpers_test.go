package notifier_test

import (
	"strings"
	"testing"
	"time"
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

// startFanOut starts a Broadcast of one message to chats 1..chats in
// batches of batch (notifier.DefaultLimits, a store of its own) and returns
// once its id is recorded and more than queued copies were queued (-1: at
// once); done gets Broadcast's error.
func startFanOut(t *testing.T, batch, chats, queued int) (n *notifier.Notifier, id string, done <-chan error) {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	tag := valkeytest.Namespace(t)
	s, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(tag))
	require.NoError(t, err)
	n, err = notifier.New(c, s, notifier.Config{BatchSize: batch})
	require.NoError(t, err)
	ctx := t.Context()
	ids := make([]int64, chats)
	for i := range ids {
		ids[i] = int64(1 + i)
	}
	errs := make(chan error, 1)
	go func() {
		_, err := n.Broadcast(ctx, ids, notifier.Message{Text: "fan", Key: "k"})
		errs <- err
	}()
	require.Eventually(t, func() bool {
		v, err := c.Do(ctx, c.B().Get().Key("{"+tag+"}:n:once:bc:k").Build()).ToString()
		id = v
		return err == nil && v != ""
	}, 10*time.Second, time.Millisecond, "the broadcast's id is recorded")
	require.Eventually(t, func() bool {
		p, err := n.Progress(ctx, id)
		return err == nil && p.Queued > queued
	}, 10*time.Second, time.Millisecond)
	return n, id, errs
}
