// Package luascript is the program's one loader of Valkey Lua scripts.
// Every package that runs scripts keeps them in lua/*.lua beside its Go
// files, each with a header comment naming its KEYS and ARGV, embeds the
// directory (//go:embed lua/*.lua) and loads each script once with Must;
// valkey.Lua runs it with EVALSHA and falls back to EVAL on NOSCRIPT (after
// SCRIPT FLUSH or a restart).
package luascript

import (
	"embed"

	"github.com/valkey-io/valkey-go"
)

// Must returns the script lua/<name>.lua of fsys. A missing script is a
// build mistake, not a runtime condition: Must panics, at construction.
func Must(fsys embed.FS, name string) *valkey.Lua {
	src, err := fsys.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("luascript: missing embedded script lua/" + name + ".lua")
	}
	return valkey.NewLuaScript(string(src))
}
