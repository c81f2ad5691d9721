package play

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/demo"
)

// TestAUserWritesOnlyInTheirChatOrTheGroup: the page may inject a message
// or a tap as a user of the cast only in that user's private chat or the
// group; anyone else, or another's chat, is refused.
func TestAUserWritesOnlyInTheirChatOrTheGroup(t *testing.T) {
	p := &Playground{cast: Cast()}
	for _, tc := range []struct {
		name       string
		user, chat int64
		ok         bool
	}{
		{"own private chat", 101, 101, true},
		{"the group", 102, GroupID, true},
		{"the admin in the group", demo.AdminID, GroupID, true},
		{"another user's chat", 102, 101, false},
		{"a staged chat", 101, FlooderID, false},
		{"not in the cast", FlooderID, FlooderID, false},
		{"another group", 101, -42, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := p.user(tc.user, tc.chat)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.user, u.ID)
		})
	}
}

// TestTheCastSpeaksFiveLanguagesAndHasTheAdmin: every user has a distinct
// id and a language_code, the languages the bot speaks are all there, and
// exactly one user is the demo's admin (ADMIN_IDS).
func TestTheCastSpeaksFiveLanguagesAndHasTheAdmin(t *testing.T) {
	ids, langs, admins := map[int64]bool{}, map[string]bool{}, 0
	for _, u := range Cast() {
		require.False(t, ids[u.ID], "id %d twice", u.ID)
		ids[u.ID] = true
		require.NotEmpty(t, u.Lang, u.Name)
		langs[u.Lang] = true
		if u.Admin {
			admins++
			require.Equal(t, demo.AdminID, u.ID)
		}
	}
	for _, l := range []string{"en", "ru", "es", "pt-br", "fa"} {
		require.True(t, langs[l], "a user speaks %s", l)
	}
	require.Equal(t, 1, admins)
}
