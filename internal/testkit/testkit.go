// Package testkit is the one test kit shared across the repository's test
// packages (river's riversharedtest and asynq's testutil are the model): a
// goroutine-safe log buffer, building and starting the bot binary, running
// a component in the background and stopping it, the token-absence
// assertion, and the Bot API emulator with limit presets. It is test-only:
// it imports `testing`, and no production package imports it.
//
// A real Valkey comes from package valkeytest; the emulator from tgemu.
package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// LogBuffer collects log lines (or a process's output); safe for
// concurrent writes.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger returns a debug-level text logger writing to l.
func (l *LogBuffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// RequireNoToken fails the test when text shows the bot token: whole,
// query-escaped (the colon as %3A), or its secret part (after the colon)
// alone; what names where text came from.
func RequireNoToken(t testing.TB, text, token, what string) {
	t.Helper()
	require.NotContains(t, text, token, "%s leaks the token", what)
	require.NotContains(t, text, url.QueryEscape(token), "%s leaks the token", what)
	if _, secret, ok := strings.Cut(token, ":"); ok && secret != "" {
		require.NotContains(t, text, secret, "%s leaks the token", what)
	}
}

// CheckLogsAtEnd registers a cleanup that fails t when the logs written so
// far show token (RequireNoToken) and prints them when t failed; logs is
// read at the end (a *bytes.Buffer or a locked buffer of the test's).
func CheckLogsAtEnd(t testing.TB, logs fmt.Stringer, token string) {
	t.Helper()
	t.Cleanup(func() {
		RequireNoToken(t, logs.String(), token, "a log line")
		if t.Failed() {
			t.Logf("app logs:\n%s", logs.String())
		}
	})
}

// NewEmulator starts the Bot API emulator with opts (Telegram's limits,
// tgemu.DefaultLimits, unless a tgemu.WithLimits is given: see
// tgemu.ScaledLimits, and Unlimited for a test that must not depend on
// them), closed when the test ends.
func NewEmulator(t testing.TB, opts ...tgemu.Option) *tgemu.Emulator {
	t.Helper()
	emu, err := tgemu.New(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = emu.Close() })
	return emu
}

// Unlimited is the emulator without flood limits, for a test whose subject
// must not depend on pacing (e.g. a lease takeover, a transport fault);
// why, which must not be blank, says so at the call. Every other test runs
// at limits and asserts its 429s (Require429s).
func Unlimited(why string) tgemu.Option {
	if strings.TrimSpace(why) == "" {
		panic("testkit.Unlimited: say why the test runs without the emulator's limits")
	}
	return tgemu.WithLimits(tgemu.Limits{})
}

// Require429sAtEnd registers a cleanup that asserts Require429s(t, emu,
// want) when the test ends: after the cleanups registered later (the bot's
// or worker's stop), so every send is counted.
func Require429sAtEnd(t testing.TB, emu *tgemu.Emulator, want int) {
	t.Helper()
	t.Cleanup(func() { Require429s(t, emu, want) })
}

// Require429s fails t unless emu's flood limiter answered exactly want 429s
// so far (Stats.TooManyRequests; injected faults are not counted), listing
// each with the sends accepted in the second before it (tgemu.Throttles),
// which names the limit the bot's pacing missed. It fails as well when emu
// has no limits: a count of 0 there cannot fail.
func Require429s(t testing.TB, emu *tgemu.Emulator, want int) {
	t.Helper()
	require.NotEqual(t, tgemu.Limits{}, emu.Limits(), "429s asserted against an emulator without limits")
	got := emu.Stats().TooManyRequests
	if got == want {
		return
	}
	var lines []string
	var sends []tgemu.Request // the requests the limiter counts
	for _, r := range emu.Requests() {
		if m := strings.ToLower(r.Method); m == "sendmessage" || m == "editmessagetext" {
			sends = append(sends, r)
		}
	}
	for _, th := range tgemu.Throttles(sends) {
		lines = append(lines, fmt.Sprintf("chat %d at %s: %d sends in the second before overall, %d to the chat",
			th.ChatID, th.Time.Format("15:04:05.000"), th.Global, th.Chat))
	}
	require.Failf(t, "429s answered by the emulator's limiter", "got %d, want %d (limits %+v):\n%s",
		got, want, emu.Limits(), strings.Join(lines, "\n"))
}

// RunInBackground runs run(ctx) in a goroutine until stop is called or the
// test ends, and returns stop, which cancels ctx and returns run's error
// (failing the test when run does not return within grace). stop is
// idempotent.
func RunInBackground(t testing.TB, name string, grace time.Duration, run func(context.Context) error) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(grace):
				all := goroutines()
				t.Errorf("%s did not stop within %v; where the repository's goroutines wait:\n%s\nevery goroutine's stack:\n%s",
					name, grace, Waiting(all), all)
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// goroutines returns every goroutine's stack (runtime.Stack of all, up to
// 4 MiB), for a test to say where a run that would not stop is waiting.
func goroutines() []byte {
	b := make([]byte, 4<<20)
	return b[:runtime.Stack(b, true)]
}

// module is the import path prefix of the repository's packages.
const module = "github.com/codemojex/codemojex/"

// Waiting summarizes a runtime.Stack dump of all goroutines: one line per
// goroutine running the repository's code (testkit's and the testing
// package's own excepted) with its state and its innermost frame in the
// repository, most frequent first with their counts, so a run that would not
// stop shows where it waits in the first lines of a failure.
func Waiting(dump []byte) string {
	counts := map[string]int{}
	var order []string
	for _, g := range strings.Split(string(dump), "\n\n") {
		lines := strings.Split(g, "\n")
		if len(lines) < 2 || strings.Contains(g, module+"internal/testkit.") {
			continue
		}
		state := lines[0]
		if i, j := strings.Index(state, "["), strings.LastIndex(state, "]"); i >= 0 && j > i {
			state = state[i+1 : j]
		}
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, module) {
				key := state + ": " + l
				if counts[key] == 0 {
					order = append(order, key)
				}
				counts[key]++
				break
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return counts[order[i]] > counts[order[j]] })
	var b strings.Builder
	for _, k := range order {
		fmt.Fprintf(&b, "%4d × %s\n", counts[k], k)
	}
	return b.String()
}

// FreeAddr returns a loopback host:port that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// ModuleRoot is the directory of the module's go.mod (the repository's
// root), found upwards from the test's working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

// BuildBot builds cmd/bot into a temporary directory (with -race when the
// tests run with it, and flags, e.g. "-ldflags", "-X ...") and returns the
// binary's path.
func BuildBot(t testing.TB, flags ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to build ./cmd/bot")
	bin := filepath.Join(t.TempDir(), "bot")
	args := append([]string{"build", "-o", bin}, flags...)
	if RaceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command(goBin, append(args, "./cmd/bot")...)
	cmd.Dir = ModuleRoot(t)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/bot: %s", out)
	t.Logf("built cmd/bot (race=%v) in %v", RaceEnabled, time.Since(t0).Round(time.Millisecond))
	return bin
}

// Proc is one running bot process.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	// Out is its stdout and stderr.
	Out  *LogBuffer
	done chan struct{}
	err  error
}

// StartBot runs the bot binary bin in an empty directory (no .env there)
// with exactly env (PATH and HOME are added). It is stopped (SIGTERM, then
// SIGKILL) when the test ends; its output is logged when the test failed,
// and a data race it reports fails the test.
func StartBot(t testing.TB, bin, name string, env []string) *Proc {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = dir
	// os/exec uses the last value of a duplicated key.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	p := &Proc{Name: name, Cmd: cmd, Out: &LogBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.Stop()
		if t.Failed() {
			t.Logf("--- %s output ---\n%s", p.Name, Tail(p.Out.String(), 4000))
		}
		if strings.Contains(p.Out.String(), "WARNING: DATA RACE") {
			t.Errorf("%s: data race reported:\n%s", p.Name, Tail(p.Out.String(), 8000))
		}
	})
	return p
}

// Tail is the last n bytes of s, marked with "..." when cut.
func Tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop asks for a graceful stop and waits (SIGKILL after 20 s); it returns
// the exit error.
func (p *Proc) Stop() error {
	if p.Exited() {
		return p.err
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.Kill()
	}
	return p.err
}

// ExitErr is the process's exit error once it exited, nil while it runs.
func (p *Proc) ExitErr() error {
	if p.Exited() {
		return p.err
	}
	return nil
}

// RunBot runs the bot binary bin in dir with exactly env (PATH is added)
// until it exits, and returns its exit code and standard error. It fails
// the test when the bot keeps running for 30 s or exits with code 0.
func RunBot(t testing.TB, bin, dir string, env []string) (code int, stderr string) {
	t.Helper()
	code, _, stderr = RunBinary(t, bin, dir, env)
	require.NotZero(t, code, "the bot exited 0:\n%s", stderr)
	return code, stderr
}

// RunBinary runs bin with args in dir with exactly env (PATH is added)
// until it exits, and returns its exit code, standard output and standard
// error. It fails the test when bin keeps running for 30 s or cannot be
// started.
func RunBinary(t testing.TB, bin, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s %v kept running:\n%s", filepath.Base(bin), args, errOut.String())
	if err == nil {
		return 0, out.String(), errOut.String()
	}
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit error, got %v", err)
	return ee.ExitCode(), out.String(), errOut.String()
}
