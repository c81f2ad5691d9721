package app

import (
	"context"
	"fmt"
	"strconv"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/config"
)

// ownerKey is the key that names the bot whose keys live under hash tag
// tag: {T}:app:owner, the bot's user id in decimal (set once, by the first
// process of the bot to learn its identity; docs/keys.md).
func ownerKey(tag string) string { return "{" + tag + "}:app:owner" }

// claimNamespace records bot as the owner of the keys under tag, unless
// another bot owns them: two bots (two tokens) on one tag would read each
// other's chats, queues and broadcasts. Errors: a *config.Error naming
// VALKEY_KEY_TAG when another bot owns the tag (the process stops: exit 2);
// the server's.
func claimNamespace(ctx context.Context, c valkey.Client, tag string, bot int64) error {
	id := strconv.FormatInt(bot, 10)
	key := ownerKey(tag)
	owner, err := c.Do(ctx, c.B().Set().Key(key).Value(id).Nx().Get().Build()).ToString()
	if valkey.IsValkeyNil(err) || err == nil && owner == id {
		return nil
	}
	if err != nil {
		return fmt.Errorf("app: the owner of the keys under tag %q: %w", tag, err)
	}
	return &config.Error{Var: "VALKEY_KEY_TAG", Want: fmt.Sprintf(
		"the keys under tag %q belong to another bot (user id %s; this one is %d): give each bot its own VALKEY_KEY_TAG "+
			"(docs/operations.md, several bots on one Valkey), or delete %s if that bot is gone", tag, owner, bot, key)}
}
