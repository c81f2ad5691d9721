package chats

import "embed"

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and loaded with luascript.Must (chatname.lua is sent with EVAL, its
// source read here).
//
//go:embed lua/*.lua
var luaFS embed.FS
