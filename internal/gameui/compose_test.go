package gameui

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/luascript"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// compose.lua changes a player's composition once per update: a tap
// handled again (same epoch, update_id not above the last applied) changes
// nothing; a new epoch's lower update ids apply; add stops at the code
// length (-1), back at empty (-2); each player has their own.
func TestComposeAppliesEachTapOnce(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	u := &UI{c: c, keys: Keys{Tag: valkeytest.Namespace(t)}, composeScript: luascript.Must(luaFS, "compose")}
	st := game.State{ID: "0123456789abcdef", Config: game.DefaultConfig()}
	const chat, ann, bob = int64(-100777), int64(1), int64(2)
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		user, epoch int64
		id          int64
		op, idx     string
		want        int64
	}{
		{"ann adds", ann, 0, 10, "add", "0", 1},
		{"the same tap again", ann, 0, 10, "add", "1", 0},
		{"an older tap", ann, 0, 9, "back", "", 0},
		{"bob's own", bob, 0, 11, "back", "", -2},
		{"ann adds more", ann, 0, 12, "add", "1", 1},
		{"ann adds more", ann, 0, 13, "add", "2", 1},
		{"ann completes", ann, 0, 14, "add", "3", 1},
		{"ann is full", ann, 0, 15, "add", "4", -1},
		{"a new epoch's lower id", ann, 1, 2, "back", "", 1},
		{"that epoch's tap again", ann, 1, 2, "back", "", 0},
	} {
		got, err := u.compose(ctx, chat, st, tc.user, tc.epoch, tc.id, tc.op, tc.idx, "Ann")
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	comps, err := u.compositions(ctx, chat, st)
	require.NoError(t, err)
	require.Len(t, comps, 1, "bob's back on empty wrote nothing")
	require.Equal(t, ann, comps[0].User)
	require.Equal(t, []string{"🍎", "🍌", "🍇"}, comps[0].Symbols)
}
