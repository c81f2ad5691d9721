package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/config"
)

// defaultProbeTimeout bounds `codemojex healthcheck`'s request: below the
// compose file's healthcheck timeout (5 s), so the probe answers itself.
const defaultProbeTimeout = 3 * time.Second

// healthcheck is `codemojex healthcheck [-timeout 3s]`: it GETs
// /healthz of the bot configured in this environment (HTTP_ADDR, read as
// the bot reads it: .env in the working directory first, set variables
// winning; an unspecified or empty host is probed on the loopback) and
// exits exitOK when it answers 200, exitFail otherwise (another status,
// no answer within the timeout, no server), exitConfig on a bad argument
// or an HTTP_ADDR it cannot probe (bad, or port 0). A container image
// without a shell or curl (the Dockerfile's is FROM scratch) probes itself so. It prints one line: the
// answer's first line, or why there is none.
func healthcheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("codemojex healthcheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	timeout := fs.Duration("timeout", defaultProbeTimeout, "how long to wait for /healthz's answer")
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: codemojex healthcheck [-timeout 3s]: exits 0 when the bot's /healthz (HTTP_ADDR) answers 200, 1 otherwise, 2 on a bad argument")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		usage(stdout) // asked for: not an error
		return exitOK
	} else if err != nil {
		fmt.Fprintf(stderr, "codemojex healthcheck: %v\n", err)
		usage(stderr)
		return exitConfig
	}
	if fs.NArg() > 0 || *timeout <= 0 {
		fmt.Fprintf(stderr, "codemojex healthcheck: usage: codemojex healthcheck [-timeout 3s] (a positive timeout, no other argument); got %q\n", args)
		return exitConfig
	}
	h, err := config.LoadHTTP(".env")
	if err != nil {
		fmt.Fprintf(stderr, "codemojex healthcheck: configuration error: %v\n", err)
		return exitConfig
	}
	target, err := probeURL(h.HTTPAddr)
	if err != nil {
		fmt.Fprintf(stderr, "codemojex healthcheck: %v\n", err)
		return exitConfig
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	status, line, err := get(ctx, target)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "unhealthy: GET %s: %v\n", target, err)
		return exitFail
	case status != http.StatusOK:
		fmt.Fprintf(stderr, "unhealthy: GET %s: %d %s\n", target, status, line)
		return exitFail
	}
	fmt.Fprintf(stdout, "healthy: %s\n", line)
	return exitOK
}

// probeURL is the /healthz URL of a server listening on addr (HTTP_ADDR):
// an empty or unspecified host (":8080", "0.0.0.0:8080", "[::]:8080") is
// reached on the loopback of its family. Errors: port 0, which the kernel
// replaces with a port only the bot's log names.
func probeURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("HTTP_ADDR %q: %w", addr, err)
	}
	if port == "0" {
		return "", fmt.Errorf("HTTP_ADDR %q: port 0 is picked by the kernel at start (the bot logs it), so it cannot be probed: set a fixed port", addr)
	}
	if a, err := netip.ParseAddr(host); host == "" || (err == nil && a.IsUnspecified()) {
		host = "127.0.0.1"
		if err == nil && a.Is6() && !a.Is4In6() {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// get GETs target and returns its status and the first line of its body
// (at most 200 bytes). Errors: the request's (no server, ctx's end).
func get(ctx context.Context, target string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return 0, "", fmt.Errorf("no answer within the timeout: %w", err)
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(io.LimitReader(resp.Body, 200)).ReadString('\n')
	return resp.StatusCode, strings.TrimSpace(line), nil
}
