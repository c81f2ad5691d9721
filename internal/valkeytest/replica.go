package valkeytest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartReplicated starts two dedicated standalone servers for one test,
// the second a replica of the first (REPLICAOF), and returns them once the
// replica's link is up and its first sync done; both are stopped when the
// test ends.
func StartReplicated(tb testing.TB) (primary, replica *Server) {
	tb.Helper()
	primary, replica = Start(tb, Options{ExtraArgs: []string{"--repl-diskless-sync-delay", "0"}}), Start(tb, Options{})
	ctx := context.Background()
	host, ps, _ := strings.Cut(primary.Addr, ":")
	port, err := strconv.ParseInt(ps, 10, 64)
	if err != nil {
		tb.Fatalf("valkeytest: primary address %q: %v", primary.Addr, err)
	}
	rc := replica.Client(tb)
	if err := rc.Do(ctx, rc.B().Replicaof().Host(host).Port(port).Build()).Error(); err != nil {
		tb.Fatalf("valkeytest: REPLICAOF %s: %v", primary.Addr, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := rc.Do(ctx, rc.B().Info().Section("replication").Build()).ToString()
		if err == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") {
			return primary, replica
		}
		if time.Now().After(deadline) {
			tb.Fatalf("valkeytest: replica %s of %s: link not up within 30 s (%v): %s", replica.Addr, primary.Addr, err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
