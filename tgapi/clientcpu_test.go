package tgapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/tgapi"
)

// emulatorEnv, when set in this test binary's environment, makes it serve
// the emulator (TestMain) instead of running tests: BenchmarkSendCPU's
// emulator runs in a process of its own, so the benchmark's CPU time and
// allocations are the client's alone.
const emulatorEnv = "TGAPI_TEST_SERVE_EMULATOR"

func TestMain(m *testing.M) {
	if os.Getenv(emulatorEnv) == "1" {
		if err := serveEmulator(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveEmulator runs an emulator without limits (any chat), writes its URL
// and token as one line to out, and serves until in ends.
func serveEmulator(in io.Reader, out io.Writer) error {
	emu, err := tgemu.New(tgemu.WithLimits(tgemu.Limits{}), tgemu.WithAllowAnyChat())
	if err != nil {
		return err
	}
	defer emu.Close()
	if _, err := fmt.Fprintln(out, emu.URL(), emu.Token()); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, in)
	return err
}

// startEmulatorProcess runs this test binary as serveEmulator's process and
// returns its URL and token; it ends when b's cleanup closes its stdin.
func startEmulatorProcess(b *testing.B) (url, token string) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), emulatorEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("emulator process: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		b.Fatalf("emulator process printed %q", line)
	}
	return f[0], f[1]
}

// cpuTime is this process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSendCPU is one worker send of a paid broadcast's copy (a
// 1,000-character text, allow_paid_broadcast, the message_id alone read:
// SendMessageID on a client with a 20-s Timeout, as the worker's) over loopback to the
// emulator in a process of its own, so allocs/op, B/op and cpu-µs/op (this
// process's user + system time over the calls) are the client's alone:
// tgapi, its transport, the kernel's share of the socket calls. Two
// transports: the client's own connections (direct, the worker's) and
// net/http (an HTTPClient given: the baseline).
func BenchmarkSendCPU(b *testing.B) {
	url, token := startEmulatorProcess(b)
	text := strings.Repeat("Lazy broadcast benchmark: one record, a cursor, a window of copies. ", 15)[:1000]
	for _, tc := range []struct {
		name string
		hc   *http.Client
	}{
		{"direct", nil},
		{"net-http", &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := tgapi.New(tgapi.Config{Token: token, ServerURL: url, HTTPClient: tc.hc, MaxIdleConns: 4, Timeout: 20 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseIdleConnections()
			send := func(chat int64) {
				id, err := c.SendMessageID(context.Background(), &bot.SendMessageParams{ChatID: chat, Text: text, AllowPaidBroadcast: true})
				if err != nil || id == 0 {
					b.Fatalf("send: id %d, %v", id, err)
				}
			}
			send(1_000_000_000) // the connection dialled
			b.ReportAllocs()
			chat, t0 := int64(1_000_000_000), cpuTime(b)
			for b.Loop() {
				chat++
				send(chat)
			}
			b.ReportMetric(float64((cpuTime(b)-t0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
