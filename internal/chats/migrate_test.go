package chats

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// A deployment of before the buckets (one audience set, one chat
// directory hash and index, in both of its formats) loses nothing on the
// upgrade: before the move the readers read the old keys (the audience, a
// chat's name, the search), and Migrate moves every entry to its bucket in
// steps, after which the old keys are gone and the readers answer as
// before. (internal/app's TestStartMovesTheOldKeysToTheBucketsLosingNothing
// checks that a start runs these moves.)
func TestMigrateMovesTheOldKeysToTheBucketsLosingNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	tag := valkeytest.Namespace(t)
	k := NewKeys(tag)
	aud := NewAudience(c, tag)
	dir, err := NewDirectory(c, tag)
	require.NoError(t, err)
	const many = 1200 // three steps of the migration, an old set too large for an intset
	var want []int64
	members := make([]string, 0, many)
	old := valkey.Commands{}
	for i := range many {
		chat := int64(3_000_000 + i)
		if i%3 == 0 {
			chat = -1_001_000_000_000 - int64(i) // groups too
		}
		want = append(want, chat)
		id := strconv.FormatInt(chat, 10)
		members = append(members, id)
		n := "c" + strconv.Itoa(i) // the search key of the chat named Chat i: "c<i>" and "chat <i>", "<i>"
		ms := []string{n + "\x00" + id, "chat " + strconv.Itoa(i) + "\x00" + id}
		name := c.B().Hset().Key(k.LegacyName()).FieldValue().FieldValue(id, "Chat "+strconv.Itoa(i)+"\x1f"+strings.Join(ms, "\x1e"))
		if i%5 == 0 { // the format before: the members in "<id>:i"
			name = c.B().Hset().Key(k.LegacyName()).FieldValue().FieldValue(id, "Chat "+strconv.Itoa(i)).FieldValue(id+":i", strings.Join(ms, "\x1e"))
		}
		old = append(old, name.Build(), c.B().Zadd().Key(k.LegacyIndex()).ScoreMember().ScoreMember(0, ms[0]).ScoreMember(0, ms[1]).Build())
	}
	require.NoError(t, c.Do(ctx, c.B().Sadd().Key(k.LegacyAudience()).Member(members...).Build()).Error())
	for _, r := range c.DoMulti(ctx, old...) {
		require.NoError(t, r.Error())
	}

	requireAsBefore := func() {
		t.Helper()
		got, err := aud.Chats(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)
		for _, i := range []int{0, 1, many - 1} {
			known, err := aud.IsKnown(ctx, want[i])
			require.NoError(t, err)
			require.True(t, known, "chat %d", want[i])
			name, err := dir.Name(ctx, want[i])
			require.NoError(t, err)
			require.Equal(t, "Chat "+strconv.Itoa(i), name)
			found, err := dir.Find(ctx, "c"+strconv.Itoa(i), 1)
			require.NoError(t, err)
			require.Equal(t, []Ref{{ID: want[i], Name: "Chat " + strconv.Itoa(i)}}, found)
		}
		found, err := dir.Find(ctx, "chat 12", 20)
		require.NoError(t, err)
		require.Len(t, found, 11, "chat 12 and 120-129 (of 0-1199)")
		require.Equal(t, Ref{ID: want[12], Name: "Chat 12"}, found[0], "in name order")
		require.Equal(t, Ref{ID: want[129], Name: "Chat 129"}, found[10])
		known, err := aud.IsKnown(ctx, 42)
		require.NoError(t, err)
		require.False(t, known, "never wrote")
	}
	requireAsBefore() // not moved: read from the old keys

	n, err := aud.Migrate(ctx)
	require.NoError(t, err)
	require.Equal(t, many, n, "every chat of the audience moved")
	n, err = dir.Migrate(ctx)
	require.NoError(t, err)
	require.Equal(t, many, n, "every chat of the directory moved")
	gone, err := c.Do(ctx, c.B().Exists().Key(k.LegacyAudience(), k.LegacyName(), k.LegacyIndex()).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, gone, "the old keys are emptied")
	requireAsBefore()
	for _, key := range []string{k.Audience(want[0]), k.Name(want[0]), k.Index(want[0])} {
		enc, err := c.Do(ctx, c.B().ObjectEncoding().Key(key).Build()).ToString()
		require.NoError(t, err)
		require.Contains(t, []string{"intset", "listpack"}, enc, "%s is compact", key)
	}
}

// The keys are those the deployments before this package wrote (the app
// kept them): the same strings, so their data stays readable.
func TestKeysAreTheDeployedOnes(t *testing.T) {
	t.Parallel()
	k := NewKeys("cm")
	for _, tc := range []struct{ got, want string }{
		{k.Audience(5), "{cm}:app:chats:5"},
		{k.Audience(5 + Buckets), "{cm}:app:chats:5"},
		{k.Audience(-1001234567890), "{cm}:app:chats:" + strconv.FormatInt(((-1001234567890%1024)+1024)%1024, 10)},
		{k.AudienceBucket(1023), "{cm}:app:chats:1023"},
		{k.LegacyAudience(), "{cm}:app:chats"},
		{k.Name(-1), "{cm}:app:chatname:1023"},
		{k.Index(-1), "{cm}:app:chatidx:4095"},
		{k.Index(4097), "{cm}:app:chatidx:1"},
		{k.IndexBucket(7), "{cm}:app:chatidx:7"},
		{k.LegacyName(), "{cm}:app:chatname"},
		{k.LegacyIndex(), "{cm}:app:chatidx"},
		{k.Lang(-1), "{cm}:app:lang:1023"},
		{k.Lang(1025), "{cm}:app:lang:1"},
	} {
		require.Equal(t, tc.want, tc.got)
	}
}
