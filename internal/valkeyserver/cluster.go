package valkeyserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeyclient"
)

// clusterSlots is the number of hash slots of Valkey Cluster.
const clusterSlots = 16384

// clusterNodeTimeout is cluster-node-timeout: how long a node may not answer
// before the others mark it failing (and a replica takes over its slots).
const clusterNodeTimeout = 2 * time.Second

// clusterReadyWithin bounds how long StartCluster, StartClusterWith and a
// cluster's Restart wait for every node to report cluster_state:ok (and
// every replica to be linked to its primary).
const clusterReadyWithin = 30 * time.Second

// ClusterOptions shapes a cluster started by StartClusterWith.
type ClusterOptions struct {
	// Primaries is the number of primaries (at least 1); the 16384 slots
	// are split evenly between them.
	Primaries int
	// Replicas is the number of replicas of each primary (0 or more).
	Replicas int
	// AppendOnly turns on the append-only file (appendfsync always) on
	// every node, so a restart keeps every acknowledged write.
	AppendOnly bool
}

// StartCluster starts n primaries without replicas (see StartClusterWith).
func StartCluster(n int) (*Server, error) {
	return StartClusterWith(ClusterOptions{Primaries: n})
}

// StartClusterWith starts a Valkey Cluster on loopback: o.Primaries servers
// in cluster mode with the 16384 slots split between them (CLUSTER
// ADDSLOTSRANGE), o.Replicas replicas of each (CLUSTER REPLICATE), all
// joined (CLUSTER MEET), and waits (up to 30 s) until every node reports
// cluster_state:ok and every replica's link to its primary is up. The
// caller stops it with Stop; its NewClient is a cluster client and its URL
// names every node (?addr=), so a client started from it finds the cluster
// whichever nodes are down. Errors: ErrNoServer; a node's start or setup
// command's; the wait's timeout.
func StartClusterWith(o ClusterOptions) (*Server, error) {
	if o.Primaries < 1 || o.Replicas < 0 {
		return nil, fmt.Errorf("valkeyserver: cluster of %d primaries with %d replicas each: want at least 1 primary", o.Primaries, o.Replicas)
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	total := o.Primaries * (1 + o.Replicas)
	var nodes []*Server
	fail := func(err error) (*Server, error) {
		for _, s := range nodes {
			s.Stop()
		}
		return nil, err
	}
	for i := 0; i < total; i++ {
		s, err := start(Options{AppendOnly: o.AppendOnly, ExtraArgs: []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(clusterNodeTimeout.Milliseconds(), 10),
			// A replica's first sync starts at once (the default waits 5 s
			// for more replicas to join the same transfer).
			"--repl-diskless-sync-delay", "0",
		}})
		if err != nil {
			return fail(fmt.Errorf("cluster node %d (%s): %w", i, bin, err))
		}
		nodes = append(nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyWithin)
	defer cancel()
	clients, closeAll, err := nodeClients(nodes)
	if err != nil {
		return fail(err)
	}
	defer closeAll()
	for i := 0; i < o.Primaries; i++ {
		c := clients[i]
		lo := i * clusterSlots / o.Primaries
		hi := (i+1)*clusterSlots/o.Primaries - 1
		if err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "ADDSLOTSRANGE").Args(strconv.Itoa(lo), strconv.Itoa(hi)).Build()).Error(); err != nil {
			return fail(fmt.Errorf("cluster addslotsrange on %s: %w", nodes[i].Addr, err))
		}
	}
	for _, s := range nodes[1:] {
		host, port, _ := strings.Cut(s.Addr, ":")
		if err := clients[0].Do(ctx, clients[0].B().Arbitrary("CLUSTER", "MEET").Args(host, port).Build()).Error(); err != nil {
			return fail(fmt.Errorf("cluster meet %s: %w", s.Addr, err))
		}
	}
	if o.Replicas > 0 {
		// A replica can only follow a primary it knows: wait for the gossip.
		if err := waitNodes(ctx, clients, func(info string) bool {
			return strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(total)+"\r\n")
		}); err != nil {
			return fail(fmt.Errorf("cluster nodes did not all meet: %w", err))
		}
		for i := 0; i < o.Primaries; i++ {
			id, err := clients[i].Do(ctx, clients[i].B().Arbitrary("CLUSTER", "MYID").Build()).ToString()
			if err != nil {
				return fail(fmt.Errorf("cluster myid on %s: %w", nodes[i].Addr, err))
			}
			for j := 0; j < o.Replicas; j++ {
				r := o.Primaries + i*o.Replicas + j
				if err := clients[r].Do(ctx, clients[r].B().Arbitrary("CLUSTER", "REPLICATE").Args(id).Build()).Error(); err != nil {
					return fail(fmt.Errorf("cluster replicate %s on %s: %w", nodes[i].Addr, nodes[r].Addr, err))
				}
			}
		}
	}
	srv := &Server{cluster: nodes, replicas: o.Replicas}
	if err := srv.waitReady(ctx, clients); err != nil {
		return fail(err)
	}
	srv.addrs = make([]string, total)
	for i, s := range nodes {
		srv.addrs[i] = s.Addr
	}
	srv.Addr = nodes[0].Addr
	q := url.Values{"addr": srv.addrs[1:]}
	srv.URL = "redis://" + nodes[0].Addr + "?" + q.Encode()
	return srv, nil
}

// nodeClients connects one single-node client to each node; closeAll
// closes them.
func nodeClients(nodes []*Server) (clients []valkey.Client, closeAll func(), err error) {
	closeAll = func() {
		for _, c := range clients {
			c.Close()
		}
	}
	for _, s := range nodes {
		c, err := s.NodeClient()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connect to cluster node %s: %w", s.Addr, err)
		}
		clients = append(clients, c)
	}
	return clients, closeAll, nil
}

// waitNodes polls CLUSTER INFO on every client every 50 ms until ok holds
// for all of them or ctx ends.
func waitNodes(ctx context.Context, clients []valkey.Client, ok func(info string) bool) error {
	for {
		all := true
		for _, c := range clients {
			info, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "INFO").Build()).ToString()
			if err != nil || !ok(info) {
				all = false
				break
			}
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitReady waits until every node reports cluster_state:ok with every node
// known, and (with replicas) every replica's link to its primary is up.
func (s *Server) waitReady(ctx context.Context, clients []valkey.Client) error {
	total := strconv.Itoa(len(s.cluster))
	if err := waitNodes(ctx, clients, func(info string) bool {
		return strings.Contains(info, "cluster_state:ok\r\n") && strings.Contains(info, "cluster_known_nodes:"+total+"\r\n")
	}); err != nil {
		return fmt.Errorf("cluster did not reach cluster_state:ok: %w", err)
	}
	if s.replicas == 0 {
		return nil
	}
	for {
		linked := 0
		for _, c := range clients {
			info, err := c.Do(ctx, c.B().Info().Section("replication").Build()).ToString()
			if err == nil && strings.Contains(info, "role:slave\r\n") && strings.Contains(info, "master_link_status:up\r\n") {
				linked++
			}
		}
		if linked == len(s.cluster)/(1+s.replicas)*s.replicas && s.shardsAgree(ctx, clients) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster replicas not linked to their primaries (%d linked): %w", linked, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// shardsAgree reports whether every node sees every shard whole (CLUSTER
// SHARDS: one shard per primary, each with its replicas). A replica's
// shard id reaches the others by gossip after CLUSTER REPLICATE; a node
// restarted before they agree may find its nodes.conf "corrupted" (a
// replica's shard id differing from its primary's: valkey-io/valkey#774),
// so StartClusterWith and Restart wait for this too.
func (s *Server) shardsAgree(ctx context.Context, clients []valkey.Client) bool {
	primaries := len(s.cluster) / (1 + s.replicas)
	for _, c := range clients {
		shards, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "SHARDS").Build()).ToArray()
		if err != nil || len(shards) != primaries {
			return false
		}
		for _, sh := range shards {
			m, err := sh.AsMap()
			if err != nil {
				return false
			}
			n := m["nodes"]
			nodes, err := n.ToArray()
			if err != nil || len(nodes) != 1+s.replicas {
				return false
			}
		}
	}
	return true
}

// Cluster reports whether the server is a Valkey Cluster.
func (s *Server) Cluster() bool { return len(s.cluster) > 0 }

// Nodes are the nodes of a cluster started by this package (primaries
// first, as started: roles change after a failover); nil for a standalone
// server.
func (s *Server) Nodes() []*Server { return slices.Clone(s.cluster) }

// Node returns the cluster node listening on addr (host:port), or nil.
func (s *Server) Node(addr string) *Server {
	for _, n := range s.cluster {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// NodeClient returns a client of this one node (a cluster node, or a
// standalone server), never a cluster client, so a command without keys
// (CLUSTER NODES, CLUSTER FAILOVER, INFO) reaches this node; the caller
// closes it.
func (s *Server) NodeClient() (valkey.Client, error) {
	return valkeyclient.New(valkey.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true, ForceSingleClient: true})
}

// ErrNoReplica is returned by Owner when the primary owning the key has no
// replica linked to it.
var ErrNoReplica = errors.New("valkeyserver: the key's primary has no replica")

// Owner returns the node that is now the primary for key's hash slot and
// one of its replicas, as CLUSTER NODES on a live node tells (c is a client
// of the cluster). Errors: the commands'; no live primary for the slot;
// ErrNoReplica.
func (s *Server) Owner(ctx context.Context, c valkey.Client, key string) (primary, replica *Server, err error) {
	slot, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "KEYSLOT").Args(key).Build()).AsInt64()
	if err != nil {
		return nil, nil, fmt.Errorf("valkeyserver: cluster keyslot %q: %w", key, err)
	}
	text, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "NODES").Build()).ToString()
	if err != nil {
		return nil, nil, fmt.Errorf("valkeyserver: cluster nodes: %w", err)
	}
	// <id> <ip:port@cport[,hostname]> <flags> <primary id|-> <ping> <pong> <epoch> <link> <slot>...
	var primaryID string
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 8 || !hasFlag(f[2], "master") || hasFlag(f[2], "fail") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, errA := strconv.ParseInt(lo, 10, 64)
			b, errB := strconv.ParseInt(hi, 10, 64)
			if errA == nil && errB == nil && a <= slot && slot <= b {
				primaryID, primary = f[0], s.Node(nodeAddr(f[1]))
			}
		}
	}
	if primary == nil {
		return nil, nil, fmt.Errorf("valkeyserver: no live primary of this cluster owns slot %d (of %q)", slot, key)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) >= 8 && hasFlag(f[2], "slave") && !hasFlag(f[2], "fail") && f[3] == primaryID {
			if r := s.Node(nodeAddr(f[1])); r != nil {
				return primary, r, nil
			}
		}
	}
	return primary, nil, fmt.Errorf("%w (slot %d, primary %s)", ErrNoReplica, slot, primary.Addr)
}

// hasFlag reports whether a CLUSTER NODES flags field (e.g.
// "myself,master") holds flag. "fail" is a node the cluster agreed has
// failed; "fail?" (PFAIL, one node's suspicion, common under load) is not
// "fail".
func hasFlag(flags, flag string) bool {
	return slices.Contains(strings.Split(flags, ","), flag)
}

// nodeAddr is the host:port of a CLUSTER NODES address field
// (ip:port@cport[,hostname]).
func nodeAddr(field string) string {
	addr, _, _ := strings.Cut(field, "@")
	return addr
}

// restartCluster stops every node (replicas first, so no primary waits for
// a replica to catch up) with SIGTERM, starts them again on their ports and
// directories, and waits until the cluster is ready again.
func (s *Server) restartCluster() error {
	order := slices.Clone(s.cluster)
	slices.Reverse(order)
	for _, n := range order {
		n.terminate()
	}
	for _, n := range s.cluster {
		if err := n.launch(); err != nil {
			return fmt.Errorf("valkeyserver: restart cluster node %s: %w", n.Addr, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyWithin)
	defer cancel()
	clients, closeAll, err := nodeClients(s.cluster)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := s.waitReady(ctx, clients); err != nil {
		return fmt.Errorf("valkeyserver: restart: %w", err)
	}
	return nil
}

// terminate stops the process with SIGTERM (SIGKILL after 10 s) and waits.
func (s *Server) terminate() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.stopped:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.stopped
	}
}
