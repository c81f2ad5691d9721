package gamestore

import (
	"strconv"
)

// keys builds every key of the store. It is the one place that knows the
// layout (see the package doc): every key is "{T}:g:<kind>:<chat_id>", T the
// program's hash tag, g the game store's segment.
type keys struct{ prefix string }

// newKeys returns the key builder for hash tag tag.
func newKeys(tag string) keys { return keys{prefix: "{" + tag + "}:g"} }
func (k keys) chat(kind string, chatID int64) string {
	return k.prefix + ":" + kind + ":" + strconv.FormatInt(chatID, 10)
}

// game is the hash of a chat's running game.
func (k keys) game(chatID int64) string { return k.chat("game", chatID) }

// top is the sorted set of a chat's leaderboard.
func (k keys) top(chatID int64) string { return k.chat("top", chatID) }

// names is the hash of display names of a chat's players.
func (k keys) names(chatID int64) string { return k.chat("names", chatID) }

// script returns the KEYS of cas.lua for a chat, in its order.
func (k keys) script(chatID int64) []string {
	return []string{k.game(chatID), k.top(chatID), k.names(chatID)}
}
