package notifier_test

import (
	"context"
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
	require.Equal(t, []notifier.BroadcastText{{Lang: "", Parts: []string{"📣 news"}}}, texts)

	long := strings.Repeat("word ", 1500) // 7,500 characters: two parts
	id, err = r.f.Start(ctx, notifier.Message{Text: long}, notifier.Plan{})
	require.NoError(t, err)
	texts, err = r.n.BroadcastTexts(ctx, id)
	require.NoError(t, err)
	require.Len(t, texts, 1)
	require.Len(t, texts[0].Parts, 2)
	require.Equal(t, strings.Fields(long), strings.Fields(strings.Join(texts[0].Parts, " ")), "the parts are the text, in order")

	texts, err = r.n.BroadcastTexts(ctx, "bc_01M9452Z4C9BS4Z4DQ331987BJ")
	require.NoError(t, err)
	require.Empty(t, texts)
}

// A broadcast with a text per language reads each: the default first,
// then each language's, every one in its parts.
func TestBroadcastTextsReadEveryLanguagesText(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	none := func(_ context.Context, chats []int64) ([]string, error) { return make([]string, len(chats)), nil }
	r := newLazyRig(t, chatsUpTo(3), notifier.FillConfig{StepChats: 10, Languages: none})
	id, err := r.f.Start(ctx, notifier.Message{Text: "📣 news"}, notifier.Plan{Texts: map[string]string{"ru": "📣 новости", "fa": "📣 اخبار"}})
	require.NoError(t, err)
	texts, err := r.n.BroadcastTexts(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []notifier.BroadcastText{{Lang: "", Parts: []string{"📣 news"}}, {Lang: "fa", Parts: []string{"📣 اخبار"}},
		{Lang: "ru", Parts: []string{"📣 новости"}}}, texts)
}
