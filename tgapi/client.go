package tgapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/codemojex/codemojex/redact"
)

// DefaultServerURL is Telegram's Bot API server.
const DefaultServerURL = "https://api.telegram.org"

// Config configures a Client. Zero fields take the defaults in brackets.
type Config struct {
	// Token is the bot token (required; "<bot id>:<secret>"). It goes into
	// every request URL and never into an error (see redact).
	Token string
	// ServerURL is the Bot API server [DefaultServerURL]; tests give the
	// emulator's (internal/tgemu) URL, a local Bot API server its own.
	ServerURL string
	// HTTPClient sends the requests through net/http (HTTP/2 where the
	// server offers it, a custom RoundTripper) [nil: the client's own
	// keep-alive HTTP/1.1 connections (see conns), or, when the
	// environment names a proxy for ServerURL (HTTPS_PROXY, HTTP_PROXY,
	// NO_PROXY), a client of its own on a clone of http.DefaultTransport
	// keeping MaxIdleConns idle].
	HTTPClient *http.Client
	// MaxIdleConns is the most idle connections kept for reuse when
	// HTTPClient is nil [16]; a worker gives its senders + 2, so each
	// sender finds one.
	MaxIdleConns int
	// Timeout bounds each call but getUpdates (whose bound is its
	// long-poll timeout + PollMargin) [0: only the caller's context and
	// HTTPClient's Timeout bound a call].
	Timeout time.Duration
}

// PollMargin is how much longer than its long-poll timeout a getUpdates
// call may take before it is cut: the answer of a poll that found nothing
// comes at the timeout, plus the round trip.
const PollMargin = 15 * time.Second

// maxAnswer bounds the answer read (getUpdates' 100 updates are far less).
const maxAnswer = 64 << 20

// Client calls the Bot API: one request path (call) and one decoder
// (decode) for every method, each failure one *Error. It sends JSON bodies
// (application/json, which the Bot API accepts for every method without a
// file upload). Safe for concurrent use.
type Client struct {
	hc      *http.Client // nil when direct sends
	direct  *conns       // the client's own connections (nil: hc sends)
	red     *redact.Redactor
	prefix  string            // server URL + "/bot" + token + "/"
	urls    map[string]string // prefix + method, for the methods of this package (read only)
	timeout time.Duration
	answers answerPool // answer buffers, reused once an answer is decoded
}

// methods are the Bot API methods of this package (their URLs are built
// once in New).
var methods = []string{
	"getMe", "getUpdates", "setWebhook", "deleteWebhook", "getWebhookInfo", "sendMessage",
	"editMessageText", "answerCallbackQuery", "setMyCommands", "setMyDescription", "setMyShortDescription",
	"getChatMember", "getMyStarBalance",
}

// New returns a Client for cfg. Errors: an empty token. A ServerURL that
// does not parse is not an error here: every call then fails with a
// redacted *Error (Status 0).
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("tgapi: empty bot token")
	}
	if cfg.ServerURL == "" {
		cfg.ServerURL = DefaultServerURL
	}
	c := &Client{
		hc: cfg.HTTPClient, red: redact.New(cfg.Token), timeout: cfg.Timeout,
		prefix: strings.TrimRight(cfg.ServerURL, "/") + "/bot" + cfg.Token + "/",
		urls:   make(map[string]string, len(methods)),
	}
	for _, m := range methods {
		c.urls[m] = c.prefix + m
	}
	if c.hc == nil {
		c.direct = directConns(cfg.ServerURL, cfg.MaxIdleConns)
	}
	if c.hc == nil && c.direct == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = max(cfg.MaxIdleConns, defaultMaxIdleConns)
		tr.MaxIdleConnsPerHost = tr.MaxIdleConns
		c.hc = &http.Client{Transport: tr}
	}
	return c, nil
}

// defaultMaxIdleConns is Config.MaxIdleConns' default.
const defaultMaxIdleConns = 16

// directConns is the pool of the client's own connections to server, or
// nil where net/http must send: the environment names a proxy for it, or
// it is not an http or https URL with a host (every call then fails with
// net/http's redacted error).
func directConns(server string, maxIdle int) *conns {
	u, err := url.Parse(server)
	if err != nil {
		return nil
	}
	if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || proxy != nil {
		return nil
	}
	if maxIdle <= 0 {
		maxIdle = defaultMaxIdleConns
	}
	p, err := newConns(server, maxIdle)
	if err != nil {
		return nil
	}
	return p
}

// CloseIdleConnections closes the connections kept idle for reuse (a
// later call dials again).
func (c *Client) CloseIdleConnections() {
	if c.direct != nil {
		c.direct.closeIdle()
	}
	if c.hc != nil {
		c.hc.CloseIdleConnections()
	}
}

// Redactor returns the redactor of the client's token.
func (c *Client) Redactor() *redact.Redactor { return c.red }

// jsonType is the Content-Type of every request with parameters.
var jsonType = []string{"application/json"}

// call is the one request path: it POSTs params (nil, or a nil pointer:
// none) as JSON to method, bounded by timeout (0: ctx alone), and decodes
// the answer's result into result (nil: ignored). It returns the HTTP status of the
// answer (0 when none came) and nil or an *Error.
func (c *Client) call(ctx context.Context, method string, params, result any, timeout time.Duration) (int, error) {
	if timeout > 0 && c.direct == nil { // the client's own connections take it as a deadline (conns.do)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var body []byte
	if params != nil {
		b, err := encodeParams(params)
		if err != nil {
			return 0, &Error{Method: method, Err: c.red.Error(fmt.Errorf("encode parameters: %w", err))}
		}
		if string(b) != "null" { // a nil *Params: no parameters
			body = b
		}
	}
	u, ok := c.urls[method]
	if !ok {
		u = c.prefix + method
	}
	if c.direct != nil {
		return c.callDirect(ctx, method, u, body, result, timeout)
	}
	return c.callHTTP(ctx, method, u, body, result)
}

// callHTTP POSTs body (nil: none) to u through net/http (Client.hc) and
// decodes the answer as call does.
func (c *Client) callHTTP(ctx context.Context, method, u string, body []byte, result any) (int, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	var written atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { written.Store(i.Err == nil) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, rd)
	if err != nil {
		return 0, c.transportError(method, err, false)
	}
	if body != nil {
		req.Header["Content-Type"] = jsonType
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, c.transportError(method, err, written.Load())
	}
	defer func() { _ = resp.Body.Close() }()
	buf, raw, err := c.readAnswer(resp)
	defer c.answers.Put(buf)
	if err != nil {
		// The answer began (a status came) but its body was cut.
		return resp.StatusCode, &Error{Method: method, Status: resp.StatusCode, Err: c.red.Error(fmt.Errorf("read answer: %w", err))}
	}
	return resp.StatusCode, c.decode(method, resp.StatusCode, raw, result)
}

// callDirect POSTs body (nil: none) to u on the client's own connections
// (Client.direct), bounded by ctx and timeout (0: ctx alone), and decodes
// the answer as call does. A transport error is a *url.Error (Op "Post",
// its URL redacted), as net/http's.
func (c *Client) callDirect(ctx context.Context, method, u string, body []byte, result any, timeout time.Duration) (int, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(u)
	req.Header.SetMethod(http.MethodPost)
	req.Header.SetUserAgent(userAgent)
	if body != nil {
		req.Header.SetContentTypeBytes(jsonTypeBytes)
		req.SetBodyRaw(body)
	}
	written, err := c.direct.do(ctx, timeout, req, resp)
	if err != nil {
		return 0, c.transportError(method, &url.Error{Op: "Post", URL: u, Err: err}, written)
	}
	status := resp.StatusCode()
	return status, c.decode(method, status, resp.Body(), result)
}

// userAgent is the User-Agent of the client's own connections.
const userAgent = "codemojex-tgapi"

// jsonTypeBytes is jsonType's value.
var jsonTypeBytes = []byte("application/json")

// answerBuf is the size of the buffers a Client reuses for answers
// (Client.answers): an accepted send's answer echoes the message, about its
// text's UTF-8 size plus 300 bytes; a larger answer is read into a buffer
// of its own.
const answerBuf = 8 << 10

// answerPool keeps answer buffers (*[]byte of answerBuf bytes) for reuse.
type answerPool struct{ p sync.Pool }

// get returns a buffer of answerBuf bytes.
func (a *answerPool) get() *[]byte {
	if b, ok := a.p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, answerBuf)
	return &b
}

// Put gives back a buffer from get (nil: none).
func (a *answerPool) Put(b *[]byte) {
	if b != nil {
		a.p.Put(b)
	}
}

// readAnswer reads resp's body (at most maxAnswer bytes): when its length
// is announced and at most answerBuf, into a reused buffer (buf, which the
// caller puts back once it decoded raw: decode copies what it keeps),
// otherwise into one allocation of its length, or as it comes (buf nil).
func (c *Client) readAnswer(resp *http.Response) (buf *[]byte, raw []byte, err error) {
	n := resp.ContentLength
	switch {
	case n < 0 || n > maxAnswer:
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		return nil, raw, err
	case n <= answerBuf:
		buf = c.answers.get()
		raw = (*buf)[:n]
	default:
		raw = make([]byte, n)
	}
	_, err = io.ReadFull(resp.Body, raw)
	return buf, raw, err
}

// answer is a Bot API answer (https://core.telegram.org/bots/api#making-requests).
type answer struct {
	OK          bool        `json:"ok"`
	Result      resultInto  `json:"result"`
	ErrorCode   int         `json:"error_code"`
	Description string      `json:"description"`
	Parameters  answerParms `json:"parameters"`
}

// answerParms are an answer's parameters
// (https://core.telegram.org/bots/api#responseparameters).
type answerParms struct {
	RetryAfter      int   `json:"retry_after"`
	MigrateToChatID int64 `json:"migrate_to_chat_id"`
}

// resultInto decodes an answer's result straight into dest (nil: skipped),
// without a copy of its bytes; a result that does not fit dest is kept in
// err, so decode tells it from a body that is not JSON.
type resultInto struct {
	dest any
	err  error
}

func (r *resultInto) UnmarshalJSON(b []byte) error {
	if r.dest != nil {
		r.err = json.Unmarshal(b, r.dest)
	}
	return nil
}

// decode is the one decoder: it turns the answer (HTTP status, body) of
// method into result (nil: ignored) or an *Error: an ok=false answer with
// its error_code (the HTTP status when error_code is missing),
// description and parameters; a body that is not Bot API JSON, or a
// result that does not fit result, with Err set.
func (c *Client) decode(method string, status int, body []byte, result any) error {
	if m, ok := result.(*messageID); ok && status == http.StatusOK {
		if id, ok := leadingMessageID(body); ok {
			m.ID = id
			return nil
		}
	}
	a := answer{Result: resultInto{dest: result}}
	if err := json.Unmarshal(body, &a); err != nil {
		return &Error{Method: method, Status: status, Err: c.red.Error(err)}
	}
	if !a.OK {
		code := a.ErrorCode
		if code == 0 {
			code = status
		}
		return &Error{
			Method: method, Status: status, Code: code, Description: c.red.String(a.Description),
			RetryAfter: a.Parameters.RetryAfter, MigrateToChatID: a.Parameters.MigrateToChatID,
		}
	}
	if a.Result.err != nil {
		return &Error{Method: method, Status: status, Err: c.red.Error(fmt.Errorf("unexpected result: %w", a.Result.err))}
	}
	return nil
}

// sentPrefix begins an answer to a send or an edit as Telegram and the
// emulator write it: "ok" first, then the message with its message_id
// first.
const sentPrefix = `{"ok":true,"result":{"message_id":`

// leadingMessageID reads the message_id of an accepted send's answer body
// from its prefix alone (sentPrefix, 1..18 digits, then ',' or '}'; the
// body a complete object, ending in '}'), without decoding the message: the
// send path needs nothing else, and the full decode read the whole text
// about four times (encoding/json's validity scan, then the envelope's,
// then the result's two). ok is false for any other shape, which the full
// decode then reads.
func leadingMessageID(body []byte) (id int, ok bool) {
	if len(body) < len(sentPrefix)+2 || string(body[:len(sentPrefix)]) != sentPrefix || body[len(body)-1] != '}' {
		return 0, false
	}
	rest := body[len(sentPrefix):]
	n := 0
	for n < len(rest) && n < 19 && rest[n] >= '0' && rest[n] <= '9' {
		id = id*10 + int(rest[n]-'0')
		n++
	}
	if n == 0 || n > 18 || n == len(rest) || (rest[n] != ',' && rest[n] != '}') {
		return 0, false
	}
	return id, true
}

// transportError is the *Error of a call that got no answer: err's
// *url.Error has its URL redacted (the URL holds the token), and its text
// is redacted too (errors.Is and errors.As still see the causes).
func (c *Client) transportError(method string, err error, written bool) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = c.red.String(ue.URL)
	}
	return &Error{Method: method, Written: written, Err: c.red.Error(err)}
}
