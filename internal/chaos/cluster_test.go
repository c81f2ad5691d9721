package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// A cluster run (CHAOS_STORE=cluster): the stack on a Valkey Cluster of
// clusterPrimaries primaries with one replica each, which the bot's
// client (valkey-go, given every node's address) follows through MOVED
// redirects and topology refreshes. Every key of the bot has one hash tag,
// so one primary (and its replica) holds all of them: the faults that hit
// Valkey hit that primary, the one of the bot's slot at the fault's
// start.
const (
	clusterPrimaries = 3
	// clusterSettle bounds each wait of a cluster fault: the replica's
	// promotion (the other primaries mark a killed one failing after
	// cluster-node-timeout, 2 s, then vote), a node's restart and its
	// rejoining as a replica, linked and caught up.
	clusterSettle = 30 * time.Second
	// manualFailoverWait is how long clusterFailover waits for a CLUSTER
	// FAILOVER before it issues another: more than the manual failover's
	// own timeout (5 s) and twice cluster-node-timeout (4 s, the
	// primaries' interval between two votes for one shard).
	manualFailoverWait = 6 * time.Second
)

// startCluster starts the cluster (append-only, fsync always, as the
// standalone servers) with a cluster client and a lanes store on it.
func (st *stack) startCluster() {
	t := st.t
	srv, err := valkeyserver.StartClusterWith(valkeyserver.ClusterOptions{Primaries: clusterPrimaries, Replicas: 1, AppendOnly: true})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	c, err := srv.NewClient()
	require.NoError(t, err)
	t.Cleanup(c.Close)
	store, err := notifier.NewStore(c, limits(), 0, lanes.WithTag(tag))
	require.NoError(t, err)
	st.cluster, st.cc, st.ccStore = srv, c, store
	t.Cleanup(st.closeNodeClients)
}

// nodeClient is the stack's client of the one cluster node n, made on
// first use (it reconnects by itself after the node's restart).
func (st *stack) nodeClient(n *valkeyserver.Server) (valkey.Client, error) {
	st.ncmu.Lock()
	defer st.ncmu.Unlock()
	if c, ok := st.nodeClis[n.Addr]; ok {
		return c, nil
	}
	c, err := n.NodeClient()
	if err != nil {
		return nil, fmt.Errorf("a client of cluster node %s: %w", n.Addr, err)
	}
	if st.nodeClis == nil {
		st.nodeClis = map[string]valkey.Client{}
	}
	st.nodeClis[n.Addr] = c
	return c, nil
}

func (st *stack) closeNodeClients() {
	st.ncmu.Lock()
	defer st.ncmu.Unlock()
	for _, c := range st.nodeClis {
		c.Close()
	}
	st.nodeClis = nil
}

// slotOwner is the primary of the bot's hash slot and its replica (nil
// when none is linked), as the cluster client's CLUSTER NODES tells
// (valkeyserver Server.Owner). Errors: the commands', or no live primary
// owns the slot.
func (st *stack) slotOwner(ctx context.Context) (primary, replica *valkeyserver.Server, err error) {
	return st.ownerSeenBy(ctx, st.cc)
}

// ownerSeenBy is slotOwner as the node (or cluster) client c sees it.
func (st *stack) ownerSeenBy(ctx context.Context, c valkey.Client) (primary, replica *valkeyserver.Server, err error) {
	p, r, err := st.cluster.Owner(ctx, c, inboxUnhandled)
	if errors.Is(err, valkeyserver.ErrNoReplica) {
		return p, nil, nil
	}
	return p, r, err
}

// pair is slotOwner once it names a replica linked to the primary and the
// replica's link is up (one node's view may lag the others' by a gossip
// round). Errors: the last look's, or no such replica within
// clusterSettle.
func (st *stack) pair(ctx context.Context) (primary, replica *valkeyserver.Server, err error) {
	ok := waitFor(ctx, clusterSettle, func() bool {
		primary, replica, err = st.slotOwner(ctx)
		if err != nil || replica == nil {
			return false
		}
		rc, e := st.nodeClient(replica)
		if e != nil {
			err = e
			return false
		}
		link, e := infoString(ctx, rc, "replication", "master_link_status")
		err = e
		return e == nil && link == "up"
	})
	switch {
	case ok:
		return primary, replica, nil
	case err != nil:
		return nil, nil, err
	case primary == nil:
		return nil, nil, fmt.Errorf("no primary of the bot's slot within %s", clusterSettle)
	case replica == nil:
		return nil, nil, fmt.Errorf("the slot's primary %s has no replica linked within %s", primary.Addr, clusterSettle)
	}
	return nil, nil, fmt.Errorf("the slot's replica %s not linked to %s within %s", replica.Addr, primary.Addr, clusterSettle)
}

// servesSlot reports whether node n, in its own view, is the primary of
// the bot's slot.
func (st *stack) servesSlot(ctx context.Context, n *valkeyserver.Server) bool {
	c, err := st.nodeClient(n)
	if err != nil {
		return false
	}
	p, _, err := st.ownerSeenBy(ctx, c)
	return err == nil && p != nil && p.Addr == n.Addr
}

// follows reports whether node replica is a replica of node primary with
// its link up and its replication offset at least the primary's (it holds
// every write the primary had taken when asked).
func (st *stack) follows(ctx context.Context, replica, primary *valkeyserver.Server) bool {
	rc, err1 := st.nodeClient(replica)
	pc, err2 := st.nodeClient(primary)
	if err1 != nil || err2 != nil {
		return false
	}
	role, err1 := infoString(ctx, rc, "replication", "role")
	host, err2 := infoString(ctx, rc, "replication", "master_host")
	port, err3 := infoString(ctx, rc, "replication", "master_port")
	link, err4 := infoString(ctx, rc, "replication", "master_link_status")
	got, err5 := infoField(ctx, rc, "replication", "slave_repl_offset")
	want, err6 := infoField(ctx, pc, "replication", "master_repl_offset")
	return errors.Join(err1, err2, err3, err4, err5, err6) == nil && role == "slave" &&
		host+":"+port == primary.Addr && link == "up" && got >= want
}

// replicationLag is how many bytes of the primary's replication stream the
// replica has not acknowledged (-1 when either cannot be read): what a
// kill of the primary then may lose (replication is asynchronous).
func (st *stack) replicationLag(ctx context.Context, primary, replica *valkeyserver.Server) int64 {
	rc, err1 := st.nodeClient(replica)
	pc, err2 := st.nodeClient(primary)
	if err1 != nil || err2 != nil {
		return -1
	}
	got, err1 := infoField(ctx, rc, "replication", "slave_repl_offset")
	want, err2 := infoField(ctx, pc, "replication", "master_repl_offset")
	if err1 != nil || err2 != nil {
		return -1
	}
	return want - got
}

// killSlotPrimary is faultClusterKill: SIGKILL of the primary of the bot's
// slot (found through the cluster client), then the cluster's own
// failover: the other primaries mark it failing after cluster-node-timeout
// (2 s) and elect its replica, which the wait sees when the replica's own
// view names it the slot's primary; then the killed node is started again
// on its port, directory and nodes.conf (append-only file) and rejoins as
// a replica of the promoted one, linked and caught up. It returns the
// replication lag at the kill (bytes the replica had not acknowledged,
// -1 unknown: replication is asynchronous, so writes acknowledged to the
// bot within them may be gone). Errors: no replica to promote, the
// promotion or the rejoining not seen within clusterSettle each, the
// restart's.
func (st *stack) killSlotPrimary(ctx context.Context) (lag int64, err error) {
	primary, replica, err := st.pair(ctx)
	if err != nil {
		return -1, fmt.Errorf("cluster-kill-9: %w", err)
	}
	lag = st.replicationLag(ctx, primary, replica)
	t0 := time.Now()
	primary.Kill()
	promoted := waitFor(ctx, clusterSettle, func() bool { return st.servesSlot(ctx, replica) })
	took := time.Since(t0)
	if err := primary.Restart(); err != nil {
		return lag, fmt.Errorf("cluster-kill-9: restart %s: %w", primary.Addr, err)
	}
	if !promoted {
		return lag, fmt.Errorf("cluster-kill-9: replica %s not the slot's primary within %s of the kill of %s", replica.Addr, clusterSettle, primary.Addr)
	}
	if !waitFor(ctx, clusterSettle, func() bool { return st.follows(ctx, primary, replica) }) {
		return lag, fmt.Errorf("cluster-kill-9: %s, restarted, not a caught-up replica of %s within %s", primary.Addr, replica.Addr, clusterSettle)
	}
	st.t.Logf("cluster-kill-9: %s killed; %s the slot's primary %.1fs later; %s restarted, its caught-up replica %.1fs after the kill",
		primary.Addr, replica.Addr, took.Seconds(), primary.Addr, time.Since(t0).Seconds())
	return lag, nil
}

// clusterFailover is faultClusterFailover: a manual failover (CLUSTER
// FAILOVER on the replica of the bot's slot's primary, once it is linked):
// the primary stops taking writes, the replica catches up with it and
// takes over, the old primary follows it; nothing acknowledged is lost.
// A manual failover the primaries refuse to vote for is given up
// silently after 5 s (a primary votes for one shard's failover at most
// once in twice cluster-node-timeout, so one issued within 4 s of the
// shard's last election, e.g. a cluster-kill-9's, never wins): the
// command is issued again every manualFailoverWait until the replica is
// promoted, as an operator would. Errors: no replica, the command's, the
// promotion or the old primary following not seen within clusterSettle
// each.
func (st *stack) clusterFailover(ctx context.Context) error {
	primary, replica, err := st.pair(ctx)
	if err != nil {
		return fmt.Errorf("cluster-failover: %w", err)
	}
	rc, err := st.nodeClient(replica)
	if err != nil {
		return fmt.Errorf("cluster-failover: %w", err)
	}
	t0 := time.Now()
	tries := 0
	for !st.servesSlot(ctx, replica) {
		if time.Since(t0) >= clusterSettle {
			return fmt.Errorf("cluster-failover: replica %s not the slot's primary within %s (%d CLUSTER FAILOVER)", replica.Addr, clusterSettle, tries)
		}
		tries++
		if err := rc.Do(ctx, rc.B().Arbitrary("CLUSTER", "FAILOVER").Build()).Error(); err != nil {
			return fmt.Errorf("cluster-failover: cluster failover on %s: %w", replica.Addr, err)
		}
		waitFor(ctx, manualFailoverWait, func() bool { return st.servesSlot(ctx, replica) })
	}
	took := time.Since(t0)
	if !waitFor(ctx, clusterSettle, func() bool { return st.follows(ctx, primary, replica) }) {
		return fmt.Errorf("cluster-failover: %s not a caught-up replica of %s within %s", primary.Addr, replica.Addr, clusterSettle)
	}
	st.t.Logf("cluster-failover: %s the slot's primary %.1fs after the first of %d CLUSTER FAILOVER; %s its caught-up replica %.1fs after it",
		replica.Addr, took.Seconds(), tries, primary.Addr, time.Since(t0).Seconds())
	return nil
}

// clusterKinds are what a cluster run applies instead of a standalone
// kind (the seed's schedule is drawn as in a standalone run, then mapped
// by forCluster); notInCluster are the kinds a cluster run leaves out.
var (
	clusterKinds = map[string]string{faultRestart: faultClusterKill, faultFailover: faultClusterFailover}
	notInCluster = []string{faultCut, faultSlow, faultReadonly}
)

// forCluster is the schedule faults as a cluster run applies them: a
// valkey-restart becomes a cluster-kill-9 of the slot's primary, a
// valkey-failover a cluster-failover, at the same time; net-cut, net-slow
// and valkey-readonly are left out (returned apart: the bot reaches the
// cluster without the proxy, and REPLICAOF is refused in cluster mode);
// every other fault is kept as it is.
func forCluster(faults []fault) (kept, left []fault) {
	for _, f := range faults {
		if k, ok := clusterKinds[f.Kind]; ok {
			f.Kind = k
		}
		if slices.Contains(notInCluster, f.Kind) {
			left = append(left, f)
			continue
		}
		kept = append(kept, f)
	}
	return kept, left
}
