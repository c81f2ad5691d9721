package intake

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// ReplicaWait is how a record waits for Valkey replicas before it returns
// (Inbox.WithReplicaWait), so an update is confirmed to Telegram only once
// a replica holds it too: a failover to a replica that had not received it
// would otherwise lose an update Telegram will not send again (Redis's
// replication is asynchronous; Jepsen found Redis-Sentinel losing
// acknowledged writes this way).
type ReplicaWait struct {
	// Replicas is how many replicas must acknowledge (Valkey WAIT's
	// numreplicas); 0: no wait.
	Replicas int
	// Timeout is the most a record waits (WAIT's timeout, at least 1 ms).
	// Past it the record returns anyway (the bot keeps taking updates
	// while a replica is down or far behind) and Short is told.
	Timeout time.Duration
	// Short, when not nil, is called with how many replicas acknowledged
	// when fewer than Replicas did within Timeout (a metric, a log line).
	Short func(acked int)
}

// syncTTL is how long the key a replica wait writes lives (it only orders
// the WAIT after the record's writes).
const syncTTL = time.Minute

// WithReplicaWait makes every record (Record, Rebase, Accept) that wrote
// something wait for w.Replicas replicas before it returns (see
// ReplicaWait). Call it before the inbox is used; it returns in. Errors
// (later, from the records): those of the wait's two commands.
func (in *Inbox) WithReplicaWait(w ReplicaWait) *Inbox {
	in.replicas = w
	return in
}

// waitReplicas waits until in.replicas.Replicas replicas acknowledged
// every write this process made before the call (WAIT), at most its
// Timeout. WAIT waits for the replication offset of its own connection's
// last write, and a record's writes go over several connections (the
// client pipelines on a few, scripts and plain commands alike), so it
// first writes {T}:app:in:sync on the connection it waits on (valkey-go
// sends a DoMulti holding a blocking command on one dedicated connection):
// that write's offset is past every write whose reply came before it.
// On a Valkey Cluster both commands go to the node of the tag's slot.
// Errors: the server's, wrapped.
func (in *Inbox) waitReplicas(ctx context.Context) error {
	n := in.replicas.Replicas
	if n <= 0 {
		return nil
	}
	acked, err := in.replicaAcks(ctx, n)
	if err != nil {
		return err
	}
	if acked < n && in.replicas.Short != nil {
		in.replicas.Short(acked)
	}
	return nil
}

// replicaAcks is waitReplicas's WAIT for n replicas: how many
// acknowledged within ReplicaWait.Timeout. Errors: the server's, wrapped.
func (in *Inbox) replicaAcks(ctx context.Context, n int) (int, error) {
	k := in.keys.Sync()
	res := in.c.DoMulti(ctx,
		in.c.B().Set().Key(k).Value(strconv.FormatInt(in.now().UnixMilli(), 10)).Px(syncTTL).Build(),
		in.c.B().Wait().Numreplicas(int64(n)).Timeout(max(1, in.replicas.Timeout.Milliseconds())).Build().SetSlot(k))
	if err := res[0].Error(); err != nil {
		return 0, fmt.Errorf("intake: wait for replicas: %w", err)
	}
	acked, err := res[1].AsInt64()
	if err != nil {
		return 0, fmt.Errorf("intake: wait for replicas: %w", err)
	}
	return int(acked), nil
}

// CheckReplicas is the replica wait's check at start: how many replicas
// acknowledged a write within ReplicaWait.Timeout, and how many it waits
// for (0, 0 with no wait set). Fewer acked than wanted means every record
// of updates waits its whole timeout until a replica catches up (a
// replica not connected, VALKEY_WAIT_REPLICAS above the replicas there
// are). Errors: the server's, wrapped.
func (in *Inbox) CheckReplicas(ctx context.Context) (acked, want int, err error) {
	want = in.replicas.Replicas
	if want <= 0 {
		return 0, 0, nil
	}
	acked, err = in.replicaAcks(ctx, want)
	return acked, want, err
}
