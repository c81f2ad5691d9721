package notifier_test

import (
	"context"
	"fmt"
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

// With two budgets (ReplyPerSecond > 0) the reply lanes keep their depth
// bound (ReplyLaneDepth): the third reply queued to one chat is refused
// with lanes.ErrLaneFull, a notification to it is not.
func TestTwoBudgetsKeepTheReplyLaneDepth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	l := notifier.Limits{GlobalPerSecond: 30, ReplyPerSecond: 100, ReplyLaneDepth: 2}
	store, err := notifier.NewStore(c, l, 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	for i := range 2 {
		_, err := n.Notify(ctx, 7, notifier.Message{Text: fmt.Sprintf("reply %d", i), Class: notifier.Reply})
		require.NoError(t, err)
	}
	_, err = n.Notify(ctx, 7, notifier.Message{Text: "reply 2", Class: notifier.Reply})
	require.ErrorIs(t, err, lanes.ErrLaneFull)
	_, err = n.Notify(ctx, 7, notifier.Message{Text: "news", Class: notifier.Notification})
	require.NoError(t, err)
}
