package app

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// A chat's directory entry is one field (name and search members), and an
// entry written in the format before (the name alone, its members in
// "<id>:i") is read as it is and replaced whole by the chat's next name:
// its old index members and its second field go.
func TestChatDirectoryKeepsOneFieldAChatAndReplacesTheFormatBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := valkeytest.Start(t, valkeytest.Options{})
	c := srv.Client(t)
	keys := keyspace{tag: valkeytest.Namespace(t)}
	src, err := luaFS.ReadFile("lua/chatname.lua")
	require.NoError(t, err)
	dir := &chatDir{c: c, keys: keys, script: string(src)}
	fields := func() map[string]string {
		m, err := c.Do(ctx, c.B().Hgetall().Key(keys.chatName()).Build()).AsStrMap()
		require.NoError(t, err)
		return m
	}
	index := func() []string {
		ms, err := c.Do(ctx, c.B().Zrange().Key(keys.chatIndex()).Min("0").Max("-1").Build()).AsStrSlice()
		require.NoError(t, err)
		return ms
	}

	for _, tc := range []struct {
		name    string
		before  []string // chatname fields written first, in the format before
		chat    int64
		named   chatName
		shown   string
		members []string
	}{
		{name: "new chat", chat: 7, named: chatName{Title: "Ann Lee", Username: "ann"},
			shown: "Ann Lee (@ann)", members: []string{"ann lee\x007", "lee\x007", "ann\x007"}},
		{name: "renamed", chat: 7, named: chatName{Title: "Bo"},
			shown: "Bo", members: []string{"bo\x007"}},
		{name: "format before", before: []string{"8", "Old Club", "8:i", "old club\x008\x1eclub\x008"}, chat: 8,
			named: chatName{Title: "New"}, shown: "New", members: []string{"new\x008"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				require.NoError(t, c.Do(ctx, c.B().Hset().Key(keys.chatName()).FieldValue().
					FieldValue(tc.before[0], tc.before[1]).FieldValue(tc.before[2], tc.before[3]).Build()).Error())
				require.NoError(t, c.Do(ctx, c.B().Zadd().Key(keys.chatIndex()).ScoreMember().
					ScoreMember(0, "old club\x008").ScoreMember(0, "club\x008").Build()).Error())
				name, err := dir.Name(ctx, tc.chat)
				require.NoError(t, err)
				require.Equal(t, tc.before[1], name, "the format before is read as it is")
			}
			require.NoError(t, c.Do(ctx, dir.record(tc.chat, tc.named)).Error())
			name, err := dir.Name(ctx, tc.chat)
			require.NoError(t, err)
			require.Equal(t, tc.shown, name)
			f := fields()
			require.NotContains(t, f, valkeyField(tc.chat)+":i", "one field a chat")
			for _, m := range tc.members {
				require.Contains(t, index(), m)
			}
			for _, m := range index() {
				if strings.HasSuffix(m, "\x00"+valkeyField(tc.chat)) {
					require.Contains(t, tc.members, m, "no member of an old name is left")
				}
			}
			found, err := dir.Find(ctx, tc.members[0][:2], 10)
			require.NoError(t, err)
			require.Contains(t, found, ChatRef{ID: tc.chat, Name: tc.shown})
		})
	}
}

func valkeyField(chat int64) string { return strconv.FormatInt(chat, 10) }
