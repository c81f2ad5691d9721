package valkeytest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"
)

// ModeEnv selects the shared server's kind: unset or "standalone" for one
// server, "cluster" for a three-primary Valkey Cluster on loopback, so the
// same suite runs on both (make test runs the lanes suite in both modes).
const ModeEnv = "VALKEYTEST_MODE"

// clusterSlots is the number of hash slots of Valkey Cluster.
const clusterSlots = 16384

// startCluster starts n servers in cluster mode, splits the 16384 slots
// between them (CLUSTER ADDSLOTSRANGE), joins them (CLUSTER MEET) and waits
// until every node reports cluster_state:ok.
func startCluster(n int) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var nodes []*Server
	fail := func(err error) (*Server, error) {
		for _, s := range nodes {
			s.Stop()
		}
		return nil, err
	}
	for i := 0; i < n; i++ {
		s, err := start(Options{ExtraArgs: []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000",
		}})
		if err != nil {
			return fail(fmt.Errorf("cluster node %d (%s): %w", i, bin, err))
		}
		nodes = append(nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients := make([]valkey.Client, n)
	for i, s := range nodes {
		c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true, ForceSingleClient: true})
		if err != nil {
			return fail(err)
		}
		defer c.Close()
		clients[i] = c
		lo := i * clusterSlots / n
		hi := (i+1)*clusterSlots/n - 1
		if err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "ADDSLOTSRANGE").Args(strconv.Itoa(lo), strconv.Itoa(hi)).Build()).Error(); err != nil {
			return fail(fmt.Errorf("cluster addslotsrange on %s: %w", s.Addr, err))
		}
	}
	for _, s := range nodes[1:] {
		host, port, _ := strings.Cut(s.Addr, ":")
		if err := clients[0].Do(ctx, clients[0].B().Arbitrary("CLUSTER", "MEET").Args(host, port).Build()).Error(); err != nil {
			return fail(fmt.Errorf("cluster meet %s: %w", s.Addr, err))
		}
	}
	for {
		ok := true
		for _, c := range clients {
			info, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "INFO").Build()).ToString()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)) {
				ok = false
				break
			}
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("cluster did not reach cluster_state:ok: %w", ctx.Err()))
		case <-time.After(50 * time.Millisecond):
		}
	}
	addrs := make([]string, n)
	for i, s := range nodes {
		addrs[i] = s.Addr
	}
	head := nodes[0]
	return &Server{
		Addr:    head.Addr,
		URL:     head.URL,
		cluster: nodes,
		addrs:   addrs,
	}, nil
}

// StartCluster starts a dedicated cluster of n primaries for one test (n = 1
// puts all 16384 slots on one node: enough for CLUSTER KEYSLOT checks and a
// cluster client that refuses cross-slot calls), stopped when the test ends.
// Its Client is a cluster client.
func StartCluster(tb testing.TB, n int) *Server {
	tb.Helper()
	s, err := startCluster(n)
	if err != nil {
		tb.Fatalf("valkeytest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Cluster reports whether the server is a Valkey Cluster.
func (s *Server) Cluster() bool { return len(s.cluster) > 0 }

func sharedMode() string {
	return strings.ToLower(strings.TrimSpace(os.Getenv(ModeEnv)))
}
