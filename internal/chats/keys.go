package chats

import "strconv"

// Keys builds every key this package keeps, under the program's hash tag T
// (docs/keys.md lists them with the rest). The strings are those of the
// deployments before this package existed (the app kept them): they must
// stay byte-identical, since running deployments hold data under them
// (TestKeysAreTheDeployedOnes). Nothing outside this package writes them;
// Keys is exported for tests that seed or inspect the data.
//
//	{T}:app:chats:<b>     set         the audience's bucket b (Bucket): decimal chat ids
//	{T}:app:chats         set         the audience as one set, before the buckets (read; Audience.Migrate empties it)
//	{T}:app:chatname:<b>  hash        the directory's bucket b (Bucket): chat id -> the name as shown
//	{T}:app:chatidx:<i>   sorted set  the search index's bucket i (chat mod IndexBuckets): "<search key>\0<chat id>", score 0
//	{T}:app:chatname      hash        the directory as one hash, before the buckets (read; Directory.Migrate empties it)
//	{T}:app:chatidx       sorted set  the search index as one sorted set, before the buckets (read; emptied with it)
//	{T}:app:lang:<b>      hash        the languages' bucket b (Bucket): user id or group chat id -> its language (Languages)
//	{T}:app:ulang:<b>     hash        the app languages' bucket b (Bucket): user id -> its language_code's language when not the default (Languages)
type Keys struct{ tag string }

// NewKeys returns the keys under hash tag tag (lanes.DefaultTag unless the
// program says otherwise).
func NewKeys(tag string) Keys { return Keys{tag: tag} }

func (k Keys) prefix() string { return "{" + k.tag + "}:app:" }

// Buckets is how many buckets the audience and the directory are each
// split into (by chat id: Bucket): Valkey keeps a small set or hash as an
// intset or listpack, a few bytes per entry, where one set of every chat
// is a hash table of 40-100 bytes per entry. 1,024 keeps a bucket under
// Valkey 8's defaults (set-max-intset-entries 512,
// hash-max-listpack-entries 512) up to about 500,000 chats (docs/floods.md,
// the retention rule; beyond, raise them). It is the intake's
// intake.ChatBuckets (its handled marks), by the same rule; changing it
// would strand every chat recorded under the old count.
const Buckets = 1024

// Bucket is chat's bucket: chat mod Buckets, 0..Buckets-1 (a negative
// group id too).
func Bucket(chat int64) int64 { return (chat%Buckets + Buckets) % Buckets }

// IndexBuckets is how many buckets the search index is split into (chat
// mod IndexBuckets): more than Buckets, since a chat has up to five
// members (its title from each of its first four words on, its username)
// and a sorted set stays a listpack only up to zset-max-listpack-entries
// (128) members: 4,096 buckets keep 3 members a chat compact up to about
// 170,000 chats (BenchmarkChatFind).
const IndexBuckets = 4096

// Audience is the audience bucket of chat (Bucket): a set of decimal chat
// ids, an intset while it holds at most set-max-intset-entries (512) of
// them.
func (k Keys) Audience(chat int64) string { return k.AudienceBucket(Bucket(chat)) }

// AudienceBucket is audience bucket b (0..Buckets-1).
func (k Keys) AudienceBucket(b int64) string {
	return k.prefix() + "chats:" + strconv.FormatInt(b, 10)
}

// LegacyAudience is the one set of every chat kept before the buckets
// (read, and moved to the buckets by Audience.Migrate).
func (k Keys) LegacyAudience() string { return k.prefix() + "chats" }

// Name is the directory's bucket of chat (Bucket): hash chat id -> the
// name as shown.
func (k Keys) Name(chat int64) string {
	return k.prefix() + "chatname:" + strconv.FormatInt(Bucket(chat), 10)
}

// Index is the search index's bucket of chat (chat mod IndexBuckets):
// sorted set of "<search key>\0<chat id>" (directory.go).
func (k Keys) Index(chat int64) string {
	return k.IndexBucket((chat%IndexBuckets + IndexBuckets) % IndexBuckets)
}

// IndexBucket is the search index's bucket i (0..IndexBuckets-1).
func (k Keys) IndexBucket(i int64) string {
	return k.prefix() + "chatidx:" + strconv.FormatInt(i, 10)
}

// LegacyName and LegacyIndex are the one hash and the one sorted set of
// every chat kept before the buckets (read, and moved to the buckets by
// Directory.Migrate and by a chat's next record).
func (k Keys) LegacyName() string  { return k.prefix() + "chatname" }
func (k Keys) LegacyIndex() string { return k.prefix() + "chatidx" }

// Lang is the languages' bucket of id (Bucket; a user id or a group's
// negative chat id): hash id -> its language ("ru", "pt-BR").
func (k Keys) Lang(id int64) string { return k.LangBucket(Bucket(id)) }

// Code is the app languages' bucket of user (Bucket): hash user id -> the
// catalog language of the user's Telegram language_code ("ru", "pt-BR"),
// kept only when it is not i18n.Default (Languages.RecordCode).
func (k Keys) Code(user int64) string { return k.CodeBucket(Bucket(user)) }

// CodeBucket is the app languages' bucket b (0..Buckets-1).
func (k Keys) CodeBucket(b int64) string {
	return k.prefix() + "ulang:" + strconv.FormatInt(b, 10)
}

// LangBucket is the languages' bucket b (0..Buckets-1).
func (k Keys) LangBucket(b int64) string {
	return k.prefix() + "lang:" + strconv.FormatInt(b, 10)
}
