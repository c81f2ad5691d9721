package chats

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// A walk of the audience in steps returns every chat once, and before
// each step Remaining(cursor) is what the rest of the walk returns: a chat
// added ahead of the cursor is counted and returned, one added behind it
// is neither; "" counts the whole audience, a malformed cursor is refused.
func TestAudienceWalkReturnsEachChatOnceAndRemainingIsTheRestOfTheWalk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	aud := NewAudience(c, valkeytest.Namespace(t))
	const chatsN = 3000
	for i := range chatsN {
		chat := int64(5_000_000 + i*7)
		if i%4 == 0 {
			chat = -1_002_000_000_000 - int64(i)
		}
		require.NoError(t, aud.Add(ctx, chat))
	}
	n, err := aud.Remaining(ctx, "")
	require.NoError(t, err)
	require.Equal(t, chatsN, n, `"" counts the whole audience`)

	seen := map[int64]bool{}
	cursor, steps := "", 0
	var ahead, behind int64
	for {
		left, err := aud.Remaining(ctx, cursor)
		require.NoError(t, err)
		want := chatsN - len(seen)
		if ahead != 0 && !seen[ahead] {
			want++
		}
		require.Equal(t, want, left, "step %d (cursor %q): what is left of the walk", steps, cursor)
		got, next, err := aud.Walk(ctx, cursor, 700)
		require.NoError(t, err)
		for _, chat := range got {
			require.False(t, seen[chat], "chat %d returned twice", chat)
			seen[chat] = true
		}
		if steps == 1 { // mid-walk: one chat joins ahead of the cursor (the last bucket), one behind it (the first)
			ahead, behind = int64(Buckets-1), int64(Buckets)
			require.NoError(t, aud.Add(ctx, ahead))
			require.NoError(t, aud.Add(ctx, behind))
		}
		steps++
		if next == "" {
			break
		}
		cursor = next
	}
	require.True(t, seen[ahead], "the chat added ahead of the cursor is walked")
	require.False(t, seen[behind], "the chat added behind the cursor is not")
	require.Len(t, seen, chatsN+1)
	_, err = aud.Remaining(ctx, "x:1")
	require.ErrorContains(t, err, "malformed audience cursor")
}
