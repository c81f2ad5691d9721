package tapdata

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Callback data fits Telegram's 64 bytes for the largest palette, and a
// payload round-trips only for its chat.
func TestCallbackDataIsSignedAndFits(t *testing.T) {
	c := New("123:secret-token-for-the-test_0000000")
	d, err := c.Encode(KindGame, "0123456789abcdef", "p"+"9", -1001234567890)
	require.NoError(t, err)
	require.LessOrEqual(t, len(d), MaxData)
	got, err := c.Decode(d, -1001234567890)
	require.NoError(t, err)
	require.Equal(t, Data{Kind: KindGame, Scope: "0123456789abcdef", Arg: "p9"}, got)
	_, err = c.Decode(d, -1001234567891)
	require.ErrorIs(t, err, ErrSignature)
	_, err = New("another token_0000000000000000000000").Decode(d, -1001234567890)
	require.ErrorIs(t, err, ErrSignature)
	require.NotContains(t, d, "secret")
	_, err = c.Encode(KindGame, "a|b", "x", 1)
	require.Error(t, err)
}
