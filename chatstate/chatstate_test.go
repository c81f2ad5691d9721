package chatstate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/chatstate"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// A recorded message id reads back until its TTL (24 h by default), a job
// never sent reads as not found, and bad input is refused.
func TestSentMessageIDRoundTripsAndExpires(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	tag := valkeytest.Namespace(t)
	s := chatstate.New(c, tag, 0)
	ctx := t.Context()
	id := lanes.NewMinter().New()
	_, ok, err := s.SentMessageID(ctx, id)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, s.RecordMessageID(ctx, id, 4242))
	msg, ok, err := s.SentMessageID(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 4242, msg)
	require.ErrorIs(t, s.RecordMessageID(ctx, id, 0), chatstate.ErrInvalid)
	require.ErrorIs(t, s.RecordMessageID(ctx, "job_x", 1), chatstate.ErrInvalid)

	ttl, err := c.Do(ctx, c.B().Pttl().Key("{"+tag+"}:n:msg:"+string(id)).Build()).AsInt64()
	require.NoError(t, err)
	require.Greater(t, ttl, (23 * time.Hour).Milliseconds())
	require.LessOrEqual(t, ttl, (24 * time.Hour).Milliseconds())
}

// Aliases chain (a group migrated twice resolves to the last chat),
// MarkActive clears the mark of the chat and of its alias target, and
// ResolveMany dedupes chats that resolve to the same target.
func TestAliasesAndInactiveMarks(t *testing.T) {
	t.Parallel()
	s := chatstate.New(valkeytest.Shared(t).Client(t), valkeytest.Namespace(t), 0)
	ctx := t.Context()
	require.ErrorIs(t, s.SetAlias(ctx, 1, 1), chatstate.ErrInvalid)
	require.ErrorIs(t, s.SetAlias(ctx, 0, 1), chatstate.ErrInvalid)
	require.NoError(t, s.SetAlias(ctx, -1, -2))
	require.NoError(t, s.SetAlias(ctx, -2, -3))
	to, err := s.Resolve(ctx, -1)
	require.NoError(t, err)
	require.Equal(t, int64(-3), to)

	require.NoError(t, s.MarkInactive(ctx, -3))
	require.NoError(t, s.MarkInactive(ctx, 7))
	in, err := s.IsInactive(ctx, -3)
	require.NoError(t, err)
	require.True(t, in)

	ids, inactive, err := s.ResolveMany(ctx, []int64{-1, -2, -3, 7, 8})
	require.NoError(t, err)
	require.Equal(t, []int64{-3, 7, 8}, ids)
	require.Equal(t, []bool{true, true, false}, inactive)

	require.NoError(t, s.MarkActive(ctx, -1))
	in, err = s.IsInactive(ctx, -3)
	require.NoError(t, err)
	require.False(t, in, "MarkActive of the old chat clears its alias target")
}

// ResolveMany gives the same answer whether it reads the aliases and
// inactive marks whole (no more of them than chats asked about) or asks per
// chat (more of them), and reads nothing further when there are none.
func TestResolveManyReadsWholeOrPerChatAlike(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	ctx := t.Context()
	empty := chatstate.New(c, valkeytest.Namespace(t)+"e", 0)
	ids, inactive, err := empty.ResolveMany(ctx, []int64{1, 2, 1})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, ids)
	require.Equal(t, []bool{false, false}, inactive)

	s := chatstate.New(c, valkeytest.Namespace(t), 0)
	require.NoError(t, s.SetAlias(ctx, -1, -2))
	require.NoError(t, s.SetAlias(ctx, -2, -3))
	require.NoError(t, s.SetAlias(ctx, 5, 6))
	for _, id := range []int64{-3, 7, 9} {
		require.NoError(t, s.MarkInactive(ctx, id))
	}
	for name, tc := range map[string]struct {
		ask      []int64
		want     []int64
		inactive []bool
	}{
		"per chat (fewer chats than marks)": {ask: []int64{-1, 7}, want: []int64{-3, 7}, inactive: []bool{true, true}},
		"whole (more chats than marks)": {
			ask:      []int64{-1, -2, -3, 7, 8, 5, 6, 9, 8},
			want:     []int64{-3, 7, 8, 6, 9},
			inactive: []bool{true, true, false, false, true},
		},
	} {
		ids, inactive, err := s.ResolveMany(ctx, tc.ask)
		require.NoError(t, err, name)
		require.Equal(t, tc.want, ids, name)
		require.Equal(t, tc.inactive, inactive, name)
	}
}

// MarkActiveWith runs the caller's commands along with MarkActive's: their
// writes land, the chat's mark and its alias chain's target's mark (at most
// 4 hops, as Resolve) are cleared, and a failing caller's command is
// reported as an error.
func TestMarkActiveWithRunsCallersCommandsAndClearsAliasTarget(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	tag := valkeytest.Namespace(t)
	s := chatstate.New(c, tag, 0)
	ctx := t.Context()
	extra := "{" + tag + "}:extra"
	require.NoError(t, s.SetAlias(ctx, -1, -2))
	require.NoError(t, s.SetAlias(ctx, -2, -3))
	for _, id := range []int64{-1, -3, 5, 9} {
		require.NoError(t, s.MarkInactive(ctx, id))
	}
	for name, tc := range map[string]struct {
		chat    int64
		cleared []int64
	}{
		"no alias":       {chat: 5, cleared: []int64{5}},
		"migrated twice": {chat: -1, cleared: []int64{-1, -3}},
	} {
		require.NoError(t, s.MarkActiveWith(ctx, tc.chat, c.B().Sadd().Key(extra).Member(name).Build()), name)
		for _, id := range tc.cleared {
			in, err := s.IsInactive(ctx, id)
			require.NoError(t, err, name)
			require.False(t, in, "%s: chat %d", name, id)
		}
		added, err := c.Do(ctx, c.B().Sismember().Key(extra).Member(name).Build()).AsBool()
		require.NoError(t, err, name)
		require.True(t, added, name)
	}
	in, err := s.IsInactive(ctx, 9)
	require.NoError(t, err)
	require.True(t, in, "a chat not asked about keeps its mark")

	// Four hops at most: -10 -> -11 -> -12 -> -13 -> -14 -> -15 stops at -14.
	for from := int64(-10); from > -15; from-- {
		require.NoError(t, s.SetAlias(ctx, from, from-1))
	}
	for _, id := range []int64{-14, -15} {
		require.NoError(t, s.MarkInactive(ctx, id))
	}
	to, err := s.Resolve(ctx, -10)
	require.NoError(t, err)
	require.Equal(t, int64(-14), to)
	require.NoError(t, s.MarkActiveWith(ctx, -10))
	for id, want := range map[int64]bool{-14: false, -15: true} {
		in, err := s.IsInactive(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, in, "chat %d", id)
	}

	require.NoError(t, c.Do(ctx, c.B().Set().Key(extra+":s").Value("x").Build()).Error())
	err = s.MarkActiveWith(ctx, 7, c.B().Sadd().Key(extra+":s").Member("y").Build())
	require.ErrorContains(t, err, "WRONGTYPE")
}
