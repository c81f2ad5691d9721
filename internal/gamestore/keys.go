package gamestore

import (
	"strconv"
	"strings"
)

// DefaultPrefix is the key prefix used when New is given "".
const DefaultPrefix = "{cm}"

// hasHashTag reports whether key has a cluster hash tag by Valkey's rule:
// the first "{" is followed, later, by a "}" with at least one byte between.
func hasHashTag(key string) bool {
	i := strings.IndexByte(key, '{')
	return i >= 0 && strings.IndexByte(key[i+1:], '}') > 0
}

// keys builds every key of the store. It is the one place that knows the
// layout (see the package doc).
type keys struct{ prefix string }

// newKeys returns the key builder for prefix: "" means DefaultPrefix, and a
// prefix without a hash tag is wrapped in one ("cm" becomes "{cm}"), so all
// keys share a cluster slot.
func newKeys(prefix string) keys {
	switch {
	case prefix == "":
		prefix = DefaultPrefix
	case !hasHashTag(prefix):
		prefix = "{" + prefix + "}"
	}
	return keys{prefix: prefix}
}

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
