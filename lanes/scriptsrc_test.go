package lanes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const testLuaLib = `-- header: the preamble every script keeps
-- (second header line)

local function a(x) return x end

-- b calls a
local function b(x)
  return a(x) + 1
end

-- c is called by nobody below; d( in this comment is no call
local function c(x)
  return x -- b( here neither
end

local function d(x)
  return c(x)
end
`

// defines reports which of names src defines as a local function.
func defines(src string, names ...string) map[string]bool {
	got := map[string]bool{}
	for _, n := range names {
		got[n] = strings.Contains(src, "local function "+n+"(")
	}
	return got
}

func TestScriptSourceCarriesTheHelpersItCallsDirectlyOrThroughOthers(t *testing.T) {
	t.Parallel()
	lib, err := parseLuaLib(testLuaLib)
	require.NoError(t, err)
	cases := []struct {
		name string
		body string
		want map[string]bool
	}{
		{"none", "return 1\n", map[string]bool{"a": false, "b": false, "c": false, "d": false}},
		{"one without uses", "return a(1)\n", map[string]bool{"a": true, "b": false, "c": false, "d": false}},
		{"through another", "return b(1)\n", map[string]bool{"a": true, "b": true, "c": false, "d": false}},
		{"through another below", "return d(1)\n", map[string]bool{"a": false, "b": false, "c": true, "d": true}},
		{"a comment is no use", "-- d(1) and b(2)\nreturn a(1) -- c(3)\n", map[string]bool{"a": true, "b": false, "c": false, "d": false}},
		{"a string is code", "return \"b\" -- c\n", map[string]bool{"a": true, "b": true, "c": false, "d": false}},
		{"a helper passed as a value", "local f = a\nreturn f(1)\n", map[string]bool{"a": true, "b": false, "c": false, "d": false}},
		{"called without parentheses", "return a '7'\n", map[string]bool{"a": true, "b": false, "c": false, "d": false}},
		{"called after a string holding --", "return '--' .. a(5)\n", map[string]bool{"a": true, "b": false, "c": false, "d": false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := lib.source(tc.body)
			require.Equal(t, tc.want, defines(src, "a", "b", "c", "d"))
			require.True(t, strings.HasPrefix(src, "-- header: the preamble every script keeps\n-- (second header line)\n"))
			require.True(t, strings.HasSuffix(src, "\n"+tc.body), "the script's own text comes last, unchanged")
			if tc.want["b"] {
				require.Less(t, strings.Index(src, "local function a("), strings.Index(src, "local function b("), "helpers keep the library's order")
				require.Contains(t, src, "-- b calls a\nlocal function b(", "a helper keeps the comment above it")
			}
		})
	}
}

func TestParseLuaLibRefusesCodeOutsideHelpers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  string
		want string
	}{
		{"top-level local", "-- h\nlocal x = 1\nlocal function a() return x end\n", "outside a helper"},
		{"top-level call", "local function a() end\nredis.call('DEL', 'k')\n", "outside a helper"},
		{"defined twice", "local function a() end\nlocal function a() end\n", "defined twice"},
		{"no helper", "-- only a comment\n", "no helper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseLuaLib(tc.src)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The claim carries what its acks need (touch and override_period, reached
// only through mark_settled) and not the helpers only other scripts call.
func TestClaimScriptCarriesOnlyTheCommonHelpersItReaches(t *testing.T) {
	t.Parallel()
	common, err := luaFS.ReadFile("lua/common.lua")
	require.NoError(t, err)
	lib, err := parseLuaLib(string(common))
	require.NoError(t, err)
	claim, err := luaFS.ReadFile("lua/claim.lua")
	require.NoError(t, err)
	got := defines(lib.source(string(claim)), "ack_job", "mark_settled", "touch", "override_period", "check_lease", "wake_if_first")
	require.Equal(t, map[string]bool{
		"ack_job": true, "mark_settled": true, "touch": true, "override_period": true,
		"check_lease": false, "wake_if_first": false,
	}, got)
}
