package app

import (
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
)

func TestParseCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want command
		ok   bool
	}{
		{"/start", command{Name: "start"}, true},
		{"/start@codemojex_test_bot", command{Name: "start"}, true},
		{"/START@Codemojex_Test_Bot", command{Name: "start"}, true},
		{"/start@other_bot", command{}, false},
		{"/guess 🍎 🍌 🍇 🍒", command{Name: "guess", Args: "🍎 🍌 🍇 🍒"}, true},
		{"/guess@codemojex_test_bot\n🍎🍌🍇🍒 ", command{Name: "guess", Args: "🍎🍌🍇🍒"}, true},
		{"/weight  42   5", command{Name: "weight", Args: "42   5"}, true},
		{"hello /start", command{}, false},
		{"/", command{}, false},
		{"/🍎", command{}, false},
		{"🍎🍌🍇🍒", command{}, false},
	} {
		got, ok := parseCommand(&models.Message{Text: tc.text}, "codemojex_test_bot")
		require.Equal(t, tc.ok, ok, tc.text)
		require.Equal(t, tc.want, got, tc.text)
	}
}
