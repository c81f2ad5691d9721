// Package valkeyserver launches a throwaway Valkey (or Redis) server: on a
// free loopback port, with no persistence (unless asked), in a temporary
// directory, killed with its parent (a parent-death signal), or a Valkey
// Cluster on loopback (primaries, optionally with replicas, whose nodes a
// test can kill, restart or fail over). It imports no `testing`: the
// demo (cmd/demo) and the bench command start servers with it at run time;
// tests use package valkeytest, which wraps it with testing.TB helpers.
package valkeyserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeyclient"
)

// ErrNoServer is returned by Start, StartCluster and Binary when no server
// binary is found (see Binary for where it looks). Setting VALKEY_URL does
// not avoid it: VALKEY_URL only replaces the tests' shared standalone server
// (valkeytest.Shared), while the cluster suite, dedicated test servers, the
// Examples and the demo always start a server.
var ErrNoServer = errors.New("valkeyserver: no valkey-server or redis-server in $VALKEY_BIN_DIR, on PATH, nor in ../shared/valkey/bin beside the checkout, " +
	"needed to start a throwaway server (VALKEY_URL does not replace it); point VALKEY_BIN_DIR at a directory holding valkey-server, or install one (Debian: apt-get install redis-server; " +
	"`make test` run as root on Debian installs it)")

// BinDirEnv names a directory searched for valkey-server before PATH. Unset,
// it is the Valkey build provided beside the checkout,
// <repository top>/../shared/valkey/bin, when that exists.
const BinDirEnv = "VALKEY_BIN_DIR"

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
	// replicas is the number of replicas of each primary of the cluster.
	replicas int
}

// Options tunes a standalone server started by Start.
type Options struct {
	// AppendOnly turns on the append-only file with appendfsync always, so a
	// restart keeps every acknowledged write.
	AppendOnly bool
	// ExtraArgs are passed to the server as they are (e.g. "--maxmemory", "10mb").
	ExtraArgs []string
}

// Start starts a throwaway server; the caller stops it with Stop. mode is
// "standalone" (or "") for one server with opts, or "cluster" for three
// primaries (opts do not apply).
func Start(mode string, opts Options) (*Server, error) {
	switch mode {
	case "", "standalone":
		return start(opts)
	case "cluster":
		return StartCluster(3)
	}
	return nil, fmt.Errorf("valkeyserver: mode %q: want standalone or cluster", mode)
}

// Binary returns the server binary that Start and StartCluster run, the
// first of: valkey-server in $VALKEY_BIN_DIR (default: ../shared/valkey/bin
// beside the repository's top directory, found upwards from the working
// directory), valkey-server on PATH, redis-server on PATH. Valkey comes
// first: it is the engine the bot runs on in production. Errors:
// ErrNoServer.
func Binary() (string, error) {
	dir, ok := os.LookupEnv(BinDirEnv)
	if !ok {
		dir = sharedBinDir()
	}
	return findBinary(dir, exec.LookPath)
}

// findBinary is Binary's search with the directory searched first (may be
// empty) and PATH's lookup given.
func findBinary(dir string, lookPath func(string) (string, error)) (string, error) {
	if dir != "" {
		p := filepath.Join(dir, "valkey-server")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	for _, name := range []string{"valkey-server", "redis-server"} {
		if p, err := lookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoServer
}

// sharedBinDir is <repository top>/../shared/valkey/bin, the repository's
// top being the nearest directory upwards from the working directory that
// holds .git (a directory, or a file in a worktree); "" when there is none.
func sharedBinDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "valkey", "bin")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Version runs bin --version and returns its name and version, e.g.
// "valkey-server 8.0.1" or "redis-server 7.0.15". Errors: the command's, or
// an output without "v=<version>".
func Version(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("valkeyserver: %s --version: %w", bin, err)
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			name := "redis-server"
			if strings.HasPrefix(strings.ToLower(string(out)), "valkey") {
				name = "valkey-server"
			}
			return name + " " + v, nil
		}
	}
	return "", fmt.Errorf("valkeyserver: %s --version: no version in %q", bin, strings.TrimSpace(string(out)))
}

// Describe names the server binary Start would run, its version and path,
// e.g. "valkey-server 8.0.1 (/work/shared/valkey/bin/valkey-server)", for
// test logs and benchmark reports. Errors: ErrNoServer; Version's.
func Describe() (string, error) {
	bin, err := Binary()
	if err != nil {
		return "", err
	}
	v, err := Version(bin)
	if err != nil {
		return "", err
	}
	return v + " (" + bin + ")", nil
}

// External returns the server at redis:// URL u, started by someone else
// (Stop, Kill and Restart do nothing to it), once it answers PING.
func External(u string) (*Server, error) {
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
	dir, err := os.MkdirTemp("", "valkeyserver-")
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
	if s.killProcess() {
		s.cmd = nil
		_ = os.RemoveAll(s.dir)
	}
}

// killProcess kills (SIGKILL) the server process this package started and
// waits for it to end; false, doing nothing, for an external server or one
// not running (stopped).
func (s *Server) killProcess() bool {
	if s.extern || s.cmd == nil {
		return false
	}
	_ = s.cmd.Process.Kill()
	<-s.stopped
	return true
}

// ErrExternal is returned by Restart for a server this package did not start.
var ErrExternal = errors.New("valkeyserver: cannot restart an external server (VALKEY_URL)")

// Binary is the path of the server binary running this server (the first
// node's, for a cluster); "" for an external server.
func (s *Server) Binary() string {
	if len(s.cluster) > 0 {
		return s.cluster[0].binary
	}
	return s.binary
}

// Restart stops the server process with SIGTERM (SIGKILL after 10 s) and
// starts it again on the same port and directory (with AppendOnly,
// acknowledged writes survive). For a cluster it restarts every node
// (replicas first) and waits until the cluster is ready again (see
// StartClusterWith). Errors: ErrExternal; the launch's error.
func (s *Server) Restart() error {
	if s.extern {
		return ErrExternal
	}
	if s.Cluster() {
		return s.restartCluster()
	}
	s.terminate()
	if err := s.launch(); err != nil {
		return fmt.Errorf("valkeyserver: restart: %w", err)
	}
	return nil
}

// Kill stops the server process (every node of a cluster) abruptly
// (SIGKILL) without restarting it; call Restart to bring it back.
func (s *Server) Kill() {
	for _, n := range s.cluster {
		n.Kill()
	}
	s.killProcess()
}

// Signal sends sig to the server process this package started (a
// standalone one), e.g. SIGSTOP to freeze it and SIGCONT to thaw it.
// Errors: ErrExternal for a server this package did not start or a
// cluster; the kernel's.
func (s *Server) Signal(sig syscall.Signal) error {
	if s.extern || s.cmd == nil || s.Cluster() {
		return ErrExternal
	}
	return s.cmd.Process.Signal(sig)
}

// NewClient returns a new client connected to the server; the caller closes it.
func (s *Server) NewClient() (valkey.Client, error) {
	if s.Cluster() {
		return valkeyclient.New(valkey.ClientOption{InitAddress: s.addrs, DisableCache: true})
	}
	opt, err := valkey.ParseURL(s.URL)
	if err != nil {
		return nil, err
	}
	opt.DisableCache = true
	return valkeyclient.New(opt)
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

// Keys returns every key matching pattern (SCAN, not KEYS, on every node of
// a cluster), e.g. for tests that check the keyspace returns to its baseline.
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
