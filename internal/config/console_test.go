package config_test

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/config"
)

// TestConsoleTokenNeedsEntropy: CONSOLE_TOKEN is refused at start unless
// it has at least 32 characters and 128 bits of estimated entropy, so a
// repeated word, a run of the alphabet or a few characters repeated are
// refused however long they are, and the tokens the documentation tells
// how to make pass; the refusal says how to make one and never quotes the
// token.
func TestConsoleTokenNeedsEntropy(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"the issue's password repeated", "passwordpasswordpasswordpassword", false},
		{"a word repeated at any length", strings.Repeat("password", 40), false},
		{"two characters alternating", strings.Repeat("ab", 32), false},
		{"one character", strings.Repeat("a", 64), false},
		{"the alphabet and the digits in order", "abcdefghijklmnopqrstuvwxyz0123456789", false},
		{"digits counting up", strings.Repeat("0123456789", 6), false},
		{"a word and digits repeated", strings.Repeat("password1234", 8), false},
		{"32 random digits: at most 106 bits", "42416661491591335267980626246863", false},
		{"too short though random (openssl rand -hex 15)", "7ae96896ea85792607e5b93d16782e", false},
		{"openssl rand -hex 32", "ee9c1dcea10db126fb166c3f9a418b23d77e16ad9ac4c98e06be34c4cf431a18", true},
		{"openssl rand -hex 16", "69a3e1fe6303b89a13e416e6bd88c388", true},
		{"openssl rand -base64 32", "jQ3A5ACes7JEgvKkNyp3/6OUUEhytm6tPSbN8tPAL8c=", true},
		{"base64url of 32 bytes (the demo's)", "xR-P2TWfsHjmi8LaxLZORpYEEuflTzz6REIosnMWYmg", true},
		{"64 random digits", "3290173728551118813314976219884385719705324893031422077392548237", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := config.ValidateConsoleToken(tc.token)
			_, ferr := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "CONSOLE_ADDR=127.0.0.1:8081", "CONSOLE_TOKEN=" + tc.token})
			if tc.ok {
				require.NoError(t, err, "estimated %.0f bits", config.ConsoleTokenBits(tc.token))
				require.NoError(t, ferr)
				return
			}
			require.Error(t, err)
			require.Equal(t, err, ferr, "config.FromEnv refuses it alike")
			var ce *config.Error
			require.True(t, errors.As(err, &ce))
			require.Equal(t, "CONSOLE_TOKEN", ce.Var)
			require.Contains(t, err.Error(), "make one with: openssl rand -hex 32")
			require.NotContains(t, err.Error(), tc.token)
		})
	}
}

// TestConsoleTokenBitsCountsWindowsNotLength: the estimate is log2 of the
// alphabet of the classes used times the distinct 3-character windows
// that are not runs (+2): repeating a token adds nothing, a new window
// adds one character's worth.
func TestConsoleTokenBitsCountsWindowsNotLength(t *testing.T) {
	for _, tc := range []struct {
		token           string
		chars, alphabet int // effective length, alphabet of the classes used
	}{
		{"password", 8, 26},                       // 6 windows + 2
		{strings.Repeat("password", 4), 10, 26},   // pas ass ssw swo wor ord rdp dpa, + 2
		{strings.Repeat("password", 400), 10, 26}, // no more
		{"Password1!", 10, 26 + 26 + 10 + 33},     // all four classes
		{strings.Repeat("a", 40), 2, 26},          // every window a run: the +2 only
		{"zyxwvutsrqponmlk", 2, 26},               // a run down
		{"ab", 2, 26},                             // shorter than a window
		{"ab12ab12", 6, 36},                       // ab1 b12 12a 2ab, + 2
	} {
		want := float64(tc.chars) * math.Log2(float64(tc.alphabet))
		require.InDelta(t, want, config.ConsoleTokenBits(tc.token), 1e-9, tc.token)
	}
}

// TestTrustedProxiesParse: CONSOLE_TRUSTED_PROXIES takes CIDRs and single
// addresses (as /32 or /128), comma-separated, spaces ignored; anything
// else is refused naming the variable and quoting the bad entry.
func TestTrustedProxiesParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // prefixes; nil with bad
		bad  string
	}{
		{"", nil, ""},
		{"127.0.0.1", []string{"127.0.0.1/32"}, ""},
		{"10.1.2.3/8, ::1 ,fd00::/8", []string{"10.0.0.0/8", "::1/128", "fd00::/8"}, ""},
		{"::ffff:10.0.0.1", []string{"10.0.0.1/32"}, ""},
		{"::ffff:10.0.0.0/104", []string{"10.0.0.0/8"}, ""},
		{"10.0.0.0/8,proxy.local", nil, `"proxy.local"`},
		{"10.0.0.0/33", nil, `"10.0.0.0/33"`},
		{"10.0.0.1:80", nil, `"10.0.0.1:80"`},
	} {
		got, err := config.ParseTrustedProxies(tc.in)
		_, ferr := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, "CONSOLE_TRUSTED_PROXIES=" + tc.in})
		if tc.bad != "" {
			var ce *config.Error
			require.True(t, errors.As(err, &ce), tc.in)
			require.Equal(t, "CONSOLE_TRUSTED_PROXIES", ce.Var)
			require.Contains(t, ce.Want, tc.bad)
			require.Equal(t, err, ferr, "config.FromEnv refuses it alike")
			continue
		}
		require.NoError(t, err, tc.in)
		require.NoError(t, ferr, tc.in)
		var want []netip.Prefix
		for _, p := range tc.want {
			want = append(want, netip.MustParsePrefix(p))
		}
		require.Equal(t, want, got, tc.in)
	}
}

// TestAConsoleTokenThatIsTheBotTokenIsRefusedAsSuch: the console's token
// set to the bot token is refused by the rule that names the mistake, not
// by the length or entropy check (which a token of the bot's shape may
// fail or pass), and the error never repeats it.
func TestAConsoleTokenThatIsTheBotTokenIsRefusedAsSuch(t *testing.T) {
	for _, tok := range []string{
		"123456789:" + strings.Repeat("A", 35),           // fails the length-or-entropy check too
		"7351946208:AAGx9Qm2VbT4kLp8Zr1NwYc6Hd3Js0FeU5o", // a real token's shape: passes it
	} {
		_, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + tok, "CONSOLE_ADDR=127.0.0.1:8081", "CONSOLE_TOKEN=" + tok})
		var ce *config.Error
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "CONSOLE_TOKEN", ce.Var)
		require.Contains(t, err.Error(), "not the bot token")
		require.NotContains(t, err.Error(), tok)
	}
}
