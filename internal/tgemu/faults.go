package tgemu

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FaultKind is a kind of injected failure.
type FaultKind int

const (
	// FaultNone: no fault (the zero value, in Request.Fault).
	FaultNone FaultKind = iota
	// FaultHTTPError answers Fault.Status with Fault.Body (see HTTPError,
	// BadGateway, InternalServerError).
	FaultHTTPError
	// FaultDrop hijacks the connection and closes it without a response.
	FaultDrop
	// FaultDelay waits Fault.Delay (real time) before processing the
	// request normally; a cancelled request is then not processed.
	FaultDelay
	// FaultTooManyRequests answers 429 "Too Many Requests: retry after N",
	// with parameters.retry_after N when Fault.RetryAfter > 0 and without
	// "parameters" otherwise.
	FaultTooManyRequests
	// FaultNonJSON answers 200 with a body that is not JSON.
	FaultNonJSON
	// FaultHold processes the request (a message is really sent), holds
	// the connection for Fault.Delay without answering, then closes it
	// without a response: the client cannot know the outcome (see
	// HeldResponse).
	FaultHold
)

func (k FaultKind) String() string {
	switch k {
	case FaultNone:
		return ""
	case FaultHTTPError:
		return "http_error"
	case FaultDrop:
		return "drop"
	case FaultDelay:
		return "delay"
	case FaultTooManyRequests:
		return "too_many_requests"
	case FaultNonJSON:
		return "non_json"
	case FaultHold:
		return "hold"
	default:
		return "FaultKind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Fault is a failure to inject on matching requests, with InjectFault. Build
// one with a constructor (BadGateway, InternalServerError, HTTPError,
// DropConnection, Delay, TooManyRequests, NonJSON) and narrow it with For,
// ForChat and Times:
//
//	emu.InjectFault(tgemu.BadGateway().For("sendMessage").Times(3))
//
// Faults are checked after the token, before the method runs, in injection
// order; the first matching fault with uses left applies. A token-less or
// unparsable request never matches.
type Fault struct {
	Kind FaultKind
	// Method limits the fault to one Bot API method (case-insensitive);
	// "" matches every method.
	Method string
	// ChatID limits the fault to requests whose chat_id parameter is this
	// id; 0 matches any request.
	ChatID int64
	// Count is how many matching requests the fault applies to: 0 means 1,
	// a negative Count means every matching request until ClearFaults.
	Count int
	// Status and Body are the HTTP status and raw body of FaultHTTPError
	// (ContentType defaults to application/json when Body starts with '{',
	// text/html otherwise).
	Status      int
	Body        string
	ContentType string
	// Delay is FaultDelay's wait.
	Delay time.Duration
	// RetryAfter is FaultTooManyRequests' parameters.retry_after, seconds;
	// 0 omits "parameters" (then go-telegram/bot reports RetryAfter 0).
	RetryAfter int
	// Expires, when not zero, ends the fault at that time on the
	// emulator's clock (WithClock): a matching request at or after it is
	// not faulted and the fault is disarmed, whatever uses it had left.
	// It makes a fault last a span of time, the way an outage does (see
	// Until).
	Expires time.Time
	// AfterProcessing runs the request normally first (a message is then
	// really sent and recorded) and only then fails the reply: the bot sees
	// an error, or a lost connection, for something that happened. With
	// FaultDelay the wait is between processing and answering.
	AfterProcessing bool
}

// badGatewayBody is what the nginx in front of api.telegram.org answers
// when the backend is unreachable.
const badGatewayBody = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
	"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n"

// BadGateway is a 502 with nginx's HTML error page (not JSON).
func BadGateway() Fault {
	return Fault{Kind: FaultHTTPError, Status: http.StatusBadGateway, Body: badGatewayBody, ContentType: "text/html"}
}

// InternalServerError is a 500 with a Bot API JSON body
// {"ok":false,"error_code":500,"description":"Internal Server Error"}.
func InternalServerError() Fault {
	return Fault{Kind: FaultHTTPError, Status: http.StatusInternalServerError,
		Body: `{"ok":false,"error_code":500,"description":"Internal Server Error"}`}
}

// HTTPError answers status with body as is.
func HTTPError(status int, body string) Fault {
	return Fault{Kind: FaultHTTPError, Status: status, Body: body}
}

// DropConnection closes the connection without answering.
func DropConnection() Fault { return Fault{Kind: FaultDrop} }

// Delay waits d before processing the request (honouring cancellation).
func Delay(d time.Duration) Fault { return Fault{Kind: FaultDelay, Delay: d} }

// TooManyRequests answers 429 with parameters.retry_after = retryAfter
// seconds, or with no "parameters" at all when retryAfter is 0.
func TooManyRequests(retryAfter int) Fault {
	return Fault{Kind: FaultTooManyRequests, RetryAfter: retryAfter}
}

// HeldResponse processes the request, then holds the connection for d
// (real time, cut short by Close) and closes it without answering: what a
// client sees when Telegram delivered a message but the response never
// came (e.g. a proxy or the network dropped it).
func HeldResponse(d time.Duration) Fault {
	return Fault{Kind: FaultHold, Delay: d, AfterProcessing: true}
}

// NonJSON answers 200 with a body that is not JSON.
func NonJSON() Fault {
	return Fault{Kind: FaultNonJSON, Status: http.StatusOK, Body: "<html><body>OK</body></html>", ContentType: "text/html"}
}

// For limits f to one Bot API method, e.g. "sendMessage".
func (f Fault) For(method string) Fault { f.Method = method; return f }

// ForChat limits f to requests for one chat_id.
func (f Fault) ForChat(chatID int64) Fault { f.ChatID = chatID; return f }

// Times sets how many matching requests f applies to (negative: all).
func (f Fault) Times(n int) Fault { f.Count = n; return f }

// Until makes f apply only to matching requests before t (the emulator's
// clock; see Fault.Expires): with Times(-1), every request until then.
func (f Fault) Until(t time.Time) Fault { f.Expires = t; return f }

// Processed makes f fail the reply only after the request was processed
// (see Fault.AfterProcessing).
func (f Fault) Processed() Fault { f.AfterProcessing = true; return f }

type faultRule struct {
	Fault
	left int // < 0: unlimited
}

// InjectFault arms f for the next f.Count matching requests.
func (e *Emulator) InjectFault(f Fault) {
	left := f.Count
	if left == 0 {
		left = 1
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = append(e.faults, &faultRule{Fault: f, left: left})
	e.broadcastLocked()
}

// ClearFaults disarms every injected fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
	e.broadcastLocked()
}

// PendingFaults is the number of armed faults with uses left (an unlimited
// fault counts 1; an expired one until the next request disarms it).
func (e *Emulator) PendingFaults() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.faults)
}

// takeFault consumes one use of the first fault matching method (lower
// case) and chatID, after disarming the faults that expired.
func (e *Emulator) takeFault(method string, chatID int64) *Fault {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	live := e.faults[:0]
	for _, r := range e.faults {
		if r.Expires.IsZero() || now.Before(r.Expires) {
			live = append(live, r)
		}
	}
	clear(e.faults[len(live):])
	e.faults = live
	for i, r := range e.faults {
		if r.Method != "" && strings.ToLower(r.Method) != method {
			continue
		}
		if r.ChatID != 0 && r.ChatID != chatID {
			continue
		}
		f := r.Fault
		e.broadcastLocked()
		if r.left > 0 {
			r.left--
			if r.left == 0 {
				e.faults = append(e.faults[:i:i], e.faults[i+1:]...)
			}
		}
		return &f
	}
	return nil
}

// applyFault answers (or drops) the request according to f, which is not a
// FaultDelay, and records it.
func (e *Emulator) applyFault(ctx context.Context, w http.ResponseWriter, rec *Request, f *Fault) {
	switch f.Kind {
	case FaultHold:
		e.record(ctx, rec)
		e.sleep(ctx, f.Delay)
		e.dropConn(ctx, w)
	case FaultDrop:
		e.record(ctx, rec) // before the client can notice the drop
		e.dropConn(ctx, w)
	case FaultTooManyRequests:
		var params *responseParameters
		if f.RetryAfter > 0 {
			params = &responseParameters{RetryAfter: f.RetryAfter}
		}
		e.finish(ctx, w, rec, errReply(http.StatusTooManyRequests,
			"Too Many Requests: retry after "+strconv.Itoa(f.RetryAfter), params))
	default: // FaultHTTPError, FaultNonJSON
		status := f.Status
		if status == 0 {
			status = http.StatusBadGateway
		}
		ct := f.ContentType
		if ct == "" {
			ct = "text/html"
			if strings.HasPrefix(strings.TrimSpace(f.Body), "{") {
				ct = "application/json"
			}
		}
		rep := reply{status: status, contentType: ct, body: []byte(f.Body)}
		if status >= 400 {
			rep.errorCode = status
			rep.description = http.StatusText(status)
		}
		e.finish(ctx, w, rec, rep)
	}
}

// dropConn closes the request's connection without a response.
func (e *Emulator) dropConn(ctx context.Context, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		// Not hijackable (HTTP/2): aborting the handler resets the
		// stream without a response.
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelDebug, "tgemu: hijack failed", slog.Any("err", err))
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
