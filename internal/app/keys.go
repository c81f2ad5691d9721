package app

import "strconv"

// keyspace builds the keys the app itself keeps (the tracked broadcasts',
// the /healthz probe's, the boards', the audit stream and the broadcast
// previews; the intake's are intake.Keys, the audience's and the chat
// directory's chats.Keys; docs/keys.md lists every key).
type keyspace struct{ tag string }

func (k keyspace) prefix() string     { return "{" + k.tag + "}:app:" }
func (k keyspace) broadcasts() string { return k.prefix() + "bc" }
func (k keyspace) health() string     { return k.prefix() + "health" }
func (k keyspace) audit() string      { return k.prefix() + "audit" }

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
