package chats

import (
	"context"
	"fmt"
	"strconv"

	"github.com/valkey-io/valkey-go"
)

// Languages keeps the language each user chose with /language (by user
// id) and each group's, set by its admins (by the group's chat id, < 0):
// a few bytes per chat that chose one, in Buckets hashes of
// {T}:app:lang:<b> (a listpack while at most hash-max-listpack-entries
// fields: to about 500,000 choices). A user or group that never chose has
// no field (its language is then the update's language_code's). Every
// command on those keys is one of its methods; the reads are also
// commands a caller pipelines with its own (GetCmd, ReadLang).
type Languages struct {
	c    valkey.Client
	keys Keys
}

// NewLanguages returns the languages on c under hash tag tag.
func NewLanguages(c valkey.Client, tag string) *Languages {
	return &Languages{c: c, keys: NewKeys(tag)}
}

// Keys returns the keys it keeps (tests read them).
func (l *Languages) Keys() Keys { return l.keys }

// GetCmd is the HGET of id's language, for a caller's pipeline; its
// result is read with ReadLang. valkey-go recycles the command: use it
// once.
func (l *Languages) GetCmd(id int64) valkey.Completed {
	return l.c.B().Hget().Key(l.keys.Lang(id)).Field(strconv.FormatInt(id, 10)).Build()
}

// ReadLang reads the result of a GetCmd: the language stored, "" when
// none. Errors: the server's.
func ReadLang(r valkey.ValkeyResult) (string, error) {
	v, err := r.ToString()
	if valkey.IsValkeyNil(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("chats: language: %w", err)
	}
	return v, nil
}

// Get returns id's language ("" when it chose none). Errors: the
// server's.
func (l *Languages) Get(ctx context.Context, id int64) (string, error) {
	return ReadLang(l.c.Do(ctx, l.GetCmd(id)))
}

// Set records lang as id's language ("" forgets it). Errors: the
// server's.
func (l *Languages) Set(ctx context.Context, id int64, lang string) error {
	f := strconv.FormatInt(id, 10)
	cmd := l.c.B().Hset().Key(l.keys.Lang(id)).FieldValue().FieldValue(f, lang).Build()
	if lang == "" {
		cmd = l.c.B().Hdel().Key(l.keys.Lang(id)).Field(f).Build()
	}
	if err := l.c.Do(ctx, cmd).Error(); err != nil {
		return fmt.Errorf("chats: language of %d: %w", id, err)
	}
	return nil
}
