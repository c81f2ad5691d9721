package app

// keyspace builds the keys the app itself keeps (the audience's and the
// /healthz probe's; the intake's are intake.Keys; docs/keys.md lists every
// key).
type keyspace struct{ tag string }

func (k keyspace) prefix() string     { return "{" + k.tag + "}:app:" }
func (k keyspace) chats() string      { return k.prefix() + "chats" }
func (k keyspace) broadcasts() string { return k.prefix() + "bc" }
func (k keyspace) health() string     { return k.prefix() + "health" }
