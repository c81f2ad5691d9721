package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/intake"
)

// A deployment of before the buckets (one audience set, one hash of
// handled marks, one hash of floors, one chat directory hash and index, in both of its
// formats) loses nothing on the upgrade (the moves themselves: intake's
// and internal/chats' tests): before the move the readers read
// the old keys (the audience, a chat's mark, its name, the search), and a
// start moves every entry to its bucket in steps, after which the old keys
// are gone and the readers answer as before.
func TestStartMovesTheOldKeysToTheBucketsLosingNothing(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const many = 1200 // three steps of the migration, an old set too large for an intset
	k := chats.NewKeys(h.tag)
	ik := intake.NewInbox(h.c, nil, h.tag).Keys()
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
		name := h.c.B().Hset().Key(k.LegacyName()).FieldValue().FieldValue(id, "Chat "+strconv.Itoa(i)+"\x1f"+strings.Join(ms, "\x1e"))
		if i%5 == 0 { // the format before: the members in "<id>:i"
			name = h.c.B().Hset().Key(k.LegacyName()).FieldValue().FieldValue(id, "Chat "+strconv.Itoa(i)).FieldValue(id+":i", strings.Join(ms, "\x1e"))
		}
		old = append(old, h.c.B().Hset().Key(ik.LegacyDone()).FieldValue().FieldValue(id, "0:"+strconv.Itoa(i)).Build(),
			h.c.B().Hset().Key(ik.LegacyFloor()).FieldValue().FieldValue(id, fmt.Sprintf("%020d:%020d", 0, i)).Build(),
			name.Build(), h.c.B().Zadd().Key(k.LegacyIndex()).ScoreMember().ScoreMember(0, ms[0]).ScoreMember(0, ms[1]).Build())
	}
	require.NoError(t, h.c.Do(ctx, h.c.B().Sadd().Key(k.LegacyAudience()).Member(members...).Build()).Error())
	for _, r := range h.c.DoMulti(ctx, old...) {
		require.NoError(t, r.Error())
	}

	a, _ := h.newApp(nil)
	requireAsBefore := func(a *App) {
		t.Helper()
		got, err := a.audience.Chats(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)
		for _, i := range []int{0, 1, many - 1} {
			known, err := a.audience.IsKnown(ctx, want[i])
			require.NoError(t, err)
			require.True(t, known, "chat %d", want[i])
			_, id, err := a.inbox.Mark(ctx, strconv.FormatInt(want[i], 10))
			require.NoError(t, err)
			require.EqualValues(t, i, id, "chat %d's mark", want[i])
			name, err := a.chatDir.Name(ctx, want[i])
			require.NoError(t, err)
			require.Equal(t, "Chat "+strconv.Itoa(i), name)
			found, err := a.chatDir.Find(ctx, "c"+strconv.Itoa(i), 1)
			require.NoError(t, err)
			require.Equal(t, []admin.ChatRef{{ID: want[i], Name: "Chat " + strconv.Itoa(i)}}, found)
		}
		found, err := a.chatDir.Find(ctx, "chat 12", 20)
		require.NoError(t, err)
		require.Len(t, found, 11, "chat 12 and 120-129 (of 0-1199)")
		require.Equal(t, admin.ChatRef{ID: want[12], Name: "Chat 12"}, found[0], "in name order")
		require.Equal(t, admin.ChatRef{ID: want[129], Name: "Chat 129"}, found[10])
		known, err := a.audience.IsKnown(ctx, 42)
		require.NoError(t, err)
		require.False(t, known, "never wrote")
	}
	requireAsBefore(a) // not started: read from the old keys
	a.Close()

	r := h.start(nil)
	require.Eventually(t, func() bool {
		n, err := h.c.Do(ctx, h.c.B().Exists().Key(k.LegacyAudience(), ik.LegacyDone(), ik.LegacyFloor(), k.LegacyName(), k.LegacyIndex()).Build()).AsInt64()
		return err == nil && n == 0
	}, wait, 10*time.Millisecond, "the old keys are emptied")
	requireAsBefore(r.app)
	b := intake.ChatBucket(want[0])
	for _, key := range []string{k.Audience(want[0]), ik.DoneBucket(b), k.Name(want[0]), k.Index(want[0])} {
		enc, err := h.c.Do(ctx, h.c.B().ObjectEncoding().Key(key).Build()).ToString()
		require.NoError(t, err)
		require.Contains(t, []string{"intset", "listpack"}, enc, "%s is compact", key)
	}
	require.Contains(t, h.logs.String(), "moved to the buckets")
}
