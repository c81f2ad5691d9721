package demo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codemojex/codemojex/internal/version"
)

// botPackage is the bot's import path, built by buildBot.
const botPackage = "github.com/codemojex/codemojex/cmd/bot"

// buildBot builds the bot into dir with go build and returns the binary's
// path, stamped with the checkout's version as make build stamps it
// (checkoutVersion; the caller's flags come after, so an -ldflags of
// theirs wins): its --version, start-up log and the console's Processes
// page name the commit, not "devel" (go build's own VCS stamp is off under
// GOFLAGS=-buildvcs=false and in a git worktree). The working directory
// must be inside the module.
func buildBot(ctx context.Context, dir string, flags []string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build the bot: no go on PATH (or pass -bot <binary>): %w", err)
	}
	out := filepath.Join(dir, "codemojex-bot")
	args := []string{"build"}
	if v := checkoutVersion(ctx); v != "" {
		args = append(args, "-ldflags", version.LinkFlag(v))
	}
	args = append(append(args, flags...), "-o", out, botPackage)
	cmd := exec.CommandContext(ctx, goBin, args...)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", botPackage, err, strings.TrimSpace(string(msg)))
	}
	return out, nil
}

// BotFlag resolves the -bot flag of cmd/demo and cmd/play (path as given;
// "" builds ./cmd/bot and stays ""): the path made absolute against the
// working directory, since the bot runs in a temporary directory
// (startBot), where a relative path names nothing. The file must exist and
// be an executable regular file. Errors name the flag and the path as
// given, e.g. "-bot bin/codemojex: no such file (/src/bin/codemojex); run
// make build, or leave out -bot to build ./cmd/bot".
func BotFlag(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("-bot %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("-bot %s: no such file (%s); run make build, or leave out -bot to build ./cmd/bot", path, abs)
	case err != nil:
		return "", fmt.Errorf("-bot %s: %w", path, err)
	case fi.IsDir():
		return "", fmt.Errorf("-bot %s: a directory, not the bot's binary (%s)", path, abs)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("-bot %s: not an executable file (%s, mode %v)", path, abs, fi.Mode())
	}
	return abs, nil
}

// checkoutVersion is the working directory's checkout as make build's
// VERSION names it (git describe --tags --always --dirty: a tag, or the
// abbreviated commit, "-dirty" when modified), "" when git cannot tell
// (no git, not a checkout): the bot then reports its build information's.
func checkoutVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// consoleToken is a fresh console sign-in token: 32 random bytes, base64url.
func consoleToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// botEnv is the bot's whole environment: PATH and HOME from ours, then every
// configuration variable (internal/config) set explicitly, so neither the
// caller's environment nor a .env file can point the demo at the real
// Telegram. tag is the bot's VALKEY_KEY_TAG, the tag the demo reads its
// queues under.
func botEnv(apiURL, valkeyURL, tag string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	return append(env,
		"TELEGRAM_BOT_TOKEN="+Token,
		"TELEGRAM_API_URL="+apiURL,
		"VALKEY_URL="+valkeyURL,
		"VALKEY_KEY_TAG="+tag,
		fmt.Sprintf("ADMIN_IDS=%d", AdminID),
		// Telegram's limits (Telegram Bot FAQ), the same the emulator enforces.
		"TELEGRAM_GLOBAL_RATE=30",
		"TELEGRAM_CHAT_RATE=1",
		"TELEGRAM_GROUP_RATE=20",
		// One budget for replies and broadcasts, as the emulator's (the
		// scene shows 30/s overall binding; docs/delivery.md has the two
		// budgets).
		"TELEGRAM_REPLY_RATE=0",
		"BOT_ROLE=all",
		"WORKERS=8",
		"HTTP_ADDR=127.0.0.1:0",
		"LOG_LEVEL=warn",
		// The scene's burst and rush (one chat sending dozens of /help at
		// once) show the queue's fairness under a busy chat: the intake's
		// message limits (docs/floods.md) would drop them, so they are off.
		"FLOOD_WINDOW=10s",
		"FLOOD_USER_MESSAGES=0",
		"FLOOD_USER_TAPS=30",
		"FLOOD_CHAT_MESSAGES=0",
		"FLOOD_CHAT_TAPS=200",
		"REPLY_LANE_DEPTH=100",
	)
}

// botProcess is the bot running as a child process.
type botProcess struct {
	cmd  *exec.Cmd
	logs *tail
	done chan struct{}
	err  error // Wait's result, set before done is closed
}

// startBot starts bin in dir (a directory with no .env) with env; bin must
// be absolute or hold no '/' (exec.Cmd resolves a relative path against
// dir, not the caller's working directory: startStack makes it absolute).
func startBot(bin, dir string, env []string) (*botProcess, error) {
	logs := &tail{max: 16 << 10}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = logs
	cmd.Stderr = logs
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the bot: %w", err)
	}
	p := &botProcess{cmd: cmd, logs: logs, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *botProcess) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop asks the bot to stop (SIGTERM) and kills it after grace. It returns
// the exit error of a bot that did not stop cleanly.
func (p *botProcess) stop(grace time.Duration) error {
	if done, err := p.exited(); done {
		return fmt.Errorf("demo: the bot had already exited: %w", orExit0(err))
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		var ee *exec.ExitError
		if p.err != nil && !(errors.As(p.err, &ee) && ee.ExitCode() == 0) {
			return fmt.Errorf("demo: the bot exited with %w after SIGTERM", p.err)
		}
		return nil
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("demo: the bot did not stop within %v of SIGTERM; killed", grace)
	}
}

func orExit0(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
