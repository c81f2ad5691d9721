package app

// keyspace builds the keys the app itself keeps (the tracked broadcasts',
// the /healthz probe's, the audit stream and the broadcast previews; the
// intake's are intake.Keys, the audience's and the chat directory's
// chats.Keys, the game boards' gameui.Keys; docs/keys.md lists every key).
type keyspace struct{ tag string }

func (k keyspace) prefix() string     { return "{" + k.tag + "}:app:" }
func (k keyspace) broadcasts() string { return k.prefix() + "bc" }
func (k keyspace) health() string     { return k.prefix() + "health" }
func (k keyspace) audit() string      { return k.prefix() + "audit" }

// preview is broadcast preview id's hash (preview.go).
func (k keyspace) preview(id string) string { return k.prefix() + "bcp:" + id }
