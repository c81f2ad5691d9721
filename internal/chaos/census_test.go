package chaos

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"
)

// keyClass is what a key left in Valkey once the system settled is, for
// issue 31's "nothing left growing": kept by design with no expiry,
// expiring, a leftover (a key the settled state has none of, or one
// written with an expiry, found without one), or unknown (no key of
// docs/keys.md).
type keyClass string

const (
	classKept     keyClass = "kept"
	classExpiring keyClass = "expiring"
	classLeftover keyClass = "leftover"
	classUnknown  keyClass = "unknown"
)

// keyClasses is the order the report lists the classes in.
var keyClasses = []keyClass{classKept, classExpiring, classLeftover, classUnknown}

// keyRule is what docs/keys.md says of a key once the system settled.
type keyRule int

const (
	// ruleKept: kept by design (a chat's record, a game's scores, the
	// audience, a queue's dead letters and overrides), with or without
	// an expiry.
	ruleKept keyRule = iota
	// ruleExpires: always written with an expiry (PX, PEXPIRE).
	ruleExpires
	// ruleNone: the settled state has none (a job, a lease, a lane with
	// members, a count of jobs in flight, a form migrated away): left
	// without an expiry, it is a leftover.
	ruleNone
)

// keyPattern is one row of docs/keys.md: the key after "{T}:", where
// <x> is one segment (no colon) and <...> the rest of the key (colons
// allowed: a coalesce name, an idempotency key, a process id), its TYPE,
// and its rule.
type keyPattern struct {
	pattern, typ string
	rule         keyRule
}

// keyPatterns is docs/keys.md's table (lanes/keys.go, notifier/keys.go,
// chatstate/chatstate.go, internal/*/keys.go). A queue's job hash is
// ruleNone unless the job is dead-lettered (censusKey.Dead).
var keyPatterns = []keyPattern{
	{"s:rate", "zset", ruleExpires},
	{"s:pause", "string", ruleKept},
	{"s:pauseend", "string", ruleExpires},
	{"s:nopause", "string", ruleNone},
	{"s:budgetwait", "string", ruleExpires},
	{"s:floor:<e>", "zset", ruleExpires},
	{"s:learned", "hash", ruleKept},
	{"s:qpause", "hash", ruleKept},
	{"s:pace:<g>", "zset", ruleExpires},
	{"s:pacecfg", "hash", ruleKept},
	{"s:weight", "hash", ruleKept},
	{"q:<Q>:ring", "list", ruleNone},
	{"q:<Q>:inring", "set", ruleNone},
	{"q:<Q>:lane:<g>", "zset", ruleNone},
	{"q:<Q>:job:<id>", "hash", ruleNone},
	{"q:<Q>:rate", "zset", ruleExpires},
	{"q:<Q>:leases", "zset", ruleNone},
	{"q:<Q>:claimers", "zset", ruleKept},
	{"q:<Q>:inflight", "hash", ruleNone},
	{"q:<Q>:pending", "string", ruleNone},
	{"q:<Q>:delayed", "zset", ruleNone},
	{"q:<Q>:parked", "zset", ruleKept},
	{"q:<Q>:due", "string", ruleKept},
	{"q:<Q>:dead", "zset", ruleKept},
	{"q:<Q>:recovered", "string", ruleKept},
	{"q:<Q>:glimit", "hash", ruleKept},
	{"q:<Q>:turn", "hash", ruleNone},
	{"q:<Q>:co:<...>", "string", ruleExpires},
	{"n:bc:<id>", "hash", ruleExpires},
	{"n:bc:<id>:seen", "set", ruleExpires},
	{"n:bc:<id>:jobs", "list", ruleExpires},
	{"n:bc:<id>:out", "zset", ruleExpires},
	{"n:bc:<id>:stop", "string", ruleExpires},
	{"n:bcs", "zset", ruleNone},
	{"n:paidhalt", "string", ruleExpires},
	{"n:once:m:<...>", "string", ruleExpires},
	{"n:once:bc:<...>", "string", ruleExpires},
	{"n:inactive", "set", ruleKept},
	{"n:alias", "hash", ruleKept},
	{"n:msg:<id>", "string", ruleExpires},
	{"n:unk:<id>", "string", ruleExpires},
	{"g:game:<chat>", "hash", ruleExpires},
	{"g:top:<chat>", "zset", ruleKept},
	{"g:names:<chat>", "hash", ruleKept},
	{"app:poller", "string", ruleExpires},
	{"app:polled", "string", ruleExpires},
	{"app:in:offset", "string", ruleKept},
	{"app:in:sync", "string", ruleExpires},
	{"app:in:rebases", "string", ruleKept},
	{"app:in:rebasing", "string", ruleNone},
	{"app:in:done:<b>", "hash", ruleKept},
	{"app:in:done", "hash", ruleNone},
	{"app:in:seen:<g>", "zset", ruleExpires},
	{"app:in:floor", "hash", ruleNone},
	{"app:in:rec", "zset", ruleNone},
	{"app:fl:b", "zset", ruleExpires},
	{"app:fl:n", "zset", ruleExpires},
	{"app:fl:limited", "zset", ruleExpires},
	{"app:j:<update>", "hash", ruleNone},
	{"app:chats:<b>", "set", ruleKept},
	{"app:chats", "set", ruleNone},
	{"app:chatname:<b>", "hash", ruleKept},
	{"app:chatidx:<b>", "zset", ruleKept},
	{"app:chatname", "hash", ruleNone},
	{"app:chatidx", "zset", ruleNone},
	{"app:lang:<b>", "hash", ruleKept},
	{"app:ulang:<b>", "hash", ruleKept},
	{"app:bc", "hash", ruleKept},
	{"app:procs", "zset", ruleExpires},
	{"app:proc:<...>", "hash", ruleExpires},
	{"app:health", "string", ruleExpires},
	{"app:board:<chat>", "hash", ruleExpires},
	{"app:comp:<chat>:<game>", "hash", ruleExpires},
	{"app:bcp:<id>", "hash", ruleExpires},
	{"app:bcl:<...>", "string", ruleExpires},
	{"app:owner", "string", ruleKept},
	{"app:hist", "stream", ruleKept},
	{"app:audit", "stream", ruleKept},
	{"app:audit:once:<...>", "string", ruleExpires},
}

// keyClassifier classifies the keys of the bot whose hash tag is tag:
// keyPatterns, each as an anchored expression (res[i] for pats[i]).
type keyClassifier struct {
	pats []keyPattern
	res  []*regexp.Regexp
}

// newKeyClassifier compiles keyPatterns for the keys of tag.
func newKeyClassifier(tag string) keyClassifier {
	seg := regexp.MustCompile(`<[a-zA-Z]+>`)
	kc := keyClassifier{pats: keyPatterns}
	for _, p := range keyPatterns {
		body := strings.ReplaceAll(regexp.QuoteMeta(p.pattern), `<\.\.\.>`, ".+")
		kc.res = append(kc.res, regexp.MustCompile("^"+regexp.QuoteMeta("{"+tag+"}:")+seg.ReplaceAllLiteralString(body, "[^:]+")+"$"))
	}
	return kc
}

// censusKey is one key the census found: its name, TYPE, PTTL (ms; -1
// without an expiry), MEMORY USAGE (bytes) and, for a job hash, whether
// its id is in its queue's dead set.
type censusKey struct {
	Key   string
	Type  string
	PTTL  int64
	Bytes int64
	Dead  bool
}

// classify classifies k by docs/keys.md (keyPatterns): its class and, for a leftover or an
// unknown key, why. A key of no pattern, or of a pattern's name with
// another TYPE, is unknown; an expiring key (PTTL > 0) is expiring
// whatever its rule; without an expiry, ruleKept is kept (and so is a
// dead-lettered job's hash), ruleExpires and ruleNone leftovers.
func (kc keyClassifier) classify(k censusKey) (keyClass, string) {
	for i, p := range kc.pats {
		if !kc.res[i].MatchString(k.Key) {
			continue
		}
		switch {
		case k.Type != p.typ:
			return classUnknown, fmt.Sprintf("a %s where docs/keys.md has a %s (%s)", k.Type, p.typ, p.pattern)
		case k.PTTL > 0:
			return classExpiring, ""
		case p.rule == ruleKept, p.pattern == "q:<Q>:job:<id>" && k.Dead:
			return classKept, ""
		case p.rule == ruleExpires:
			return classLeftover, fmt.Sprintf("no expiry on a key written with one (%s)", p.pattern)
		default:
			return classLeftover, fmt.Sprintf("no expiry on a key the settled state has none of (%s)", p.pattern)
		}
	}
	return classUnknown, "no key of docs/keys.md"
}

// censusFigures are the key census's figures: by class, the keys and
// their MEMORY USAGE (bytes), and the 10 largest keys as "key (bytes)".
type censusFigures struct {
	CensusKeys    map[keyClass]int   `json:"census_keys,omitempty"`
	CensusBytes   map[keyClass]int64 `json:"census_bytes,omitempty"`
	CensusLargest []string           `json:"census_largest,omitempty"`
	// Where used_memory went once settled (memParts; absent in runs
	// recorded before it).
	memParts
}

// takeCensus classifies keys (classifyKey), fills in f's census figures
// and names each leftover or unknown key to problem.
func (f *censusFigures) takeCensus(keys []censusKey, problem func(string, ...any)) {
	f.CensusKeys, f.CensusBytes = map[keyClass]int{}, map[keyClass]int64{}
	kc := newKeyClassifier(tag)
	for _, k := range keys {
		c, why := kc.classify(k)
		f.CensusKeys[c]++
		f.CensusBytes[c] += k.Bytes
		if c == classLeftover || c == classUnknown {
			problem("census: %s key %s (%s, PTTL %d, %d B): %s", c, k.Key, k.Type, k.PTTL, k.Bytes, why)
		}
	}
	big := slices.SortedFunc(slices.Values(keys), func(a, b censusKey) int { return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Key, b.Key)) })
	for _, k := range big[:min(10, len(big))] {
		f.CensusLargest = append(f.CensusLargest, fmt.Sprintf("%s (%d B)", k.Key, k.Bytes))
	}
}

// censusText is the census's line of the report: "kept 1,204 keys
// (310 KiB), ..." by keyClasses, then the largest keys.
func (f censusFigures) censusText() string {
	var parts []string
	for _, c := range keyClasses {
		parts = append(parts, fmt.Sprintf("%s %d (%.1f KiB)", c, f.CensusKeys[c], float64(f.CensusBytes[c])/1024))
	}
	return "key census once settled: " + strings.Join(parts, ", ") + "; largest: " + cmp.Or(strings.Join(f.CensusLargest, ", "), "none")
}

// memParts is where the primary's used_memory went once settled, bytes
// (INFO memory; Valkey 8): the replication backlog (mem_replication_backlog,
// at most repl-backlog-size: 10 MiB by default, filled by the run's writes
// and kept while a replica may need it), the clients' buffers
// (mem_clients_normal + mem_clients_slaves), Lua (used_memory_vm_eval +
// used_memory_scripts_eval: the scripts' engine and cache) and the dataset
// (used_memory_dataset: the keys, their MEMORY USAGE and the allocator's
// share of them). It says what used_memory's growth over its baseline
// holds: growth in the backlog and the engine is bounded by their
// configuration; the dataset's is the census's keys.
type memParts struct {
	MemDataset int64 `json:"mem_dataset,omitempty"`
	MemBacklog int64 `json:"mem_backlog,omitempty"`
	MemClients int64 `json:"mem_clients,omitempty"`
	MemLua     int64 `json:"mem_lua,omitempty"`
}

// memText is memParts' line of the report, used being used_memory once
// settled (bytes): its parts, and the rest (the allocator's and the
// server's own structures: used_memory_overhead less the backlog and the
// clients). The census's bytes are each key's MEMORY USAGE; the dataset
// adds the keyspace's own tables (its dicts, the expires) to them.
func (m memParts) memText(used int64) string {
	rest := used - m.MemBacklog - m.MemClients - m.MemLua - m.MemDataset
	return fmt.Sprintf("used_memory once settled, %s: replication backlog %s (at most repl-backlog-size), clients %s, Lua %s, dataset %s (the keys of the census and the keyspace's tables), the rest %s (the server's own structures)",
		mib(used), mib(m.MemBacklog), mib(m.MemClients), mib(m.MemLua), mib(m.MemDataset), mib(rest))
}

// memoryParts reads INFO memory of the current primary (in a cluster
// run, of the bot's slot's primary: primaryNode) into memParts. Errors:
// the command's, or a field missing or not an integer, wrapped.
func (st *stack) memoryParts(ctx context.Context) (memParts, error) {
	_, c, err := st.primaryNode(ctx)
	if err != nil {
		return memParts{}, err
	}
	s, err := c.Do(ctx, c.B().Info().Section("memory").Build()).ToString()
	if err != nil {
		return memParts{}, fmt.Errorf("info memory: %w", err)
	}
	return parseMemParts(s)
}

// parseMemParts reads memParts from the text of INFO memory.
func parseMemParts(info string) (memParts, error) {
	fields := map[string]int64{}
	for line := range strings.SplitSeq(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
			fields[k] = n
		}
	}
	for _, k := range []string{"used_memory_dataset", "mem_replication_backlog", "mem_clients_normal", "mem_clients_slaves", "used_memory_vm_eval", "used_memory_scripts_eval"} {
		if _, ok := fields[k]; !ok {
			return memParts{}, fmt.Errorf("info memory: no integer %s", k)
		}
	}
	return memParts{
		MemDataset: fields["used_memory_dataset"],
		MemBacklog: fields["mem_replication_backlog"],
		MemClients: fields["mem_clients_normal"] + fields["mem_clients_slaves"],
		MemLua:     fields["used_memory_vm_eval"] + fields["used_memory_scripts_eval"],
	}, nil
}

// census reads every key of the current primary (in a cluster run, of
// the bot's slot's primary: primaryNode): SCAN, then TYPE, PTTL and
// MEMORY USAGE (default sampling) of each, and for a job hash whether
// its queue's dead set holds its id. Errors: the first command's that
// failed, wrapped.
func (st *stack) census(ctx context.Context) ([]censusKey, error) {
	_, c, err := st.primaryNode(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for cursor := uint64(0); ; {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return nil, fmt.Errorf("census: scan: %w", err)
		}
		names = append(names, e.Elements...)
		if cursor = e.Cursor; cursor == 0 {
			break
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	jobRE := regexp.MustCompile(`^(` + regexp.QuoteMeta("{"+tag+"}:q:") + `[^:]+:)job:([^:]+)$`)
	out := make([]censusKey, 0, len(names))
	for chunk := range slices.Chunk(names, 200) {
		cmds := make(valkey.Commands, 0, 4*len(chunk))
		for _, k := range chunk {
			dead, id := "{"+tag+"}:none", "" // no job: a ZSCORE answered nil
			if m := jobRE.FindStringSubmatch(k); m != nil {
				dead, id = m[1]+"dead", m[2]
			}
			cmds = append(cmds, c.B().Type().Key(k).Build(), c.B().Pttl().Key(k).Build(),
				c.B().MemoryUsage().Key(k).Build(), c.B().Zscore().Key(dead).Member(id).Build())
		}
		rs := c.DoMulti(ctx, cmds...)
		for i, k := range chunk {
			typ, err1 := rs[4*i].ToString()
			pttl, err2 := rs[4*i+1].AsInt64()
			bytes, err3 := rs[4*i+2].AsInt64()
			if valkey.IsValkeyNil(err3) { // gone since the scan
				continue
			}
			_, err4 := rs[4*i+3].AsFloat64()
			isDead := err4 == nil
			if valkey.IsValkeyNil(err4) {
				err4 = nil
			}
			if err := cmp.Or(err1, err2, err3, err4); err != nil {
				return nil, fmt.Errorf("census: %s: %w", k, err)
			}
			if typ == "none" {
				continue
			}
			out = append(out, censusKey{Key: k, Type: typ, PTTL: pttl, Bytes: bytes, Dead: isDead})
		}
	}
	return out, nil
}
