package chats

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// A chat's directory entry is one field of its bucket (the name as shown),
// its search members in its index bucket, and an entry written before the
// buckets (in the one hash: the name and its members in one field, or, in
// the format before that, the name alone and its members in "<id>:i") is
// read as it is and replaced whole by the chat's next name: its old index
// members and its fields of before go.
func TestChatDirectoryKeepsOneFieldAChatAndReplacesTheFormatBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := valkeytest.Start(t, valkeytest.Options{})
	c := srv.Client(t)
	keys := NewKeys(valkeytest.Namespace(t))
	dir, err := NewDirectory(c, keys.tag)
	require.NoError(t, err)
	// fields are chat's fields in its bucket and in the hash of before.
	fields := func(chat int64) map[string]string {
		m, err := c.Do(ctx, c.B().Hgetall().Key(keys.LegacyName()).Build()).AsStrMap()
		require.NoError(t, err)
		b, err := c.Do(ctx, c.B().Hgetall().Key(keys.Name(chat)).Build()).AsStrMap()
		require.NoError(t, err)
		for f, v := range b {
			m["bucket "+f] = v
		}
		return m
	}
	// index is chat's index bucket and the index of before.
	index := func(chat int64) []string {
		var out []string
		for _, k := range []string{keys.Index(chat), keys.LegacyIndex()} {
			ms, err := c.Do(ctx, c.B().Zrange().Key(k).Min("0").Max("-1").Build()).AsStrSlice()
			require.NoError(t, err)
			out = append(out, ms...)
		}
		return out
	}

	for _, tc := range []struct {
		name    string
		before  []string // chatname fields written first, in the format before
		chat    int64
		named   Name
		shown   string
		members []string
	}{
		{name: "new chat", chat: 7, named: Name{Title: "Ann Lee", Username: "ann"},
			shown: "Ann Lee (@ann)", members: []string{"ann lee\x007", "lee\x007", "ann\x007"}},
		{name: "renamed", chat: 7, named: Name{Title: "Bo"},
			shown: "Bo", members: []string{"bo\x007"}},
		{name: "format before", before: []string{"8", "Old Club", "8:i", "old club\x008\x1eclub\x008"}, chat: 8,
			named: Name{Title: "New"}, shown: "New", members: []string{"new\x008"}},
		{name: "one hash before the buckets", before: []string{"9", "Old Club\x1fold club\x009\x1eclub\x009"}, chat: 9,
			named: Name{Title: "Newer", Username: "nw"}, shown: "Newer (@nw)", members: []string{"newer\x009", "nw\x009"}},
		{name: "a long name is cut to a listpack value", chat: 10,
			named:   Name{Title: strings.Repeat("Ünïcode ", 12), Username: "long"},
			shown:   clip(strings.Repeat("Ünïcode ", 12), maxShown-len("…")) + "…",
			members: []string{clip(strings.TrimSpace(strings.Repeat("ünïcode ", 12)), maxKey) + "\x0010", "long\x0010"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				fv := c.B().Hset().Key(keys.LegacyName()).FieldValue()
				for i := 0; i < len(tc.before); i += 2 {
					fv = fv.FieldValue(tc.before[i], tc.before[i+1])
				}
				require.NoError(t, c.Do(ctx, fv.Build()).Error())
				id := valkeyField(tc.chat)
				require.NoError(t, c.Do(ctx, c.B().Zadd().Key(keys.LegacyIndex()).ScoreMember().
					ScoreMember(0, "old club\x00"+id).ScoreMember(0, "club\x00"+id).Build()).Error())
				name, err := dir.Name(ctx, tc.chat)
				require.NoError(t, err)
				require.Equal(t, "Old Club", name, "the format before is read as it is")
				found, err := dir.Find(ctx, "clu", 10)
				require.NoError(t, err)
				require.Contains(t, found, Ref{ID: tc.chat, Name: "Old Club"}, "and found")
			}
			require.NoError(t, c.Do(ctx, dir.record(tc.chat, tc.named)).Error())
			name, err := dir.Name(ctx, tc.chat)
			require.NoError(t, err)
			require.Equal(t, tc.shown, name)
			f := fields(tc.chat)
			require.NotContains(t, f, valkeyField(tc.chat)+":i", "one field a chat")
			require.NotContains(t, f, valkeyField(tc.chat), "none in the hash of before")
			require.Equal(t, tc.shown, f["bucket "+valkeyField(tc.chat)], "the name alone in the bucket")
			require.LessOrEqual(t, len(tc.shown), maxShown)
			for _, m := range tc.members {
				require.Contains(t, index(tc.chat), m)
				require.LessOrEqual(t, len(m), 64, "a listpack member")
			}
			for _, k := range []string{keys.Name(tc.chat), keys.Index(tc.chat)} {
				enc, err := c.Do(ctx, c.B().ObjectEncoding().Key(k).Build()).ToString()
				require.NoError(t, err)
				require.Equal(t, "listpack", enc, k)
			}
			for _, m := range index(tc.chat) {
				if strings.HasSuffix(m, "\x00"+valkeyField(tc.chat)) {
					require.Contains(t, tc.members, m, "no member of an old name is left")
				}
			}
			found, err := dir.Find(ctx, tc.members[0][:2], 10)
			require.NoError(t, err)
			require.Contains(t, found, Ref{ID: tc.chat, Name: tc.shown})
		})
	}
}

func valkeyField(chat int64) string { return strconv.FormatInt(chat, 10) }
