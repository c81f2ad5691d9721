package valkeyserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"
)

// clusterSlots is the number of hash slots of Valkey Cluster.
const clusterSlots = 16384

// StartCluster starts n servers in cluster mode, splits the 16384 slots
// between them (CLUSTER ADDSLOTSRANGE), joins them (CLUSTER MEET) and waits
// until every node reports cluster_state:ok. The caller stops it with
// Stop; its NewClient is a cluster client.
func StartCluster(n int) (*Server, error) {
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

// Cluster reports whether the server is a Valkey Cluster.
func (s *Server) Cluster() bool { return len(s.cluster) > 0 }
