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

// A chat's language for a broadcast is its /language choice, else (a
// private chat) its user's recorded language_code's, else the default
// (""); a recorded code is written once per process while unchanged, and
// the census counts the audience's chats by that same rule.
func TestLanguagesOfChatsPreferTheChoiceThenTheRecordedCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	l := NewLanguages(c, ns)
	aud := NewAudience(c, ns)
	chose, coded, plain, group, both := int64(1025), int64(2049), int64(3073), int64(-1023), int64(7)
	require.NoError(t, l.Set(ctx, chose, "fa"))
	require.NoError(t, l.Set(ctx, group, "es"))
	require.NoError(t, l.Set(ctx, both, "pt-BR"))
	for _, tc := range []struct {
		user  int64
		lang  string
		write bool
	}{
		{coded, "ru", true},
		{coded, "ru", false}, // unchanged: no write
		{both, "ru", true},
		{plain, "", true}, // the default: an HDEL, once
		{plain, "", false},
	} {
		cmd, ok := l.RecordCode(tc.user, tc.lang)
		require.Equal(t, tc.write, ok, "%d %q", tc.user, tc.lang)
		if ok {
			require.NoError(t, c.Do(ctx, cmd).Error())
			l.CodeRecorded(tc.user, tc.lang)
		}
	}
	got, err := l.Of(ctx, []int64{chose, coded, plain, group, both, 99})
	require.NoError(t, err)
	require.Equal(t, []string{"fa", "ru", "", "es", "pt-BR", ""}, got)

	for _, id := range []int64{chose, coded, plain, group, both} {
		require.NoError(t, aud.Add(ctx, id))
	}
	buckets := make([]int64, Buckets)
	for b := range buckets {
		buckets[b] = int64(b)
	}
	counts, n, err := l.Census(ctx, buckets)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	require.Equal(t, map[string]int{"fa": 1, "ru": 1, "": 1, "es": 1, "pt-BR": 1}, counts)
}

// 100,000 private chats' recorded codes (four in five not the default)
// and 10,000 choices stay in compact buckets: a few bytes a chat for both
// families together (the goal for a known chat is <= 200 B at rest).
func TestRecordedCodesStayCompactAt100000Chats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	l := NewLanguages(c, valkeytest.Namespace(t))
	const n = 100_000
	langs := []string{"ru", "es", "pt-BR", "fa", ""}
	for start := int64(1); start <= n; start += 1000 {
		cmds := make([]valkey.Completed, 0, 1100)
		for id := start; id < start+1000; id++ {
			if cmd, ok := l.RecordCode(id, langs[id%5]); ok {
				cmds = append(cmds, cmd)
			}
			if id%10 == 0 {
				cmds = append(cmds, c.B().Hset().Key(l.Keys().Lang(id)).FieldValue().FieldValue(strconv.FormatInt(id, 10), "es").Build())
			}
		}
		for _, r := range c.DoMulti(ctx, cmds...) {
			require.NoError(t, r.Error())
		}
	}
	var total int64
	for b := int64(0); b < Buckets; b++ {
		for _, k := range []string{l.Keys().CodeBucket(b), l.Keys().LangBucket(b)} {
			enc, err := c.Do(ctx, c.B().ObjectEncoding().Key(k).Build()).ToString()
			if valkey.IsValkeyNil(err) && k == l.Keys().LangBucket(b) && b%2 == 1 {
				continue // the choices are of even ids: an odd bucket has none
			}
			require.NoError(t, err)
			require.Equal(t, "listpack", enc, k)
			m, err := c.Do(ctx, c.B().MemoryUsage().Key(k).Samples(0).Build()).AsInt64()
			require.NoError(t, err)
			total += m
		}
	}
	perChat := float64(total) / n
	t.Logf("languages and codes: %d B for %d chats: %.1f B a chat", total, n, perChat)
	require.Less(t, perChat, 30.0)
}
