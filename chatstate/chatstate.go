// Package chatstate owns the delivery state of Telegram chats that the
// notifier (producer) and the worker (consumer) share: which chats blocked
// the bot (inactive), where a migrated group went (aliases), and which
// Telegram message id a sent job became (for later edits), and which jobs
// had a send with an unknown outcome (sent again at most once).
//
// A Store is built on its own valkey.Client (chatstate.New), so neither
// side reaches into the other's (or the lanes store's) client. Its keys
// live under the lanes store's hash tag, in the notifier's segment, so they
// share the lanes' cluster slot (see docs/keys.md):
//
//	{T}:n:inactive       set     chat ids (decimal) that blocked the bot
//	{T}:n:alias          hash    old chat id -> new chat id (migrated groups)
//	{T}:n:msg:<job id>   string  Telegram message id the job was sent as; PX SentTTL
//	{T}:n:unk:<job id>   string  "1": a send of the job had an unknown outcome (no answer); PX SentTTL
package chatstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
)

// ErrInvalid is wrapped by every bad-input error (alias of a chat to
// itself or to 0, malformed job id, message id < 1); nothing was written.
var ErrInvalid = errors.New("chatstate: invalid argument")

// maxAliasHops bounds Resolve's walk along migration aliases.
const maxAliasHops = 4

// Store reads and writes the delivery state of chats. Safe for concurrent
// use.
type Store struct {
	c       valkey.Client
	tag     string
	sentTTL time.Duration
}

// New returns a Store on client c, with keys under hash tag tag (the lanes
// store's, lanes.Store.Tag) and sent message ids kept for sentTTL (<= 0
// means 24 h).
func New(c valkey.Client, tag string, sentTTL time.Duration) *Store {
	if sentTTL <= 0 {
		sentTTL = 24 * time.Hour
	}
	return &Store{c: c, tag: tag, sentTTL: sentTTL}
}

func (s *Store) prefix() string                { return "{" + s.tag + "}:n:" }
func (s *Store) inactiveKey() string           { return s.prefix() + "inactive" }
func (s *Store) aliasKey() string              { return s.prefix() + "alias" }
func (s *Store) sentKey(id lanes.JobID) string { return s.prefix() + "msg:" + string(id) }
func (s *Store) unknownKey(id lanes.JobID) string {
	return s.prefix() + "unk:" + string(id)
}

func member(chatID int64) string { return strconv.FormatInt(chatID, 10) }

func invalid(msg string) error { return fmt.Errorf("%w: %s", ErrInvalid, msg) }

// MarkInactive records that chatID blocked the bot (or deactivated, or
// kicked it; Telegram answered 403): the notifier's Broadcast skips it and
// Notify refuses notifications to it until MarkActive. Called by the worker.
func (s *Store) MarkInactive(ctx context.Context, chatID int64) error {
	err := s.c.Do(ctx, s.c.B().Sadd().Key(s.inactiveKey()).Member(member(chatID)).Build()).Error()
	if err != nil {
		return fmt.Errorf("chatstate: mark chat %d inactive: %w", chatID, err)
	}
	return nil
}

// MarkActive clears the inactive mark of chatID (and of the chat it migrated
// to, if any). Handlers call it whenever the chat talks to the bot. One
// round trip when chatID has no alias (SREM and HGET pipelined); a
// migrated chat's target is resolved and cleared in further ones. Errors:
// the server's.
func (s *Store) MarkActive(ctx context.Context, chatID int64) error {
	return s.MarkActiveWith(ctx, chatID)
}

// MarkActiveWith is MarkActive with the caller's commands also sent in its
// first round trip (pipelined after MarkActive's SREM and HGET, on the
// Store's client; valkey-go recycles them, so they must not be reused), so
// a caller that keeps per-update bookkeeping of its own on the same server
// pays one round trip for both. Errors: the first of the also commands'
// errors (wrapped, its index in also named; a Valkey nil reply, e.g. an
// HGET of a missing field, is none), else MarkActive's.
func (s *Store) MarkActiveWith(ctx context.Context, chatID int64, also ...valkey.Completed) error {
	_, err := s.MarkActiveRead(ctx, chatID, also...)
	return err
}

// MarkActiveRead is MarkActiveWith that also returns the also commands'
// results, in order (for a caller that reads with them: a Valkey nil
// reply is a result, not an error). Errors: as MarkActiveWith's.
func (s *Store) MarkActiveRead(ctx context.Context, chatID int64, also ...valkey.Completed) ([]valkey.ValkeyResult, error) {
	cmds := make(valkey.Commands, 0, 2+len(also))
	cmds = append(cmds,
		s.c.B().Srem().Key(s.inactiveKey()).Member(member(chatID)).Build(),
		s.c.B().Hget().Key(s.aliasKey()).Field(member(chatID)).Build())
	cmds = append(cmds, also...)
	res := s.c.DoMulti(ctx, cmds...)
	for i, r := range res[2:] {
		if err := r.Error(); err != nil && !valkey.IsValkeyNil(err) {
			return nil, fmt.Errorf("chatstate: command %d sent with mark chat %d active: %w", i, chatID, err)
		}
	}
	if err := res[0].Error(); err != nil {
		return nil, fmt.Errorf("chatstate: mark chat %d active: %w", chatID, err)
	}
	if err := s.followAlias(ctx, chatID, res[1]); err != nil {
		return nil, err
	}
	return res[2:], nil
}

// followAlias clears the inactive mark of the chat chatID migrated to, if
// its alias (the HGET result r) names one.
func (s *Store) followAlias(ctx context.Context, chatID int64, r valkey.ValkeyResult) error {
	next, ok, err := aliasOf(r)
	if err != nil {
		return fmt.Errorf("chatstate: resolve chat %d: %w", chatID, err)
	}
	if !ok {
		return nil
	}
	// Rare: a migrated chat; the first hop is taken, follow the rest.
	target, err := s.walk(ctx, chatID, next, maxAliasHops-1)
	if err != nil {
		return err
	}
	err = s.c.Do(ctx, s.c.B().Srem().Key(s.inactiveKey()).Member(member(target)).Build()).Error()
	if err != nil {
		return fmt.Errorf("chatstate: mark chat %d active: %w", chatID, err)
	}
	return nil
}

// InactiveCount is how many chats are marked inactive (SCARD). Errors:
// the server's.
func (s *Store) InactiveCount(ctx context.Context) (int, error) {
	n, err := s.c.Do(ctx, s.c.B().Scard().Key(s.inactiveKey()).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("chatstate: inactive chats: %w", err)
	}
	return int(n), nil
}

// IsInactive reports whether chatID is marked inactive.
func (s *Store) IsInactive(ctx context.Context, chatID int64) (bool, error) {
	v, err := s.c.Do(ctx, s.c.B().Sismember().Key(s.inactiveKey()).Member(member(chatID)).Build()).AsBool()
	if err != nil {
		return false, fmt.Errorf("chatstate: chat %d inactive?: %w", chatID, err)
	}
	return v, nil
}

// SetAlias records that chat from migrated to chat to (Telegram answered
// 400 with migrate_to_chat_id, a group upgraded to a supergroup): the
// notifier sends later messages for from to to. Called by the worker.
// Errors: ErrInvalid when from or to is 0 or from == to; the server's error.
func (s *Store) SetAlias(ctx context.Context, from, to int64) error {
	if from == 0 || to == 0 || from == to {
		return invalid(fmt.Sprintf("alias %d -> %d", from, to))
	}
	err := s.c.Do(ctx, s.c.B().Hset().Key(s.aliasKey()).FieldValue().FieldValue(member(from), member(to)).Build()).Error()
	if err != nil {
		return fmt.Errorf("chatstate: alias %d -> %d: %w", from, to, err)
	}
	return nil
}

// Resolve follows migration aliases from chatID (at most 4 hops) and returns
// the chat id to send to (chatID itself when it has no alias).
func (s *Store) Resolve(ctx context.Context, chatID int64) (int64, error) {
	return s.walk(ctx, chatID, chatID, maxAliasHops)
}

// walk follows at most hops aliases from cur, one HGET each; chatID (where
// the walk began) names the chat in errors.
func (s *Store) walk(ctx context.Context, chatID, cur int64, hops int) (int64, error) {
	for range hops {
		next, ok, err := aliasOf(s.c.Do(ctx, s.c.B().Hget().Key(s.aliasKey()).Field(member(cur)).Build()))
		if err != nil {
			return 0, fmt.Errorf("chatstate: resolve chat %d: %w", chatID, err)
		}
		if !ok {
			return cur, nil
		}
		cur = next
	}
	return cur, nil
}

// aliasOf reads an HGET of the alias hash: the chat id it names, ok false
// when there is none (or the value is not a chat id, which ends a walk).
func aliasOf(r valkey.ValkeyResult) (int64, bool, error) {
	v, err := r.ToString()
	if valkey.IsValkeyNil(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	next, err := strconv.ParseInt(v, 10, 64)
	if err != nil || next == 0 {
		return 0, false, nil
	}
	return next, true, nil
}

// wholeMax is the largest alias hash or inactive set ResolveMany reads whole
// (one HGETALL or SMEMBERS, a short block of the server) instead of asking
// per chat.
const wholeMax = 10_000

// ResolveMany resolves aliases and inactive marks for many chats and drops
// chats that resolve to one already listed. It returns the resolved chat
// ids, in first-seen order, and whether each is inactive. One round trip
// reads how many aliases and inactive marks there are; an empty one is not
// read further, one no larger than the chats asked about (and at most
// 10,000 entries) is read whole and looked up here, a larger one is asked
// 1,000 chats per command, all in one pipelined round trip. Errors: the
// server's.
func (s *Store) ResolveMany(ctx context.Context, ids []int64) ([]int64, []bool, error) {
	sizes := s.c.DoMulti(ctx, s.c.B().Hlen().Key(s.aliasKey()).Build(), s.c.B().Scard().Key(s.inactiveKey()).Build())
	nAlias, err := sizes[0].AsInt64()
	if err != nil {
		return nil, nil, fmt.Errorf("chatstate: aliases: %w", err)
	}
	nInactive, err := sizes[1].AsInt64()
	if err != nil {
		return nil, nil, fmt.Errorf("chatstate: inactive chats: %w", err)
	}
	whole := func(n int64, asked int) bool { return n <= wholeMax && n <= int64(asked) }
	var out []int64
	switch {
	case nAlias == 0:
		out = dedupe(ids, func(id int64) int64 { return id })
	case whole(nAlias, len(ids)):
		aliases, err := s.c.Do(ctx, s.c.B().Hgetall().Key(s.aliasKey()).Build()).AsStrMap()
		if err != nil {
			return nil, nil, fmt.Errorf("chatstate: aliases: %w", err)
		}
		out = dedupe(ids, func(id int64) int64 { return follow(id, aliases) })
	default:
		if out, err = s.resolveEach(ctx, ids); err != nil {
			return nil, nil, err
		}
	}
	inactive := make([]bool, len(out))
	switch {
	case nInactive == 0:
	case whole(nInactive, len(out)):
		marked, err := s.c.Do(ctx, s.c.B().Smembers().Key(s.inactiveKey()).Build()).AsStrSlice()
		if err != nil {
			return nil, nil, fmt.Errorf("chatstate: inactive chats: %w", err)
		}
		set := make(map[string]bool, len(marked))
		for _, m := range marked {
			set[m] = true
		}
		for i, id := range out {
			inactive[i] = set[member(id)]
		}
	default:
		if err := s.inactiveEach(ctx, out, inactive); err != nil {
			return nil, nil, err
		}
	}
	return out, inactive, nil
}

// dedupe maps ids through to and keeps the first of each result, in order.
func dedupe(ids []int64, to func(int64) int64) []int64 {
	out := make([]int64, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if t := to(id); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// follow is Resolve over aliases read whole: at most maxAliasHops hops, a
// value that is not a chat id ends the walk.
func follow(chatID int64, aliases map[string]string) int64 {
	cur := chatID
	for range maxAliasHops {
		v, ok := aliases[member(cur)]
		if !ok {
			return cur
		}
		next, err := strconv.ParseInt(v, 10, 64)
		if err != nil || next == 0 {
			return cur
		}
		cur = next
	}
	return cur
}

// lookupChunk is how many chats one command of resolveEach and
// inactiveEach asks about.
const lookupChunk = 1000

// chunkCommands returns one command per lookupChunk chats of ids, in
// order, each built by build from its chats' members (decimal ids).
func chunkCommands(ids []int64, build func(members []string) valkey.Completed) valkey.Commands {
	cmds := make(valkey.Commands, 0, (len(ids)+lookupChunk-1)/lookupChunk)
	for start := 0; start < len(ids); start += lookupChunk {
		part := ids[start:min(start+lookupChunk, len(ids))]
		members := make([]string, len(part))
		for i, id := range part {
			members[i] = member(id)
		}
		cmds = append(cmds, build(members))
	}
	return cmds
}

// resolveEach resolves ids with HMGET, 1,000 chats per command in one
// pipelined round trip (a chat with an alias then walks its chain with
// Resolve), and dedupes the targets.
func (s *Store) resolveEach(ctx context.Context, ids []int64) ([]int64, error) {
	cmds := chunkCommands(ids, func(fields []string) valkey.Completed {
		return s.c.B().Hmget().Key(s.aliasKey()).Field(fields...).Build()
	})
	out := make([]int64, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for c, r := range s.c.DoMulti(ctx, cmds...) {
		vals, err := r.ToArray()
		if err != nil {
			return nil, fmt.Errorf("chatstate: aliases: %w", err)
		}
		for i, id := range ids[c*lookupChunk : min((c+1)*lookupChunk, len(ids))] {
			target := id
			if v, err := vals[i].ToString(); err == nil && v != "" {
				// Rare: follow the whole chain one by one.
				if target, err = s.Resolve(ctx, id); err != nil {
					return nil, err
				}
			}
			if !seen[target] {
				seen[target] = true
				out = append(out, target)
			}
		}
	}
	return out, nil
}

// inactiveEach sets inactive[i] for each chat of ids marked inactive, with
// SMISMEMBER, 1,000 chats per command in one pipelined round trip.
func (s *Store) inactiveEach(ctx context.Context, ids []int64, inactive []bool) error {
	cmds := chunkCommands(ids, func(members []string) valkey.Completed {
		return s.c.B().Smismember().Key(s.inactiveKey()).Member(members...).Build()
	})
	for c, r := range s.c.DoMulti(ctx, cmds...) {
		flags, err := r.AsIntSlice()
		if err != nil {
			return fmt.Errorf("chatstate: inactive chats: %w", err)
		}
		for i, f := range flags {
			inactive[c*lookupChunk+i] = f == 1
		}
	}
	return nil
}

// RecordMessageID records the Telegram message id that job id was sent as,
// for SentMessageID, for the Store's sent TTL. Called by the worker after
// each successful sendMessage, before the job is acked. Errors: ErrInvalid
// for a malformed id or messageID < 1; the server's error.
func (s *Store) RecordMessageID(ctx context.Context, id lanes.JobID, messageID int) error {
	if err := id.Validate(); err != nil {
		return invalid(err.Error())
	}
	if messageID <= 0 {
		return invalid(fmt.Sprintf("message id %d of job %s", messageID, id))
	}
	err := s.c.Do(ctx, s.c.B().Set().Key(s.sentKey(id)).Value(strconv.Itoa(messageID)).
		Px(s.sentTTL).Build()).Error()
	if err != nil {
		return fmt.Errorf("chatstate: record message id of job %s: %w", id, err)
	}
	return nil
}

// SentMessageID returns the Telegram message id the worker recorded for job
// id (the first part's job, for a split text); ok is false while the job is
// not sent yet (or was never, or its record expired after the sent TTL).
// Errors: ErrInvalid for a malformed id; the server's error.
func (s *Store) SentMessageID(ctx context.Context, id lanes.JobID) (int, bool, error) {
	if err := id.Validate(); err != nil {
		return 0, false, invalid(err.Error())
	}
	v, err := s.c.Do(ctx, s.c.B().Get().Key(s.sentKey(id)).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("chatstate: message id of job %s: %w", id, err)
	}
	return int(v), true, nil
}

// MarkUnknownOutcome records that a send of job id got no answer after its
// request was written (Telegram may have delivered it), for the Store's
// sent TTL, and reports whether this is the first such send of the job
// (true), so the worker sends it again at most once. Errors: ErrInvalid for
// a malformed id; the server's error (nothing recorded).
func (s *Store) MarkUnknownOutcome(ctx context.Context, id lanes.JobID) (bool, error) {
	if err := id.Validate(); err != nil {
		return false, invalid(err.Error())
	}
	err := s.c.Do(ctx, s.c.B().Set().Key(s.unknownKey(id)).Value("1").Nx().Px(s.sentTTL).Build()).Error()
	if valkey.IsValkeyNil(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("chatstate: record unknown outcome of job %s: %w", id, err)
	}
	return true, nil
}
