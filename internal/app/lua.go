package app

import (
	"embed"

	"github.com/valkey-io/valkey-go"
)

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and run with EVALSHA (EVAL on NOSCRIPT) through valkey.Lua.
//
//go:embed lua/*.lua
var luaFS embed.FS

// mustScript loads lua/<name>.lua; a missing file is a build error, not a
// runtime one.
func mustScript(name string) *valkey.Lua {
	src, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("app: missing embedded script " + name)
	}
	return valkey.NewLuaScript(string(src))
}
