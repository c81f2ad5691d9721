package app

import "strconv"

// keyspace builds every key the app keeps (see the package doc).
type keyspace struct{ tag string }

func (k keyspace) prefix() string  { return "{" + k.tag + "}:app:" }
func (k keyspace) lock() string    { return k.prefix() + "poller" }
func (k keyspace) polled() string  { return k.prefix() + "polled" }
func (k keyspace) offset() string  { return k.prefix() + "in:offset" }
func (k keyspace) queue() string   { return k.prefix() + "in:queue" }
func (k keyspace) handled() string { return k.prefix() + "in:handled" }
func (k keyspace) journal(id int64) string {
	return k.prefix() + "j:" + strconv.FormatInt(id, 10)
}
func (k keyspace) chats() string      { return k.prefix() + "chats" }
func (k keyspace) broadcasts() string { return k.prefix() + "bc" }
