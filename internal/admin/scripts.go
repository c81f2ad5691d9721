package admin

import "embed"

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and loaded with luascript.Must.
//
//go:embed lua/*.lua
var luaFS embed.FS
