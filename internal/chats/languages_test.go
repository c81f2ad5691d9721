package chats

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// A user's and a group's languages are fields of their bucket, read alone
// or from a caller's pipeline, replaced by the next choice and forgotten
// with "".
func TestLanguagesKeepEachUsersAndGroupsChoice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	l := NewLanguages(c, valkeytest.Namespace(t))
	user, group := int64(1025), int64(-1023) // both in bucket 1
	require.Equal(t, l.Keys().Lang(user), l.Keys().Lang(group))
	for _, tc := range []struct {
		id   int64
		set  string
		want string
	}{
		{user, "ru", "ru"},
		{group, "fa", "fa"},
		{user, "pt-BR", "pt-BR"},
		{group, "", ""},
	} {
		require.NoError(t, l.Set(ctx, tc.id, tc.set))
		got, err := l.Get(ctx, tc.id)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%d", tc.id)
	}
	res := c.DoMulti(ctx, l.GetCmd(user), l.GetCmd(group), l.GetCmd(7))
	for i, want := range []string{"pt-BR", "", ""} {
		got, err := ReadLang(res[i])
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	m, err := c.Do(ctx, c.B().Hgetall().Key(l.Keys().Lang(user)).Build()).AsStrMap()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"1025": "pt-BR"}, m, "a choice is one field of a few bytes")
}

// 100,000 users' choices stay in compact buckets: a listpack each, a few
// bytes a choice (the goal for a known chat is <= 200 B at rest,
// docs/benchmarks.md row 10).
func TestLanguagesStayCompactAt100000Choices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	l := NewLanguages(c, valkeytest.Namespace(t))
	const n = 100_000
	langs := []string{"ru", "es", "pt-BR", "fa", "en"}
	for start := int64(1); start <= n; start += 1000 {
		cmds := make([]valkey.Completed, 0, 1000)
		for id := start; id < start+1000; id++ {
			cmds = append(cmds, c.B().Hset().Key(l.Keys().Lang(id)).FieldValue().FieldValue(strconv.FormatInt(id, 10), langs[id%5]).Build())
		}
		for _, r := range c.DoMulti(ctx, cmds...) {
			require.NoError(t, r.Error())
		}
	}
	var total int64
	for b := int64(0); b < Buckets; b++ {
		k := l.Keys().Lang(b)
		enc, err := c.Do(ctx, c.B().ObjectEncoding().Key(k).Build()).ToString()
		require.NoError(t, err)
		require.Equal(t, "listpack", enc, k)
		m, err := c.Do(ctx, c.B().MemoryUsage().Key(k).Samples(0).Build()).AsInt64()
		require.NoError(t, err)
		total += m
	}
	perChoice := float64(total) / n
	t.Logf("languages: %d B for %d choices: %.1f B a choice", total, n, perChoice)
	require.Less(t, perChoice, 20.0)
}
