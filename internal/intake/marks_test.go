package intake_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
)

// chatUpdate is update id of a message in chat (its lane).
func chatUpdate(id, chat int64) intake.Update {
	return intake.Update{ID: id, JSON: json.RawMessage(`{"update_id":` + strconv.FormatInt(id, 10) +
		`,"message":{"message_id":1,"date":0,"chat":{"id":` + strconv.FormatInt(chat, 10) + `,"type":"private"},"text":"/start"}}`)}
}

// Handled marks live in buckets of ChatBuckets hashes by chat id (chat mod
// ChatBuckets, negative ids too), small enough for Valkey to keep each as
// a listpack.
func TestInboxMarksLiveInSmallBucketsByChat(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	in, _ := newInbox(t)
	c := valkeyClient(t)
	chats := []int64{5, 5 + intake.ChatBuckets, -1001234567890, 0}
	for i, chat := range chats {
		_, err := in.Accept(ctx, []intake.Update{chatUpdate(int64(100+i), chat)})
		require.NoError(t, err)
	}
	for range chats {
		ups, _, _, err := in.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, ups, 1)
		require.NoError(t, in.Finish(ctx, ups[0]))
	}
	for i, chat := range chats {
		lane := strconv.FormatInt(chat, 10)
		_, mark, err := in.Mark(ctx, lane)
		require.NoError(t, err)
		require.EqualValues(t, 100+i, mark)
		b := intake.ChatBucket(chat)
		require.True(t, b >= 0 && b < intake.ChatBuckets, "bucket %d of chat %d", b, chat)
		require.Equal(t, in.Keys().DoneBucket(b), in.Keys().Done(lane))
		v, err := c.Do(ctx, c.B().Hget().Key(in.Keys().DoneBucket(b)).Field(lane).Build()).ToString()
		require.NoError(t, err)
		require.Equal(t, "0:"+strconv.Itoa(100+i), v)
		enc, err := c.Do(ctx, c.B().ObjectEncoding().Key(in.Keys().DoneBucket(b)).Build()).ToString()
		require.NoError(t, err)
		require.Equal(t, "listpack", enc)
	}
	require.Equal(t, intake.ChatBucket(5), intake.ChatBucket(5+intake.ChatBuckets), "one bucket, two chats")
	n, err := c.Do(ctx, c.B().Hlen().Key(in.Keys().DoneBucket(5)).Build()).AsInt64()
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = c.Do(ctx, c.B().Exists().Key(in.Keys().LegacyDone()).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "nothing in the hash of before")
}

// A deployment upgraded from the one hash of marks loses none: a mark
// still in the old hash counts (an update at or below it is handled; the
// higher of the old and the bucket's mark wins), finishing an update of
// its lane moves it, and MigrateMarks moves the rest in steps, after which
// the old hash is gone and every mark reads as before.
func TestInboxMarksOfTheOldHashCountAndMoveToTheirBuckets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	in, _ := newInbox(t)
	c := valkeyClient(t)
	const many = 1500 // several steps of the migration, an old hash large enough to be a hash table
	old := map[string]string{"7": "0:50", "8": "0:60", "9": "2:5"}
	for i := range many {
		old[strconv.Itoa(10_000+i)] = "0:" + strconv.Itoa(i)
	}
	cmd := c.B().Hset().Key(in.Keys().LegacyDone()).FieldValue()
	for f, v := range old {
		cmd = cmd.FieldValue(f, v)
	}
	require.NoError(t, c.Do(ctx, cmd.Build()).Error())

	handle := func(u intake.Update) (wasHandled bool) {
		t.Helper()
		_, err := in.Accept(ctx, []intake.Update{u})
		require.NoError(t, err)
		ups, _, _, err := in.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, ups, 1)
		require.Equal(t, u.ID, ups[0].ID)
		done, err := in.Handled(ctx, ups[0])
		require.NoError(t, err)
		require.NoError(t, in.Finish(ctx, ups[0]))
		return done
	}
	mark := func(lane string) string {
		t.Helper()
		e, id, err := in.Mark(ctx, lane)
		require.NoError(t, err)
		return strconv.FormatInt(e, 10) + ":" + strconv.FormatInt(id, 10)
	}
	require.Equal(t, "0:50", mark("7"), "read from the old hash")
	require.True(t, handle(chatUpdate(50, 7)), "at the old mark: handled before")
	require.Equal(t, "0:50", mark("7"))
	require.False(t, handle(chatUpdate(61, 8)), "above the old mark: new")
	require.Equal(t, "0:61", mark("8"))
	for _, lane := range []string{"7", "8"} {
		ok, err := c.Do(ctx, c.B().Hexists().Key(in.Keys().LegacyDone()).Field(lane).Build()).AsBool()
		require.NoError(t, err)
		require.False(t, ok, "lane %s's mark moved when its update finished", lane)
	}
	v, err := c.Do(ctx, c.B().Hget().Key(in.Keys().Done("7")).Field("7").Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, "0:50", v, "the old mark kept in the bucket, not lowered")

	// A bucket's mark below the old one (written by a process of this
	// version while one of before wrote the old hash): the higher counts.
	require.NoError(t, c.Do(ctx, c.B().Hset().Key(in.Keys().Done("9")).FieldValue().FieldValue("9", "1:900").Build()).Error())
	require.Equal(t, "2:5", mark("9"), "epoch 2 is above epoch 1")

	moved, err := in.MigrateMarks(ctx)
	require.NoError(t, err)
	require.Equal(t, many+1, moved, "the rest: lane 9 and the many")
	n, err := c.Do(ctx, c.B().Exists().Key(in.Keys().LegacyDone()).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "the old hash is gone")
	require.Equal(t, "2:5", mark("9"))
	for i := range many {
		lane := strconv.Itoa(10_000 + i)
		require.Equal(t, old[lane], mark(lane))
	}
	require.True(t, handle(chatUpdate(5, 10_000+many-1)), "a moved mark still says handled")
	require.False(t, handle(chatUpdate(int64(many), 10_000+many-1)), "and above it, new")
	moved, err = in.MigrateMarks(ctx)
	require.NoError(t, err)
	require.Zero(t, moved, "nothing left to move")
}
