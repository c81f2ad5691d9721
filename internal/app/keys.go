package app

import (
	"strconv"

	"github.com/codemojex/codemojex/internal/intake"
)

// keyspace builds the keys the app itself keeps (the audience's, the
// /healthz probe's, the boards', the audit stream and the broadcast
// previews; the intake's are intake.Keys; docs/keys.md lists every key).
type keyspace struct{ tag string }

func (k keyspace) prefix() string      { return "{" + k.tag + "}:app:" }
func (k keyspace) legacyChats() string { return k.prefix() + "chats" }
func (k keyspace) broadcasts() string  { return k.prefix() + "bc" }
func (k keyspace) health() string      { return k.prefix() + "health" }
func (k keyspace) audit() string       { return k.prefix() + "audit" }

// chats is the audience bucket of chat (intake.ChatBucket: chat mod
// intake.ChatBuckets): a set of decimal chat ids, an intset while it holds
// at most set-max-intset-entries (512) of them. legacyChats is the one set
// of every chat kept before the buckets (read, and moved to the buckets by
// audience.Migrate).
func (k keyspace) chats(chat int64) string { return k.chatsBucket(intake.ChatBucket(chat)) }

// chatsBucket is audience bucket b (0..intake.ChatBuckets-1).
func (k keyspace) chatsBucket(b int64) string {
	return k.prefix() + "chats:" + strconv.FormatInt(b, 10)
}

// chatName is the chat directory's bucket of chat (chat mod
// intake.ChatBuckets): hash chat id -> the name as shown; chatIndex is its
// search index's: sorted set of "<search key>\0<chat id>" (chatdir.go).
// legacyChatName and legacyChatIndex are the one hash and the one sorted
// set of every chat kept before the buckets (read, and moved to the
// buckets by chatDir.Migrate and by a chat's next record).
func (k keyspace) chatName(chat int64) string {
	return k.prefix() + "chatname:" + strconv.FormatInt(intake.ChatBucket(chat), 10)
}
func (k keyspace) chatIndex(chat int64) string {
	return k.chatIndexBucket((chat%chatIndexBuckets + chatIndexBuckets) % chatIndexBuckets)
}

// chatIndexBuckets is how many buckets the search index is split into (chat
// mod chatIndexBuckets): more than intake.ChatBuckets, since a chat has up
// to five members (its title from each of its first four words on, its
// username) and a sorted set stays a listpack only up to
// zset-max-listpack-entries (128) members: 4,096 buckets keep 3 members a
// chat compact up to about 170,000 chats (BenchmarkChatFind).
const chatIndexBuckets = 4096

// chatIndexBucket is the search index's bucket b (0..chatIndexBuckets-1).
func (k keyspace) chatIndexBucket(b int64) string {
	return k.prefix() + "chatidx:" + strconv.FormatInt(b, 10)
}
func (k keyspace) legacyChatName() string  { return k.prefix() + "chatname" }
func (k keyspace) legacyChatIndex() string { return k.prefix() + "chatidx" }

// board is chat's game board: hash g (game id), j (job id of its send).
func (k keyspace) board(chat int64) string {
	return k.prefix() + "board:" + strconv.FormatInt(chat, 10)
}

// comp holds the compositions of game id in chat (compose.lua).
func (k keyspace) comp(chat int64, id string) string {
	return k.prefix() + "comp:" + strconv.FormatInt(chat, 10) + ":" + id
}

// preview is broadcast preview id's hash (preview.go).
func (k keyspace) preview(id string) string { return k.prefix() + "bcp:" + id }
