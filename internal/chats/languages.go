package chats

import (
	"context"
	"fmt"
	"strconv"
	"sync"

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
//
// It also keeps each private chat's user's Telegram language_code (as a
// catalog language, only when it is not the default) in {T}:app:ulang:<b>
// (RecordCode), so a broadcast knows the language of every chat, not only
// of those that chose one (Of, Census).
type Languages struct {
	c    valkey.Client
	keys Keys
	mu   sync.Mutex
	// codes is what this process recorded of each user's language_code
	// ("" the default), so an unchanged one costs no write; at most
	// knownMax entries, dropped whole when full.
	codes map[int64]string
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

// RecordCode returns the command that records lang as user's
// language_code's language (an HSET of its field in {T}:app:ulang:<b>;
// lang "" for the default: an HDEL, which writes nothing when there was
// none), for a caller's pipeline, and ok false (no command) when this
// process already recorded that language for user. Call CodeRecorded once
// the command succeeded. valkey-go recycles the command: use it once.
func (l *Languages) RecordCode(user int64, lang string) (cmd valkey.Completed, ok bool) {
	l.mu.Lock()
	v, known := l.codes[user]
	l.mu.Unlock()
	if known && v == lang {
		return valkey.Completed{}, false
	}
	f := strconv.FormatInt(user, 10)
	if lang == "" {
		return l.c.B().Hdel().Key(l.keys.Code(user)).Field(f).Build(), true
	}
	return l.c.B().Hset().Key(l.keys.Code(user)).FieldValue().FieldValue(f, lang).Build(), true
}

// CodeRecorded notes that user's language_code's language is recorded as
// lang (RecordCode's command succeeded).
func (l *Languages) CodeRecorded(user int64, lang string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.codes == nil || len(l.codes) >= knownMax {
		l.codes = make(map[int64]string)
	}
	l.codes[user] = lang
}

// Of returns the language of each chat of chats, in order: its /language
// choice (a user's, or a group's), else, for a private chat, its user's
// language_code's (RecordCode), else "" (the default). One pipelined round
// trip: an HMGET of each hash family per bucket the chats fall in.
// Errors: the server's.
func (l *Languages) Of(ctx context.Context, chats []int64) ([]string, error) {
	out := make([]string, len(chats))
	if len(chats) == 0 {
		return out, nil
	}
	idx := map[int64][]int{}
	order := []int64{}
	for i, c := range chats {
		b := Bucket(c)
		if _, ok := idx[b]; !ok {
			order = append(order, b)
		}
		idx[b] = append(idx[b], i)
	}
	cmds := make(valkey.Commands, 0, 2*len(order))
	for _, b := range order {
		fields := make([]string, len(idx[b]))
		for j, i := range idx[b] {
			fields[j] = strconv.FormatInt(chats[i], 10)
		}
		cmds = append(cmds, l.c.B().Hmget().Key(l.keys.LangBucket(b)).Field(fields...).Build(),
			l.c.B().Hmget().Key(l.keys.CodeBucket(b)).Field(fields...).Build())
	}
	res := l.c.DoMulti(ctx, cmds...)
	for k, b := range order {
		chosen, err := res[2*k].ToArray()
		if err != nil {
			return nil, fmt.Errorf("chats: languages: %w", err)
		}
		codes, err := res[2*k+1].ToArray()
		if err != nil {
			return nil, fmt.Errorf("chats: languages: %w", err)
		}
		for j, i := range idx[b] {
			if v, _ := chosen[j].ToString(); v != "" {
				out[i] = v
			} else if v, _ := codes[j].ToString(); v != "" && chats[i] > 0 {
				out[i] = v
			}
		}
	}
	return out, nil
}

// Census counts the chats of the audience's buckets buckets
// (0..Buckets-1) by language as Of reads it ("" the default), and returns
// the counts and how many chats it read. One pipelined round trip: per
// bucket, its audience set and both language hashes (so a bounded read:
// a caller samples buckets when the audience is large). The audience's
// legacy set (before the buckets) is not read. Errors: the server's.
func (l *Languages) Census(ctx context.Context, buckets []int64) (map[string]int, int, error) {
	counts := map[string]int{}
	if len(buckets) == 0 {
		return counts, 0, nil
	}
	cmds := make(valkey.Commands, 0, 3*len(buckets))
	for _, b := range buckets {
		cmds = append(cmds, l.c.B().Smembers().Key(l.keys.AudienceBucket(b)).Build(),
			l.c.B().Hgetall().Key(l.keys.LangBucket(b)).Build(),
			l.c.B().Hgetall().Key(l.keys.CodeBucket(b)).Build())
	}
	res := l.c.DoMulti(ctx, cmds...)
	n := 0
	for k := range buckets {
		members, err := res[3*k].AsStrSlice()
		if err != nil {
			return nil, 0, fmt.Errorf("chats: census: %w", err)
		}
		chosen, err := res[3*k+1].AsStrMap()
		if err != nil {
			return nil, 0, fmt.Errorf("chats: census: %w", err)
		}
		codes, err := res[3*k+2].AsStrMap()
		if err != nil {
			return nil, 0, fmt.Errorf("chats: census: %w", err)
		}
		for _, m := range members {
			lang := chosen[m]
			if lang == "" && len(m) > 0 && m[0] != '-' {
				lang = codes[m]
			}
			counts[lang]++
			n++
		}
	}
	return counts, n, nil
}
