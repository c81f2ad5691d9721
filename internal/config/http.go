package config

import (
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// HTTP is the server of /healthz, /metrics and, in webhook mode, the
// webhook path.
type HTTP struct {
	// HTTPAddr serves /healthz and /metrics (HTTP_ADDR).
	HTTPAddr string `env:"HTTP_ADDR" envDefault:":8080"`
}

// Validate checks that HTTP_ADDR is host:port or :port. Errors: *Error.
func (h HTTP) Validate() error {
	if _, _, err := net.SplitHostPort(h.HTTPAddr); err != nil {
		return &Error{Var: "HTTP_ADDR", Want: fmt.Sprintf("host:port or :port, e.g. :8080; got %q", h.HTTPAddr)}
	}
	return nil
}

// MinConsoleToken is the shortest CONSOLE_TOKEN accepted (characters).
const MinConsoleToken = 32

// MinConsoleTokenBits is the least estimated entropy of CONSOLE_TOKEN
// (bits, ConsoleTokenBits): 2^128 guesses is out of reach of any rate.
const MinConsoleTokenBits = 128

// MakeConsoleToken is the command the errors suggest for a token: 64 hex
// digits, 256 random bits (ConsoleTokenBits counts 330).
const MakeConsoleToken = "openssl rand -hex 32"

// Console is the operator console's address, sign-in token and trusted
// proxies.
type Console struct {
	// ConsoleAddr serves the operator console (CONSOLE_ADDR, host:port;
	// "" = off, the default). Bind it to loopback (127.0.0.1:8081) and
	// reach it through an SSH tunnel or a TLS-terminating proxy.
	ConsoleAddr string `env:"CONSOLE_ADDR"`
	// ConsoleToken is the console's sign-in token (CONSOLE_TOKEN), at
	// least MinConsoleToken characters and MinConsoleTokenBits of
	// estimated entropy (ValidateConsoleToken); required with CONSOLE_ADDR.
	ConsoleToken string `env:"CONSOLE_TOKEN"`
	// ConsoleTrustedProxies lists the proxies whose X-Forwarded-For the
	// console believes (CONSOLE_TRUSTED_PROXIES): comma-separated CIDRs or
	// addresses; "" (the default) believes none (ParseTrustedProxies).
	ConsoleTrustedProxies string `env:"CONSOLE_TRUSTED_PROXIES"`
}

// Validate checks CONSOLE_TRUSTED_PROXIES (ParseTrustedProxies), and
// CONSOLE_ADDR (host:port) and, with it, CONSOLE_TOKEN
// (ValidateConsoleToken). The token is never quoted. That it is not the
// bot token is Config.Validate's rule (it spans two sections). Errors:
// *Error.
func (c Console) Validate() error {
	if _, err := ParseTrustedProxies(c.ConsoleTrustedProxies); err != nil {
		return err
	}
	if c.ConsoleAddr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(c.ConsoleAddr); err != nil {
		return &Error{Var: "CONSOLE_ADDR", Want: fmt.Sprintf("host:port, e.g. 127.0.0.1:8081 (empty: no console); got %q", c.ConsoleAddr)}
	}
	if c.ConsoleToken == "" {
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("required with CONSOLE_ADDR: at least %d random characters (make one with: %s); it is empty, so the console is not started", MinConsoleToken, MakeConsoleToken)}
	}
	return ValidateConsoleToken(c.ConsoleToken)
}

// ValidateConsoleToken checks a console sign-in token: at least
// MinConsoleToken characters and at least MinConsoleTokenBits of estimated
// entropy (ConsoleTokenBits). The error says how to make a token and never
// quotes this one. Errors: *Error (CONSOLE_TOKEN).
func ValidateConsoleToken(token string) error {
	n := utf8.RuneCountInString(token)
	if n < MinConsoleToken {
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("at least %d random characters (make one with: %s); the value set has %d (not shown)", MinConsoleToken, MakeConsoleToken, n)}
	}
	if bits := ConsoleTokenBits(token); bits < MinConsoleTokenBits {
		return &Error{Var: "CONSOLE_TOKEN", Want: fmt.Sprintf("at least %d bits of entropy (make one with: %s); the value set (not shown) is estimated at %d bits: "+
			"log2 of the alphabet of its character classes (a-z, A-Z, 0-9, others) x its distinct 3-character windows + 2, "+
			"so a repeated pattern, a run such as abc or 123 or few distinct characters count for little", MinConsoleTokenBits, MakeConsoleToken, int(bits))}
	}
	return nil
}

// ConsoleTokenBits estimates a token's entropy in bits, as a guesser who
// tries the token's kind first would count it: log2 of the alphabet of the
// character classes it uses (a-z 26, A-Z 26, 0-9 10, any other character
// 33) times its effective length, the number of distinct 3-character
// windows it holds that are not a run (three equal characters, or three
// consecutive ones up or down: aaa, abc, 321) plus 2, at most its length.
// A repeated pattern adds no new window, so "password" repeated any number
// of times counts as 10 lowercase characters (47 bits); a run adds none,
// so "abcdef...xyz0123456789" counts for little. A random token keeps
// nearly all its windows: 64 hex digits (openssl rand -hex 32) are about
// 330 bits, 44 base64 characters (openssl rand -base64 32) about 290, 32
// hex digits (openssl rand -hex 16) about 165. It is an estimate, not a
// measure: it cannot tell a random token from a sentence of the same
// shape.
func ConsoleTokenBits(token string) float64 {
	r := []rune(token)
	var lower, upper, digit, other bool
	for _, c := range r {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	alphabet := 0
	for _, class := range []struct {
		used bool
		size int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 33}} {
		if class.used {
			alphabet += class.size
		}
	}
	if alphabet < 2 {
		return 0
	}
	windows := map[[3]rune]bool{}
	for i := 0; i+2 < len(r); i++ {
		d1, d2 := r[i+1]-r[i], r[i+2]-r[i+1]
		if d1 == d2 && d1 >= -1 && d1 <= 1 {
			continue // a run: aaa, abc, cba
		}
		windows[[3]rune{r[i], r[i+1], r[i+2]}] = true
	}
	return float64(min(len(windows)+2, len(r))) * math.Log2(float64(alphabet))
}

// ParseTrustedProxies parses CONSOLE_TRUSTED_PROXIES: comma-separated
// CIDRs (10.0.0.0/8, fd00::/8) or single addresses (127.0.0.1, ::1, read
// as /32 or /128); spaces around the commas are ignored; "" is none. An
// IPv4-mapped IPv6 address is read as its IPv4 address. Errors: *Error
// quoting the entry that does not parse.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.Contains(part, "/") {
			p, err := netip.ParsePrefix(part)
			if err != nil {
				return nil, &Error{Var: "CONSOLE_TRUSTED_PROXIES", Want: fmt.Sprintf("comma-separated CIDRs or addresses of the proxies in front of the console (e.g. 172.16.0.0/12,127.0.0.1); %q is neither", part)}
			}
			if p.Addr().Is4In6() {
				p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, &Error{Var: "CONSOLE_TRUSTED_PROXIES", Want: fmt.Sprintf("comma-separated CIDRs or addresses of the proxies in front of the console (e.g. 172.16.0.0/12,127.0.0.1); %q is neither", part)}
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// TrustedProxies returns CONSOLE_TRUSTED_PROXIES parsed
// (ParseTrustedProxies); nil when it does not parse, which Validate
// refuses.
func (c Console) TrustedProxies() []netip.Prefix {
	p, _ := ParseTrustedProxies(c.ConsoleTrustedProxies)
	return p
}

// Log is the log level.
type Log struct {
	// LogLevel is debug, info, warn or error (LOG_LEVEL).
	LogLevel string `env:"LOG_LEVEL" envDefault:"info"`
}

// Validate checks LOG_LEVEL. Errors: *Error.
func (l Log) Validate() error {
	if _, err := l.SlogLevel(); err != nil {
		return &Error{Var: "LOG_LEVEL", Want: fmt.Sprintf("one of debug, info, warn, error; got %q", l.LogLevel)}
	}
	return nil
}

// SlogLevel returns LogLevel as a slog.Level.
func (l Log) SlogLevel() (slog.Level, error) {
	var lvl slog.Level
	switch strings.ToLower(l.LogLevel) {
	case "debug", "info", "warn", "error":
		err := lvl.UnmarshalText([]byte(l.LogLevel))
		return lvl, err
	}
	return lvl, fmt.Errorf("unknown level %q", l.LogLevel)
}
