// Package valkeytest gives tests a real Valkey (or Redis) server over a real
// connection: never a mock. It holds the testing.TB helpers; the server
// launcher itself is package valkeyserver (no `testing` import), so a
// program that starts a server at run time (the demo) does not link
// `testing`.
//
// One throwaway server is started per test binary, on a free loopback port,
// with no persistence, in a temporary directory, and it is killed when the
// tests end (also when they fail, and also when the test binary itself is
// killed: the server runs with a parent-death signal). When VALKEY_URL is set
// (for example redis://127.0.0.1:6379/0), that server is used instead of the
// shared standalone one; Start, StartCluster and the cluster mode always
// start a server, so they need a server binary even then: valkey-server
// from ../shared/valkey/bin beside the checkout, else valkey-server, else
// redis-server on PATH (valkeyserver.Binary). Shared logs, once per test
// binary, which server and version the suite runs on (go test -v shows it).
//
// Every test gets its own namespace (a string safe to use as a hash tag), so
// tests sharing one server can run in parallel without seeing each other's
// keys.
//
// Use it from a package's TestMain:
//
//	func TestMain(m *testing.M) { valkeytest.Main(m) }
//
// then in a test:
//
//	srv := valkeytest.Shared(t)
//	c := srv.Client(t)
//	ns := valkeytest.Namespace(t)
package valkeytest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// ModeEnv selects the shared server's kind: unset or "standalone" for one
// server, "cluster" for a three-primary Valkey Cluster on loopback, so the
// same suite runs on both (make test runs the lanes suite in both modes).
const ModeEnv = "VALKEYTEST_MODE"

// Options tunes a dedicated server started by Start (see
// valkeyserver.Options).
type Options = valkeyserver.Options

// Server is a running (or external) server with test helpers.
type Server struct {
	*valkeyserver.Server
}

// shared is the per-binary server set up by Main. It is test-only state: a
// test binary has one shared server by design.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

var nsCounter atomic.Uint64

// Main runs the package's tests with a shared server and stops it afterwards,
// whatever the tests' outcome. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

func sharedMode() string {
	return strings.ToLower(strings.TrimSpace(os.Getenv(ModeEnv)))
}

// Shared returns the per-binary server, starting it on first use. It fails the
// test with a message naming the fix when no server can be had.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() {
		var s *valkeyserver.Server
		// A cluster is always started here: VALKEY_URL names one server.
		if u := os.Getenv("VALKEY_URL"); u != "" && sharedMode() != "cluster" {
			s, shared.err = valkeyserver.External(u)
		} else {
			switch sharedMode() {
			case "", "standalone", "cluster":
				s, shared.err = valkeyserver.Start(sharedMode(), Options{})
			default:
				shared.err = fmt.Errorf("%s=%q: want standalone or cluster", ModeEnv, sharedMode())
			}
		}
		if s != nil {
			shared.srv = &Server{s}
			// Once per test binary: which engine the suite runs on.
			tb.Logf("valkeytest: shared %s server at %s: %s", modeName(s), s.Addr, describe(s))
		}
	})
	if shared.err != nil {
		tb.Fatalf("valkeytest: %v", shared.err)
	}
	return shared.srv
}

func modeName(s *valkeyserver.Server) string {
	if s.Cluster() {
		return "cluster"
	}
	return "standalone"
}

// describe names the server's binary and version, or says it is external.
func describe(s *valkeyserver.Server) string {
	if s.Binary() == "" {
		return "external (VALKEY_URL)"
	}
	v, err := valkeyserver.Version(s.Binary())
	if err != nil {
		return err.Error()
	}
	return v + " (" + s.Binary() + ")"
}

// owned takes s, a dedicated server just started, for tb: a start's err
// fails tb, and s is stopped when tb ends.
func owned(tb testing.TB, s *valkeyserver.Server, err error) *Server {
	tb.Helper()
	if err != nil {
		tb.Fatalf("valkeytest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return &Server{s}
}

// Start starts a dedicated server for one test (for tests that restart or
// flush a server), stopped when the test ends. It ignores VALKEY_URL.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := valkeyserver.Start("standalone", opts)
	return owned(tb, s, err)
}

// StartCluster starts a dedicated cluster of n primaries for one test (n = 1
// puts all 16384 slots on one node: enough for CLUSTER KEYSLOT checks and a
// cluster client that refuses cross-slot calls), stopped when the test ends.
// Its Client is a cluster client.
func StartCluster(tb testing.TB, n int) *Server {
	tb.Helper()
	s, err := valkeyserver.StartCluster(n)
	return owned(tb, s, err)
}

// ClusterOptions shapes a dedicated cluster (see
// valkeyserver.ClusterOptions).
type ClusterOptions = valkeyserver.ClusterOptions

// StartClusterWith starts a dedicated cluster shaped by o for one test,
// stopped when the test ends. Its Client is a cluster client; its URL names
// every node.
func StartClusterWith(tb testing.TB, o ClusterOptions) *Server {
	tb.Helper()
	s, err := valkeyserver.StartClusterWith(o)
	return owned(tb, s, err)
}

// ClusterMode reports whether VALKEYTEST_MODE asks for a cluster.
func ClusterMode() bool { return sharedMode() == "cluster" }

// ModeCluster is the cluster StartMode starts under VALKEYTEST_MODE=cluster:
// three primaries with one replica each, so a test can also fail a primary
// over.
func ModeCluster() ClusterOptions { return ClusterOptions{Primaries: 3, Replicas: 1} }

// StartMode starts a dedicated server of the kind VALKEYTEST_MODE selects,
// stopped when the test ends: standalone with opts, or under
// VALKEYTEST_MODE=cluster a ModeCluster cluster (opts.AppendOnly applies to
// every node; opts.ExtraArgs must be empty). So a suite of tests that each
// need their own server (restart it, kill it) runs on both kinds.
func StartMode(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if !ClusterMode() {
		return Start(tb, opts)
	}
	if len(opts.ExtraArgs) > 0 {
		tb.Fatalf("valkeytest: StartMode: ExtraArgs %q do not apply to a cluster", opts.ExtraArgs)
	}
	o := ModeCluster()
	o.AppendOnly = opts.AppendOnly
	srv := StartClusterWith(tb, o)
	tb.Logf("valkeytest: cluster of %d primaries with %d replica(s) each: %s", o.Primaries, o.Replicas, describe(srv.Server))
	return srv
}

// Restart restarts the server process (see valkeyserver.Server.Restart),
// failing the test when it cannot.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.Server.Restart(); err != nil {
		tb.Fatalf("valkeytest: %v", err)
	}
}

// Client returns a new client connected to the server, closed when the test
// ends.
func (s *Server) Client(tb testing.TB) valkey.Client {
	tb.Helper()
	c, err := s.NewClient()
	return ownedClient(tb, s.Addr, c, err)
}

// ownedClient takes c, a client just connected to addr, for tb: a
// connection's err fails tb, and c is closed when tb ends.
func ownedClient(tb testing.TB, addr string, c valkey.Client, err error) valkey.Client {
	tb.Helper()
	if err != nil {
		tb.Fatalf("valkeytest: connect %s: %v", addr, err)
	}
	tb.Cleanup(c.Close)
	return c
}

// NodeClient returns a client of this one node (see
// valkeyserver.Server.NodeClient), closed when the test ends.
func NodeClient(tb testing.TB, node *valkeyserver.Server) valkey.Client {
	tb.Helper()
	c, err := node.NodeClient()
	return ownedClient(tb, node.Addr, c, err)
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9]+`)

// Namespace returns a string unique to this test in this test binary (and
// across binaries sharing one VALKEY_URL), made of letters, digits and
// dashes, so it is safe inside a hash tag and a key prefix.
func Namespace(tb testing.TB) string {
	tb.Helper()
	name := unsafe.ReplaceAllString(tb.Name(), "-")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return fmt.Sprintf("t%d-%d-%s", os.Getpid(), nsCounter.Add(1), strings.Trim(name, "-"))
}

// Keys returns every key matching pattern on every node (see
// valkeyserver.Keys).
func Keys(ctx context.Context, c valkey.Client, pattern string) ([]string, error) {
	return valkeyserver.Keys(ctx, c, pattern)
}
