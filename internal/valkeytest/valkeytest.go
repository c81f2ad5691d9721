// Package valkeytest gives tests a real Valkey (or Redis) server over a real
// connection: never a mock.
//
// One throwaway server is started per test binary, on a free loopback port,
// with no persistence, in a temporary directory, and it is killed when the
// tests end (also when they fail, and also when the test binary itself is
// killed: the server runs with a parent-death signal). When VALKEY_URL is set
// (for example redis://127.0.0.1:6379/0), that server is used instead and
// nothing is started.
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
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"
)

// ErrNoServer is returned (and reported by Shared) when no server binary can
// be found and VALKEY_URL is unset.
var ErrNoServer = errors.New("valkeytest: no valkey-server or redis-server on PATH and VALKEY_URL is unset; " +
	"install one (Debian: apt-get install redis-server) or run `make test`, which installs it")

// shared is the per-binary server set up by Main. It is test-only state: a
// test binary has one shared server by design.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

var nsCounter atomic.Uint64

// Server is a running (or external) Valkey/Redis server.
type Server struct {
	// Addr is host:port.
	Addr string
	// URL is a redis:// URL for the server.
	URL string

	cmd     *exec.Cmd
	dir     string
	binary  string
	args    []string
	extern  bool
	stopped chan struct{}
	// cluster holds the nodes of a cluster started by this package.
	cluster []*Server
	addrs   []string
}

// Options tunes a dedicated server started by Start.
type Options struct {
	// AppendOnly turns on the append-only file with appendfsync always, so a
	// restart keeps every acknowledged write.
	AppendOnly bool
	// ExtraArgs are passed to the server as they are (e.g. "--maxmemory", "10mb").
	ExtraArgs []string
}

// Main runs the package's tests with a shared server and stops it afterwards,
// whatever the tests' outcome. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

// Shared returns the per-binary server, starting it on first use. It fails the
// test with a message naming the fix when no server can be had.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() {
		// A cluster is always started here: VALKEY_URL names one server.
		if u := os.Getenv("VALKEY_URL"); u != "" && sharedMode() != "cluster" {
			shared.srv, shared.err = external(u)
			return
		}
		switch sharedMode() {
		case "", "standalone":
			shared.srv, shared.err = start(Options{})
		case "cluster":
			shared.srv, shared.err = startCluster(3)
		default:
			shared.err = fmt.Errorf("%s=%q: want standalone or cluster", ModeEnv, sharedMode())
		}
	})
	if shared.err != nil {
		tb.Fatalf("valkeytest: %v", shared.err)
	}
	return shared.srv
}

// Start starts a dedicated server for one test (for tests that restart or
// flush a server), stopped when the test ends. It ignores VALKEY_URL.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := start(opts)
	if err != nil {
		tb.Fatalf("valkeytest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// StartServer starts a throwaway server outside of a test (for the demo and
// the bench command); the caller stops it with Stop. mode is "standalone"
// (or "") or "cluster".
func StartServer(mode string, opts Options) (*Server, error) {
	switch mode {
	case "", "standalone":
		return start(opts)
	case "cluster":
		return startCluster(3)
	}
	return nil, fmt.Errorf("valkeytest: mode %q: want standalone or cluster", mode)
}

// Binary returns the path of valkey-server or redis-server on PATH.
func Binary() (string, error) {
	for _, name := range []string{"valkey-server", "redis-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoServer
}

func external(u string) (*Server, error) {
	opt, err := valkey.ParseURL(u)
	if err != nil {
		return nil, fmt.Errorf("VALKEY_URL is not a valid redis:// URL: %w", err)
	}
	s := &Server{Addr: opt.InitAddress[0], URL: u, extern: true}
	if err := s.ping(5 * time.Second); err != nil {
		return nil, fmt.Errorf("VALKEY_URL=%s does not answer PING: %w", u, err)
	}
	return s, nil
}

func start(opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "valkeytest-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args := []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", dir, "--save", "", "--daemonize", "no",
			"--protected-mode", "yes", "--loglevel", "warning",
			"--logfile", filepath.Join(dir, "server.log"),
		}
		if opts.AppendOnly {
			args = append(args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			args = append(args, "--appendonly", "no")
		}
		args = append(args, opts.ExtraArgs...)
		s := &Server{
			Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			URL:    fmt.Sprintf("redis://127.0.0.1:%d/0", port),
			dir:    dir,
			binary: bin,
			args:   args,
		}
		if err := s.launch(); err != nil {
			lastErr = err
			continue
		}
		return s, nil
	}
	_ = os.RemoveAll(dir)
	return nil, fmt.Errorf("could not start %s: %w", bin, lastErr)
}

func (s *Server) launch() error {
	cmd := exec.Command(s.binary, s.args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	s.stopped = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) {
		_ = c.Wait()
		close(done)
	}(cmd, s.stopped)
	if err := s.ping(10 * time.Second); err != nil {
		_ = cmd.Process.Kill()
		<-s.stopped
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		return fmt.Errorf("server on %s did not answer: %w (log: %s)", s.Addr, err, strings.TrimSpace(string(log)))
	}
	return nil
}

// Stop kills a server this package started and removes its directory. It is a
// no-op for an external server. Safe to call twice.
func (s *Server) Stop() {
	for _, n := range s.cluster {
		n.Stop()
	}
	if s.extern || s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.stopped
	s.cmd = nil
	_ = os.RemoveAll(s.dir)
}

// Restart stops the server process (a standalone server only) and starts it again on the same port and
// directory (with AppendOnly, acknowledged writes survive). It fails the test
// when the server cannot be restarted.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if s.extern {
		tb.Fatalf("valkeytest: cannot restart an external server (VALKEY_URL)")
	}
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.stopped:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.stopped
		}
	}
	if err := s.launch(); err != nil {
		tb.Fatalf("valkeytest: restart: %v", err)
	}
}

// Kill stops the server process abruptly (SIGKILL) without restarting it;
// call Restart to bring it back.
func (s *Server) Kill() {
	if s.extern || s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.stopped
}

// Client returns a new client connected to the server, closed when the test
// ends.
func (s *Server) Client(tb testing.TB) valkey.Client {
	tb.Helper()
	c, err := s.NewClient()
	if err != nil {
		tb.Fatalf("valkeytest: connect %s: %v", s.Addr, err)
	}
	tb.Cleanup(c.Close)
	return c
}

// NewClient returns a new client connected to the server; the caller closes it.
func (s *Server) NewClient() (valkey.Client, error) {
	if s.Cluster() {
		return valkey.NewClient(valkey.ClientOption{InitAddress: s.addrs, DisableCache: true})
	}
	opt, err := valkey.ParseURL(s.URL)
	if err != nil {
		return nil, err
	}
	opt.DisableCache = true
	return valkey.NewClient(opt)
}

func (s *Server) ping(within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		opt, err := valkey.ParseURL(s.URL)
		if err != nil {
			return err
		}
		opt.DisableCache = true
		c, err := valkey.NewClient(opt)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = c.Do(ctx, c.B().Ping().Build()).Error()
			cancel()
			c.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	return last
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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

// Keys returns every key matching pattern (SCAN, not KEYS, on every node of
// a cluster), for tests that check the keyspace returns to its baseline.
func Keys(ctx context.Context, c valkey.Client, pattern string) ([]string, error) {
	var out []string
	for _, n := range c.Nodes() {
		keys, err := scanNode(ctx, n, pattern)
		if err != nil {
			return nil, err
		}
		out = append(out, keys...)
	}
	return out, nil
}

func scanNode(ctx context.Context, c valkey.Client, pattern string) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return nil, err
		}
		out = append(out, e.Elements...)
		cursor = e.Cursor
		if cursor == 0 {
			return out, nil
		}
	}
}
