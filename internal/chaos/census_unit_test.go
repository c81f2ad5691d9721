package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/stretchr/testify/require"
)

// TestKeyCensusClassifiesEachKeyByDocsKeysMd: a key docs/keys.md keeps
// by design is kept with no expiry; any key with an expiry is expiring;
// a key written with an expiry found without one, or one the settled
// state has none of (a job, a lease, a lane, an in-flight count, a form
// migrated away) left without an expiry, is a leftover (a dead-lettered
// job's hash is kept); a key of no pattern, of another tag, or of a
// pattern's name with another TYPE, is unknown.
func TestKeyCensusClassifiesEachKeyByDocsKeysMd(t *testing.T) {
	kc := newKeyClassifier("cm")
	tests := []struct {
		key, typ string
		pttl     int64
		dead     bool
		want     keyClass
	}{
		{"{cm}:g:top:-100001", "zset", -1, false, classKept},
		{"{cm}:g:names:-100001", "hash", -1, false, classKept},
		{"{cm}:app:chats:17", "set", -1, false, classKept},
		{"{cm}:app:chatname:17", "hash", -1, false, classKept},
		{"{cm}:app:in:done:1023", "hash", -1, false, classKept},
		{"{cm}:s:learned", "hash", -1, false, classKept},
		{"{cm}:s:weight", "hash", -1, false, classKept},
		{"{cm}:q:notify:dead", "zset", -1, false, classKept},
		{"{cm}:q:reply:claimers", "zset", -1, false, classKept},
		{"{cm}:app:audit", "stream", -1, false, classKept},
		{"{cm}:q:paid:job:job_01J0000000000000000000000", "hash", -1, true, classKept},
		{"{cm}:g:game:-100001", "hash", 604_800_000, false, classExpiring},
		{"{cm}:n:bc:01J0:seen", "set", 5_000, false, classExpiring},
		{"{cm}:q:reply:co:edit:01J0:7", "string", 60_000, false, classExpiring},
		{"{cm}:app:proc:host:42:ab12", "hash", 15_000, false, classExpiring},
		{"{cm}:app:j:1234", "hash", 604_800_000, false, classExpiring},
		{"{cm}:q:reply:job:job_01J0000000000000000000000", "hash", -1, false, classLeftover},
		{"{cm}:q:reply:leases", "zset", -1, false, classLeftover},
		{"{cm}:q:notify:lane:-100001", "zset", -1, false, classLeftover},
		{"{cm}:q:notify:inflight", "hash", -1, false, classLeftover},
		{"{cm}:q:update:pending", "string", -1, false, classLeftover},
		{"{cm}:app:in:rec", "zset", -1, false, classLeftover},
		{"{cm}:app:chats", "set", -1, false, classLeftover},
		{"{cm}:g:game:-100001", "hash", -1, false, classLeftover},
		{"{cm}:n:bc:01J0", "hash", -1, false, classLeftover},
		{"{cm}:n:msg:job_01J0", "string", -1, false, classLeftover},
		{"{cm}:q:reply:co:edit:01J0:7", "string", -1, false, classLeftover},
		{"{cm}:q:reply:lane:-1:x", "zset", -1, false, classUnknown},
		{"{cm}:app:stray", "string", -1, false, classUnknown},
		{"{cm}:g:top:-100001", "hash", -1, false, classUnknown},
		{"{other}:g:top:-100001", "zset", -1, false, classUnknown},
		{"chaos:oom-probe", "string", -1, false, classUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.key+"/"+tc.typ, func(t *testing.T) {
			got, why := kc.classify(censusKey{Key: tc.key, Type: tc.typ, PTTL: tc.pttl, Dead: tc.dead})
			require.Equal(t, tc.want, got, why)
			if got == classLeftover || got == classUnknown {
				require.NotEmpty(t, why, "a problem says why")
			}
		})
	}
}

// TestKeyCensusNamesEachLeftoverAndUnknownKeyAndTheLargest: the census
// counts keys and bytes by class, names each leftover and unknown key as
// a problem, and lists at most the 10 largest keys, largest first.
func TestKeyCensusNamesEachLeftoverAndUnknownKeyAndTheLargest(t *testing.T) {
	keys := []censusKey{
		{Key: "{cm}:q:reply:leases", Type: "zset", PTTL: -1, Bytes: 120},
		{Key: "{cm}:app:stray", Type: "string", PTTL: -1, Bytes: 60},
		{Key: "{cm}:n:bc:01J0", Type: "hash", PTTL: 9_000, Bytes: 300},
	}
	for i := range 12 {
		keys = append(keys, censusKey{Key: "{cm}:app:chats:" + string(rune('a'+i)), Type: "set", PTTL: -1, Bytes: int64(10 + i)})
	}
	var f censusFigures
	var problems []string
	f.takeCensus(keys, func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) })
	require.Equal(t, map[keyClass]int{classKept: 12, classExpiring: 1, classLeftover: 1, classUnknown: 1}, f.CensusKeys)
	require.Equal(t, map[keyClass]int64{classKept: 10*12 + 66, classExpiring: 300, classLeftover: 120, classUnknown: 60}, f.CensusBytes)
	require.Len(t, problems, 2)
	require.Contains(t, problems[0], "leftover key {cm}:q:reply:leases (zset, PTTL -1, 120 B)")
	require.Contains(t, problems[1], "unknown key {cm}:app:stray")
	require.Len(t, f.CensusLargest, 10)
	require.Equal(t, []string{"{cm}:n:bc:01J0 (300 B)", "{cm}:q:reply:leases (120 B)", "{cm}:app:stray (60 B)", "{cm}:app:chats:l (21 B)"}, f.CensusLargest[:4])
	require.Contains(t, f.censusText(), "kept 12 (0.2 KiB), expiring 1 (0.3 KiB), leftover 1 (0.1 KiB), unknown 1 (0.1 KiB); largest: {cm}:n:bc:01J0 (300 B)")
}

// TestMemPartsSayWhereAPrimarysUsedMemoryWent: on a real primary with a
// replica, after writes and a script, INFO memory's parts read as the
// replication backlog (its writes, so above zero and at most
// repl-backlog-size), the clients' buffers, Lua and the dataset (above
// zero with keys); an INFO memory text without one of the fields is an
// error naming it.
func TestMemPartsSayWhereAPrimarysUsedMemoryWent(t *testing.T) {
	ctx := context.Background()
	primary, _ := valkeytest.StartReplicated(t)
	c := primary.Client(t)
	for i := range 100 {
		require.NoError(t, c.Do(ctx, c.B().Set().Key(fmt.Sprintf("k%d", i)).Value(strings.Repeat("x", 1000)).Build()).Error())
	}
	require.NoError(t, c.Do(ctx, c.B().Eval().Script("return 1").Numkeys(0).Build()).Error())
	info, err := c.Do(ctx, c.B().Info().Section("memory").Build()).ToString()
	require.NoError(t, err)
	m, err := parseMemParts(info)
	require.NoError(t, err)
	backlogSize, err := c.Do(ctx, c.B().ConfigGet().Parameter("repl-backlog-size").Build()).AsStrMap()
	require.NoError(t, err)
	size, err := strconv.ParseInt(backlogSize["repl-backlog-size"], 10, 64)
	require.NoError(t, err)
	require.Greater(t, m.MemBacklog, int64(100_000), "the backlog holds the writes")
	require.LessOrEqual(t, m.MemBacklog, size+(1<<20), "the backlog is bounded by repl-backlog-size (plus its blocks' overhead)")
	require.Greater(t, m.MemDataset, int64(100_000), "the dataset holds the keys")
	require.Greater(t, m.MemLua, int64(0), "the script's engine and cache")
	require.GreaterOrEqual(t, m.MemClients, int64(0))
	used, err := strconv.ParseInt(strings.TrimSpace(strings.Split(strings.SplitN(info, "used_memory:", 2)[1], "\n")[0]), 10, 64)
	require.NoError(t, err)
	rest := used - m.MemBacklog - m.MemClients - m.MemLua - m.MemDataset
	require.Positive(t, rest, "the server's own structures")
	require.Contains(t, m.memText(used), fmt.Sprintf("used_memory once settled, %s: replication backlog %s", mib(used), mib(m.MemBacklog)))
	require.Contains(t, m.memText(used), fmt.Sprintf("the rest %s", mib(rest)))

	_, err = parseMemParts(strings.ReplaceAll(info, "mem_replication_backlog:", "mem_backlog_renamed:"))
	require.ErrorContains(t, err, "no integer mem_replication_backlog")
}
