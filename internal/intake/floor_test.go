package intake_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/intake"
)

// handleOnce records u by webhook (Accept), claims it, reports whether the
// inbox took it for handled already (Handled), and finishes it.
func handleOnce(ctx context.Context, t *testing.T, in *intake.Inbox, u intake.Update) (wasHandled bool) {
	t.Helper()
	_, err := in.Accept(ctx, []intake.Update{u})
	require.NoError(t, err)
	ups, _, _, err := in.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.Equal(t, u.ID, ups[0].ID)
	require.False(t, ups[0].InOrder, "a webhook's update")
	done, err := in.Handled(ctx, ups[0])
	require.NoError(t, err)
	require.NoError(t, in.Finish(ctx, ups[0]))
	return done
}

// expireSeen makes lane's finished set expire now (as it does SeenTTL
// after the lane's last finish) and waits until it is gone.
func expireSeen(ctx context.Context, t *testing.T, c valkey.Client, in *intake.Inbox, lane string) {
	t.Helper()
	require.NoError(t, c.Do(ctx, c.B().Pexpire().Key(in.Keys().Seen(lane)).Milliseconds(1).Build()).Error())
	require.Eventually(t, func() bool {
		n, err := c.Do(ctx, c.B().Exists().Key(in.Keys().Seen(lane)).Build()).AsInt64()
		return err == nil && n == 0
	}, 5*time.Second, 5*time.Millisecond)
}

// laneKeys lists the keys of the inbox's namespace that name lane or hold
// a field of it, outside its handled mark's bucket: what the lane costs
// besides the mark.
func laneKeys(ctx context.Context, t *testing.T, c valkey.Client, in *intake.Inbox, lane string) []string {
	t.Helper()
	var out []string
	n, err := c.Do(ctx, c.B().Exists().Key(in.Keys().Seen(lane)).Build()).AsInt64()
	require.NoError(t, err)
	if n == 1 {
		out = append(out, in.Keys().Seen(lane))
	}
	for _, k := range []string{in.Keys().LegacyFloor(), in.Keys().LegacyDone()} {
		ok, err := c.Do(ctx, c.B().Hexists().Key(k).Field(lane).Build()).AsBool()
		require.NoError(t, err)
		if ok {
			out = append(out, k+" field "+lane)
		}
	}
	return out
}

// A webhook lane that finishes 200 updates (more than SeenCap, so ids are
// trimmed from its finished set and its floor rises) keeps its floor
// inside the set, which expires: no per-chat entry outlives the set but
// the handled mark in its bucket. Every handled update sent again is
// skipped, while the set lasts (in the set, or at or below its floor),
// after it expired (at or below the mark), and once a new set is made
// beside the mark; an id below the mark that was never handled is not.
func TestInboxWebhookFloorExpiresWithTheFinishedSet(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	in, _ := newInbox(t)
	c := valkeyClient(t)
	const chat, lane, n, skipped = 42, "42", 200, 190 // 190 arrives late, after the rest
	for id := int64(1); id <= n; id++ {
		if id != skipped {
			require.False(t, handleOnce(ctx, t, in, chatUpdate(id, chat)), "update %d is new", id)
		}
	}
	require.Equal(t, []string{in.Keys().Seen(lane)}, laneKeys(ctx, t, c, in, lane), "the set alone, no floor field")
	real, err := c.Do(ctx, c.B().Zcount().Key(in.Keys().Seen(lane)).Min("0").Max("0").Build()).AsInt64()
	require.NoError(t, err)
	require.EqualValues(t, intake.SeenCap, real, "the set keeps the last SeenCap finished ids")
	fl, err := c.Do(ctx, c.B().Zrange().Key(in.Keys().Seen(lane)).Min("1").Max("1").Byscore().Build()).AsStrSlice()
	require.NoError(t, err)
	require.Equal(t, []string{fmt.Sprintf("f%020d:%020d", 0, n-intake.SeenCap-1)}, fl, "its floor: the highest id trimmed (1..135 trimmed: 136..200 but 190 kept)")
	ttl, err := c.Do(ctx, c.B().Ttl().Key(in.Keys().Seen(lane)).Build()).AsInt64()
	require.NoError(t, err)
	require.True(t, ttl > 0 && ttl <= int64(intake.SeenTTL/time.Second), "the set and its floor expire: TTL %d s", ttl)

	for _, tc := range []struct {
		name string
		id   int64
	}{{"trimmed: at or below the floor", 5}, {"the floor itself", n - intake.SeenCap - 1}, {"in the set", 150}, {"the mark", n}} {
		require.True(t, handleOnce(ctx, t, in, chatUpdate(tc.id, chat)), "%s: update %d sent again is skipped", tc.name, tc.id)
	}
	require.False(t, handleOnce(ctx, t, in, chatUpdate(skipped, chat)), "below the mark, above the floor, never handled: new")
	require.True(t, handleOnce(ctx, t, in, chatUpdate(skipped, chat)), "and its resend skipped")

	expireSeen(ctx, t, c, in, lane)
	require.Empty(t, laneKeys(ctx, t, c, in, lane), "nothing per chat left but the handled mark")
	for _, id := range []int64{1, 100, skipped, n} {
		require.True(t, handleOnce(ctx, t, in, chatUpdate(id, chat)), "set expired: update %d at or below the mark is skipped", id)
	}
	// Those resends made a new set beside the mark: its floor is the mark.
	fl, err = c.Do(ctx, c.B().Zrange().Key(in.Keys().Seen(lane)).Min("1").Max("1").Byscore().Build()).AsStrSlice()
	require.NoError(t, err)
	require.Equal(t, []string{fmt.Sprintf("f%020d:%020d", 0, n)}, fl, "a set made beside a mark takes it as its floor")
	require.False(t, handleOnce(ctx, t, in, chatUpdate(n+1, chat)), "above the mark: new")
	require.True(t, handleOnce(ctx, t, in, chatUpdate(3, chat)), "still skipped below the new set's floor")
	require.Equal(t, []string{in.Keys().Seen(lane)}, laneKeys(ctx, t, c, in, lane))
}

// A deployment upgraded from the one hash of floors ({T}:app:in:floor)
// handles nothing twice: a lane's floor still in the old hash counts while
// its set exists (the higher of the two floors), finishing an update of
// the lane moves it into the set, and MigrateFloors empties the rest in
// steps (into the sets that exist; a field whose set expired is dropped,
// the mark alone then says what is finished), after which the old hash is
// gone and every resend of a handled update is still skipped.
func TestInboxFloorsOfTheOldHashCountAndMoveIntoTheSets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	in, _ := newInbox(t)
	c := valkeyClient(t)
	k := in.Keys()
	member := func(id int64) string { return fmt.Sprintf("%020d:%020d", 0, id) }
	// The state a version of before left: marks at 200, sets of the ids
	// 137..200 but 190 (the lower ones trimmed), floors 136 in one hash.
	// Lanes 1 and 2 have their set; lanes 1000.. (many: several steps)
	// had theirs expire.
	const many = 1200
	old := c.B().Hset().Key(k.LegacyFloor()).FieldValue()
	for _, chat := range []int64{1, 2} {
		lane := strconv.FormatInt(chat, 10)
		require.NoError(t, c.Do(ctx, c.B().Hset().Key(k.Done(lane)).FieldValue().FieldValue(lane, "0:200").Build()).Error())
		z := c.B().Zadd().Key(k.Seen(lane)).ScoreMember()
		for id := int64(137); id <= 200; id++ {
			if id != 190 {
				z = z.ScoreMember(0, member(id))
			}
		}
		require.NoError(t, c.Do(ctx, z.Build()).Error())
		require.NoError(t, c.Do(ctx, c.B().Expire().Key(k.Seen(lane)).Seconds(3600).Build()).Error())
		old = old.FieldValue(lane, member(136))
	}
	for i := range many {
		lane := strconv.Itoa(1000 + i)
		require.NoError(t, c.Do(ctx, c.B().Hset().Key(k.Done(lane)).FieldValue().FieldValue(lane, "0:200").Build()).Error())
		old = old.FieldValue(lane, member(136))
	}
	require.NoError(t, c.Do(ctx, old.Build()).Error())

	require.True(t, handleOnce(ctx, t, in, chatUpdate(100, 1)), "below the old hash's floor: skipped")
	require.Equal(t, []string{k.Seen("1")}, laneKeys(ctx, t, c, in, "1"), "lane 1's floor moved into its set when its update finished")
	fl, err := c.Do(ctx, c.B().Zrange().Key(k.Seen("1")).Min("1").Max("1").Byscore().Build()).AsStrSlice()
	require.NoError(t, err)
	require.Equal(t, []string{"f" + member(136)}, fl)
	require.True(t, handleOnce(ctx, t, in, chatUpdate(136, 1)), "at the moved floor: skipped")
	require.False(t, handleOnce(ctx, t, in, chatUpdate(190, 1)), "above the floor, not in the set: new")

	// Lane 2 has a floor of its own in its set too, lower than the old
	// hash's (written by a process of this version while one of before
	// raised the old hash): the higher counts.
	require.NoError(t, c.Do(ctx, c.B().Zadd().Key(k.Seen("2")).ScoreMember().ScoreMember(1, "f"+member(120)).Build()).Error())
	moved, err := in.MigrateFloors(ctx)
	require.NoError(t, err)
	require.Equal(t, many+1, moved, "lane 2's and the many expired lanes' fields")
	n, err := c.Do(ctx, c.B().Exists().Key(k.LegacyFloor()).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "the old hash is gone")
	fl, err = c.Do(ctx, c.B().Zrange().Key(k.Seen("2")).Min("1").Max("1").Byscore().Build()).AsStrSlice()
	require.NoError(t, err)
	require.Equal(t, []string{"f" + member(136)}, fl, "one floor member, the higher")
	for _, tc := range []struct {
		name       string
		chat, id   int64
		wasHandled bool
	}{
		{"lane 2, below the moved floor", 2, 130, true},
		{"lane 2, in the set", 2, 150, true},
		{"lane 2, above the floor, not in the set", 2, 190, false},
		{"an expired lane, below its mark", 1000 + many - 1, 50, true},
		{"an expired lane, above its mark", 1000 + many - 1, 201, false},
	} {
		require.Equal(t, tc.wasHandled, handleOnce(ctx, t, in, chatUpdate(tc.id, tc.chat)), tc.name)
	}
	require.Empty(t, laneKeys(ctx, t, c, in, "1500"), "an expired lane keeps nothing but its mark")
	moved, err = in.MigrateFloors(ctx)
	require.NoError(t, err)
	require.Zero(t, moved, "nothing left to move")
}
