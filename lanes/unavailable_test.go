package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// realStoreErrors makes, on a dedicated server, the errors valkey-go
// returns while the server is busy with a script (BUSY), over maxmemory
// under noeviction (OOM, from a command and from a script's write), a
// replica (READONLY), gone (the connection closed or refused), and for a
// wrong type (WRONGTYPE), a missing key (valkey.Nil), a closed client
// (valkey.ErrClosing) and a context past its deadline or cancelled.
func realStoreErrors(t *testing.T) map[string]error {
	t.Helper()
	ctx := context.Background()
	srv := valkeytest.Start(t, valkeytest.Options{})
	c := srv.Client(t)
	out := map[string]error{}
	do := func(args ...string) error {
		return c.Do(ctx, c.B().Arbitrary(args[0]).Args(args[1:]...).Build()).Error()
	}

	require.NoError(t, do("RPUSH", "list", "x"))
	out["WRONGTYPE"] = do("GET", "list")
	out["nil"] = do("GET", "missing")
	gone, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	out["deadline"] = c.Do(gone, c.B().Get().Key("k").Build()).Error()
	cancelled, cancelNow := context.WithCancel(ctx)
	cancelNow()
	out["cancelled"] = c.Do(cancelled, c.B().Get().Key("k").Build()).Error()
	closed := srv.Client(t)
	closed.Close()
	out["closed client"] = closed.Do(ctx, closed.B().Get().Key("k").Build()).Error()

	// BUSY: a script running past busy-reply-threshold.
	end := valkeytest.Busy(t, srv, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		out["BUSY"] = do("PING")
		return out["BUSY"] != nil
	}, 20*time.Second, 10*time.Millisecond, "PING answered an error while the script runs")
	end()

	// OOM: maxmemory below the memory in use, noeviction.
	require.NoError(t, do("CONFIG", "SET", "maxmemory-policy", "noeviction"))
	require.NoError(t, do("CONFIG", "SET", "maxmemory", "1"))
	out["OOM"] = do("SET", "k", "v")
	out["OOM in a script"] = c.Do(ctx, c.B().Eval().Script("return redis.call('SET', KEYS[1], 'v')").Numkeys(1).Key("k").Build()).Error()
	require.NoError(t, do("CONFIG", "SET", "maxmemory", "0"))

	// READONLY: a replica of a listener that never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	host, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, do("REPLICAOF", host, port))
	out["READONLY"] = do("SET", "k", "v")
	require.NoError(t, do("REPLICAOF", "NO", "ONE"))

	// Gone: the server killed; a call meets the connection closed, then
	// refused.
	srv.Kill()
	require.Eventually(t, func() bool {
		err := do("PING")
		if err != nil && strings.Contains(err.Error(), "refused") {
			out["refused"] = err
			return true
		}
		if err != nil {
			out["dropped"] = err
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "a call to the killed server is refused")
	return out
}

// TestUnavailableClassifiesTheStoresPassingStatesNotItsAnswers: the errors
// of a store briefly unable to answer (BUSY, OOM, READONLY, LOADING,
// TRYAGAIN, CLUSTERDOWN, MASTERDOWN, NOREPLICAS, UNBLOCKED replies; a
// connection refused, reset, closed or timed out; a deadline passed) are
// lanes.Unavailable, wrapped or not, and errors.Is ErrUnavailable once
// classified; a Valkey answer of another code (WRONGTYPE, BUSYGROUP,
// BUSYKEY, NOSCRIPT, ERR), valkey.Nil, a cancelled context, a closed
// client, lanes' own errors and any other error are not. The errors are
// real: valkey-go's from a dedicated server made busy, full, a replica
// and then killed, and replies of each code the server sent
// (redis.error_reply).
func TestUnavailableClassifiesTheStoresPassingStatesNotItsAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	real := realStoreErrors(t)
	c := valkeytest.Shared(t).Client(t)
	reply := func(text string) error {
		return c.Do(ctx, c.B().Eval().Script("return redis.error_reply(ARGV[1])").Numkeys(0).Arg(text).Build()).Error()
	}
	conn, err := net.Dial("tcp", valkeytest.Shared(t).Addr)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(-time.Second)))
	_, timeout := conn.Read(make([]byte, 1))
	require.NoError(t, conn.Close())

	tests := []struct {
		name  string
		err   error
		cause string // "": not unavailable
	}{
		{"BUSY (a script running)", real["BUSY"], "BUSY"},
		{"OOM (a write over maxmemory)", real["OOM"], "OOM"},
		{"OOM (a script's write over maxmemory)", real["OOM in a script"], "OOM"},
		{"READONLY (a write to a replica)", real["READONLY"], "READONLY"},
		{"connection refused (the server gone)", real["refused"], "connection refused"},
		{"the deadline passed", real["deadline"], "deadline"},
		{"a read timed out", timeout, "timeout"},
		{"io.EOF (the connection closed)", io.EOF, "connection closed"},
		{"LOADING", reply("LOADING Valkey is loading the dataset in memory"), "LOADING"},
		{"TRYAGAIN", reply("TRYAGAIN Multiple keys request during rehashing of slot"), "TRYAGAIN"},
		{"CLUSTERDOWN", reply("CLUSTERDOWN The cluster is down"), "CLUSTERDOWN"},
		{"MASTERDOWN", reply("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), "MASTERDOWN"},
		{"NOREPLICAS", reply("NOREPLICAS Not enough good replicas to write."), "NOREPLICAS"},
		{"UNBLOCKED", reply("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"), "UNBLOCKED"},
		{"BUSY sent by a script", reply("BUSY Valkey is busy running a script."), "BUSY"},
		{"no slot (a cluster reconfiguring)", valkey.ErrNoSlot, "no slot"},
		{"WRONGTYPE", real["WRONGTYPE"], ""},
		{"valkey.Nil (a missing key)", real["nil"], ""},
		{"a cancelled context", real["cancelled"], ""},
		{"a closed client", real["closed client"], ""},
		{"BUSYGROUP", reply("BUSYGROUP Consumer Group name already exists"), ""},
		{"BUSYKEY", reply("BUSYKEY Target key name already exists."), ""},
		{"NOSCRIPT", reply("NOSCRIPT No matching script."), ""},
		{"ERR", reply("ERR unknown command"), ""},
		{"a BUSY-looking text that is no reply", errors.New("BUSY Valkey is busy running a script."), ""},
		{"lanes.ErrNoJob", lanes.ErrNoJob, ""},
		{"lanes.ErrInvalid", fmt.Errorf("%w: x", lanes.ErrInvalid), ""},
		{"nil", nil, ""},
		{"WRONGTYPE joined with EOF", errors.Join(real["WRONGTYPE"], io.EOF), ""},
	}
	if d := real["dropped"]; d != nil { // a call as the server died, before connections were refused
		u, ok := lanes.Unavailable(d)
		t.Logf("a call as the server died: %v: unavailable %t %+v", d, ok, u)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "nil" {
				require.Error(t, tc.err, "the error was made")
			}
			for i, err := range []error{tc.err, fmt.Errorf("admin: read: %w", tc.err), fmt.Errorf("a: %w", fmt.Errorf("b: %w", tc.err))} {
				u, ok := lanes.Unavailable(err)
				require.Equal(t, tc.cause != "", ok, "wrapped %d times: %v", i, err)
				require.Equal(t, tc.cause != "", errors.Is(u, lanes.ErrUnavailable) && ok)
				if !ok {
					require.Nil(t, u)
					continue
				}
				require.Equal(t, tc.cause, u.Cause, "%v", err)
				require.Equal(t, err.Error(), u.Error(), "the message is the error's")
				require.ErrorIs(t, u, tc.err, "the error is kept")
				again, ok := lanes.Unavailable(fmt.Errorf("x: %w", u))
				require.True(t, ok)
				require.Same(t, u, again, "an UnavailableError is returned as it is")
			}
		})
	}
}
