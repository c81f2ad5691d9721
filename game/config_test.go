package game

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	tests := []struct {
		name string
		cfg  Config
		msg  string // "" = valid
	}{
		{"default", ok, ""},
		{"two symbols", Config{Palette: []string{"🍎", "🍌"}, CodeLength: 4, MaxAttempts: 10}, ""},
		{"FE0F and ZWJ symbols", Config{Palette: []string{"❤️", "👍🏽", "👨‍👩‍👧", "🇫🇷"}, CodeLength: 4, MaxAttempts: 10}, ""},
		{"one symbol", Config{Palette: []string{"🍎"}, CodeLength: 4, MaxAttempts: 10}, "palette has 1 symbols"},
		{"eleven symbols", Config{Palette: []string{"🍎", "🍌", "🍇", "🍒", "🍋", "🥝", "🍐", "🍑", "🍍", "🥭", "🍓"}, CodeLength: 4, MaxAttempts: 10}, "palette has 11"},
		{"duplicate", Config{Palette: []string{"🍎", "🍌", "🍎"}, CodeLength: 4, MaxAttempts: 10}, "are the same emoji"},
		{"duplicate up to FE0F", Config{Palette: []string{"❤️", "❤"}, CodeLength: 4, MaxAttempts: 10}, "are the same emoji"},
		{"two clusters", Config{Palette: []string{"🍎🍌", "🍇"}, CodeLength: 4, MaxAttempts: 10}, "not a single grapheme"},
		{"letter", Config{Palette: []string{"a", "🍇"}, CodeLength: 4, MaxAttempts: 10}, "not an emoji"},
		{"space", Config{Palette: []string{" ", "🍇"}, CodeLength: 4, MaxAttempts: 10}, "not an emoji"},
		{"code length 0", Config{Palette: ok.Palette, CodeLength: 0, MaxAttempts: 10}, "code length 0"},
		{"attempts 51", Config{Palette: ok.Palette, CodeLength: 4, MaxAttempts: 51}, "max attempts 51"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.msg == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestDefaultConfigIsACopy(t *testing.T) {
	a := DefaultConfig()
	a.Palette[0] = "🐶"
	require.Equal(t, "🍎", DefaultConfig().Palette[0])
}

func TestCustomConfigGame(t *testing.T) {
	cfg := Config{Palette: []string{"❤️", "⭐"}, CodeLength: 3, MaxAttempts: 2}
	st, err := New(cfg, rngFor(0, 1, 0))
	require.NoError(t, err)
	require.Equal(t, []string{"❤️", "⭐", "❤️"}, st.Secret)
	_, _, err = st.Guess("❤⭐❤⭐")
	require.ErrorContains(t, err, "needs exactly 3 emojis, and this one has 4")
	st, res, err := st.Guess("❤ ⭐️ ❤")
	require.NoError(t, err)
	require.Equal(t, Won, st.Status)
	require.Equal(t, 20, res.Points)
}
