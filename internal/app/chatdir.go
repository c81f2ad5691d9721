package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/go-telegram/bot/models"
	"github.com/valkey-io/valkey-go"
)

// chatDir owns the chat directory: how each chat that wrote to the bot is
// named, as the bot last saw it (a group's title, a user's name and
// @username), and a lexicographic index of those names for the console's
// search ({T}:app:chatname and {T}:app:chatidx, written by chatname.lua
// only when a name changes). It is as large as the audience, one entry per
// known chat (five index members at most: four starts of its title and its
// username).
type chatDir struct {
	c      valkey.Client
	keys   keyspace
	script string // chatname.lua's source, sent with EVAL in the update's pipeline

	// known caches the names this process recorded (chat id -> shown
	// name), so a chat's later updates send nothing: an EVAL on every
	// update cost the server 7.0 µs per update, 21 times the 0.33 µs of
	// the rest of the chat bookkeeping; sent only on a change it is 0.34
	// (BenchmarkChatBookkeeping, commandstats, median of 7 windows). At most knownMax entries (then emptied:
	// only a cache, refilled on the next update of each chat).
	mu    sync.Mutex
	known map[int64]string
}

// knownMax bounds chatDir.known (about 100 bytes an entry).
const knownMax = 20_000

// unchanged reports whether this process already recorded chat as named n.
func (d *chatDir) unchanged(chat int64, n chatName) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.known[chat]
	return ok && v == n.shown()
}

// remember notes that chat is recorded as named n.
func (d *chatDir) remember(chat int64, n chatName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.known == nil || len(d.known) >= knownMax {
		d.known = make(map[int64]string)
	}
	d.known[chat] = n.shown()
}

// chatName is a chat as the directory knows it.
type chatName struct {
	Title    string // a group's title, or a user's first and last name
	Username string // without the @, "" when none
}

// nameOf returns how the chat of update u is named, ok false when u names
// no chat.
func nameOf(u *models.Update) (int64, chatName, bool) {
	var c *models.Chat
	switch {
	case u.Message != nil:
		c = &u.Message.Chat
	case u.EditedMessage != nil:
		c = &u.EditedMessage.Chat
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		c = &u.CallbackQuery.Message.Message.Chat
	case u.MyChatMember != nil:
		c = &u.MyChatMember.Chat
	case u.ChatMember != nil:
		c = &u.ChatMember.Chat
	}
	if c == nil || c.ID == 0 {
		return 0, chatName{}, false
	}
	title := c.Title
	if title == "" {
		title = strings.TrimSpace(c.FirstName + " " + c.LastName)
	}
	return c.ID, chatName{Title: title, Username: c.Username}, true
}

// shown is how the console shows n: "Title (@username)".
func (n chatName) shown() string {
	switch {
	case n.Username == "":
		return n.Title
	case n.Title == "":
		return "@" + n.Username
	}
	return n.Title + " (@" + n.Username + ")"
}

// searchKey is the index form of a name: lowercased, NUL-free.
func searchKey(s string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "\x00", ""))
}

// maxTitleWords is how many words of a title are searchable as a start
// (the title from each of its first maxTitleWords words on).
const maxTitleWords = 4

// searchKeys are the index forms chat n is found by: its title from each
// of its first words on ("rust lovers club", "lovers club", "club"), and its
// username.
func searchKeys(n chatName) []string {
	var out []string
	words := strings.Fields(searchKey(n.Title))
	for i := range min(len(words), maxTitleWords) {
		out = append(out, strings.Join(words[i:], " "))
	}
	if k := searchKey(n.Username); k != "" {
		out = append(out, k)
	}
	return out
}

// record is the command recording chat's name n, for the pipeline of the
// update's chat bookkeeping (chatMiddleware): EVAL, so it needs no script
// load first (it writes only when the name changed).
func (d *chatDir) record(chat int64, n chatName) valkey.Completed {
	id := strconv.FormatInt(chat, 10)
	args := []string{id, strings.ReplaceAll(n.shown(), "\x1f", "")}
	for _, k := range searchKeys(n) {
		args = append(args, k+"\x00"+id)
	}
	return d.c.B().Eval().Script(d.script).Numkeys(2).Key(d.keys.chatName(), d.keys.chatIndex()).Arg(args...).Build()
}

// Name returns how chat is named ("" when the bot never saw it named).
func (d *chatDir) Name(ctx context.Context, chat int64) (string, error) {
	v, err := d.c.Do(ctx, d.c.B().Hget().Key(d.keys.chatName()).Field(strconv.FormatInt(chat, 10)).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("app: chat %d name: %w", chat, err)
	}
	return shownOf(v), nil
}

// shownOf is the name as shown of a chatname field's value (chatname.lua:
// the name, \x1f, its search members; the name alone before that format).
func shownOf(v string) string {
	name, _, _ := strings.Cut(v, "\x1f")
	return name
}

// Find returns up to n chats whose title, a word of its title on, or
// username starts with prefix (case-insensitive; a leading @ is ignored),
// in name order, with their names: one ZRANGE BYLEX and one HMGET, O(log
// chats + n).
func (d *chatDir) Find(ctx context.Context, prefix string, n int) ([]ChatRef, error) {
	k := searchKey(strings.TrimPrefix(strings.TrimSpace(prefix), "@"))
	if k == "" || n < 1 {
		return nil, nil
	}
	ms, err := d.c.Do(ctx, d.c.B().Zrange().Key(d.keys.chatIndex()).Min("["+k).Max("["+k+"\xff").Bylex().Limit(0, int64(n)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("app: find chat %q: %w", prefix, err)
	}
	var ids []string
	seen := map[string]bool{}
	for _, m := range ms {
		_, id, ok := strings.Cut(m, "\x00")
		if ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	names, err := d.c.Do(ctx, d.c.B().Hmget().Key(d.keys.chatName()).Field(ids...).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("app: find chat %q: %w", prefix, err)
	}
	out := make([]ChatRef, 0, len(ids))
	for i, id := range ids {
		chat, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			continue
		}
		name, _ := names[i].ToString()
		out = append(out, ChatRef{ID: chat, Name: shownOf(name)})
	}
	return out, nil
}
