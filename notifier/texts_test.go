package notifier_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
)

// BroadcastTexts reads a lazy broadcast's text as its chats get it, each
// part of a split text in order (together the text), and nothing for an
// unknown broadcast.
func TestBroadcastTextsReadALazyBroadcastsParts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r := newLazyRig(t, chatsUpTo(3), notifier.FillConfig{StepChats: 10})
	id, err := r.f.Start(ctx, notifier.Message{Text: "📣 news"}, notifier.Plan{})
	require.NoError(t, err)
	texts, err := r.n.BroadcastTexts(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []string{"📣 news"}, texts)

	long := strings.Repeat("word ", 1500) // 7,500 characters: two parts
	id, err = r.f.Start(ctx, notifier.Message{Text: long}, notifier.Plan{})
	require.NoError(t, err)
	texts, err = r.n.BroadcastTexts(ctx, id)
	require.NoError(t, err)
	require.Len(t, texts, 2)
	require.Equal(t, strings.Fields(long), strings.Fields(strings.Join(texts, " ")), "the parts are the text, in order")

	texts, err = r.n.BroadcastTexts(ctx, "bc_01M9452Z4C9BS4Z4DQ331987BJ")
	require.NoError(t, err)
	require.Empty(t, texts)
}
