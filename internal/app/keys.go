package app

// keyspace builds the keys the app itself keeps (the /healthz probe's;
// the intake's are intake.Keys, the audience's and the chat directory's
// chats.Keys, the game boards' gameui.Keys, the broadcasts' broadcast.Keys,
// the audit stream's admin.Keys; docs/keys.md lists every key).
type keyspace struct{ tag string }

func (k keyspace) prefix() string { return "{" + k.tag + "}:app:" }
func (k keyspace) health() string { return k.prefix() + "health" }
