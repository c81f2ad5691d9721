package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// cookieName is the session cookie.
const cookieName = "codemojex_console"

// csp is the Content-Security-Policy of every answer: nothing but the
// console's own scripts, styles and fetches; no inline script or style, no
// framing, forms posting only to the console.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// session is one signed-in browser.
type session struct {
	csrf    string    // the CSRF token its forms carry
	expires time.Time // end of the sign-in
	flash   string    // the answer of its last change, shown once
	flashOK bool
	// composer names the sign-in as a broadcast composer
	// (broadcast.Composition.Composer: "console:" + it), random, not the
	// session id (a secret kept out of Valkey): a new composition
	// replaces the session's earlier unconfirmed preview, in whichever
	// tab it is.
	composer string
}

// sessions are the signed-in browsers, in memory (a restart signs everyone
// out), at most max (the oldest is dropped for a new one).
type sessions struct {
	mu  sync.Mutex
	ttl time.Duration
	max int
	m   map[string]*session
}

func newSessions(ttl time.Duration, max int) *sessions {
	return &sessions{ttl: ttl, max: max, m: map[string]*session{}}
}

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// create starts a session and returns its id.
func (s *sessions) create() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for id, x := range s.m {
		if now.After(x.expires) {
			delete(s.m, id)
		}
	}
	if len(s.m) >= s.max {
		var oldest string
		for id, x := range s.m {
			if oldest == "" || x.expires.Before(s.m[oldest].expires) {
				oldest = id
			}
		}
		delete(s.m, oldest)
	}
	id := randomToken()
	s.m[id] = &session{csrf: randomToken(), expires: now.Add(s.ttl), composer: randomToken()[:22]}
	return id
}

// get returns a copy of session id, ok false when unknown or expired.
func (s *sessions) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.m[id]
	if !ok || time.Now().After(x.expires) {
		delete(s.m, id)
		return session{}, false
	}
	return *x, true
}

// takeFlash returns and clears session id's flash.
func (s *sessions) takeFlash(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.m[id]
	if !ok {
		return "", false
	}
	f, good := x.flash, x.flashOK
	x.flash = ""
	return f, good
}

func (s *sessions) setFlash(id, text string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, found := s.m[id]; found {
		x.flash, x.flashOK = text, ok
	}
}

func (s *sessions) delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// signinLimiter limits wrong sign-ins: 5 per minute per client (burst 5),
// and 30 per minute overall; it tracks at most 1,024 clients. It never
// holds back the right token: the token is checked first, and only a wrong
// one is counted (a lockout would let anyone behind the operator's proxy,
// or anyone at all when the proxy's X-Forwarded-For is not trusted, lock
// the operator out). What makes guessing hopeless is the token's entropy
// (config.ValidateConsoleToken: 2^128 guesses); the limit bounds what
// wrong attempts cost: a WARN line each while under it (so at most 30 a
// minute), a bare 429 (logged at DEBUG) over it.
type signinLimiter struct {
	mu     sync.Mutex
	all    *rate.Limiter
	byAddr map[string]*rate.Limiter
}

func newSigninLimiter() *signinLimiter {
	return &signinLimiter{all: rate.NewLimiter(rate.Every(2*time.Second), 30), byAddr: map[string]*rate.Limiter{}}
}

// wrong counts a wrong token from client and reports whether client (or
// every client together) is over the limit.
func (l *signinLimiter) wrong(client string) (limited bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.byAddr[client]
	if !ok {
		if len(l.byAddr) >= 1024 {
			clear(l.byAddr)
		}
		lim = rate.NewLimiter(rate.Every(12*time.Second), 5)
		l.byAddr[client] = lim
	}
	return !lim.Allow() || !l.all.Allow()
}

// clientAddr is the address r's sign-in is counted and logged under: its
// peer's address; or, when the peer is a trusted proxy (trusted), the
// client X-Forwarded-For names: read from its right end (the entry the
// nearest proxy appended), the first address that is not a trusted proxy
// itself, or the leftmost when all are. An entry that is not an address
// (with or without a port) stops the walk at the last address read, a
// trusted proxy. From an untrusted peer the header is ignored, so a client
// cannot choose the address it is counted under. A RemoteAddr that does
// not parse is used as it is.
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := peer.Addr().Unmap().WithZone("")
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	if !isTrusted(addr) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		a, err := netip.ParseAddr(h)
		if err != nil {
			ap, perr := netip.ParseAddrPort(h)
			if perr != nil {
				break
			}
			a = ap.Addr()
		}
		addr = a.Unmap().WithZone("")
		if !isTrusted(addr) {
			break
		}
	}
	return addr.String()
}

// tokenOK compares a token given at sign-in with the configured one in
// constant time (both hashed first, so the lengths leak nothing either).
func tokenOK(given, want string) bool {
	g, w := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// secure sets the security headers of every answer.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// sessionOf returns r's session id and session, ok false when r carries
// none that is valid.
func (c *Console) sessionOf(r *http.Request) (string, session, bool) {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return "", session{}, false
	}
	s, ok := c.sessions.get(ck.Value)
	return ck.Value, s, ok
}

// signedIn wraps a page: without a valid session a GET is sent to the
// sign-in page and anything else refused (401); with one, h runs with the
// request's context bounded by Config.StoreTimeout.
func (c *Console) signedIn(h func(w http.ResponseWriter, r *http.Request, sid string, s session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sid, s, ok := c.sessionOf(r)
		if !ok {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "not signed in", http.StatusUnauthorized)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), c.cfg.StoreTimeout)
		defer cancel()
		h(w, r.WithContext(ctx), sid, s)
	}
}

// maxForm bounds a changing POST's form (bytes): a broadcast's text is the
// largest field.
const maxForm = 64 << 10

// change wraps a POST that changes state: signed in, and carrying the
// session's CSRF token in the form field csrf (compared in constant time);
// a forged request without it is refused (403) and changes nothing.
func (c *Console) change(h func(w http.ResponseWriter, r *http.Request, sid string)) http.HandlerFunc {
	return c.signedIn(func(w http.ResponseWriter, r *http.Request, sid string, s session) {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, fmt.Sprintf("form too large: a form is at most %d KiB, a broadcast's text with it "+
					"(about 60,000 bytes: send a longer text as several broadcasts); nothing was changed", maxForm>>10), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "bad form: "+err.Error()+"; nothing was changed", http.StatusBadRequest)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
			c.log.Warn("console: a change without its CSRF token refused", "path", r.URL.Path)
			http.Error(w, "forbidden: missing or wrong CSRF token", http.StatusForbidden)
			return
		}
		h(w, r, sid)
	})
}

// setCookie sets the session cookie (Secure over TLS, or behind a proxy
// that says the client used https).
func setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"})
}
