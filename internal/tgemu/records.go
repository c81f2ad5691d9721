package tgemu

import (
	"maps"
	"strings"
	"time"
)

// Request is one HTTP request the emulator received, as recorded.
type Request struct {
	// Time is the emulator clock when the request was processed (its
	// arrival, or the end of an injected delay; a sendMessage or
	// editMessageText: when the flood limiter took it, so the accepted
	// ones are in the order the limiter counted them).
	Time time.Time
	// Method is the method name as it appeared in the URL ("" when the
	// path was not /bot<token>/<method>).
	Method string
	// ChatID is the chat_id parameter when it is an integer, else 0.
	ChatID int64
	// Params are the request parameters (JSON text for non-string values).
	Params map[string]string
	// HTTPStatus is the status answered; 0 when the connection was dropped
	// or nothing was answered (Canceled).
	HTTPStatus int
	// ErrorCode and Description are those of an ok=false reply (for a
	// FaultHTTPError: the status and its text).
	ErrorCode   int
	Description string
	// RetryAfter is parameters.retry_after of a 429, seconds.
	RetryAfter int
	// MessageID is the message sent or edited, when the method succeeded
	// (even when a Fault with AfterProcessing then replaced the reply).
	MessageID int
	// Fault is the injected fault applied, FaultNone if none.
	Fault FaultKind
	// Canceled: the client went away (or the emulator closed) before the
	// answer (long poll or injected delay).
	Canceled bool
}

// Accepted reports whether the method succeeded (ok=true was answered,
// or a message was sent under an AfterProcessing fault).
func (r Request) Accepted() bool {
	return r.MessageID != 0 || (r.HTTPStatus == 200 && r.ErrorCode == 0 && r.Fault == FaultNone)
}

func (r Request) clone() Request {
	r.Params = maps.Clone(r.Params)
	return r
}

// Requests lists every request received, in completion order. Long polls
// are recorded when they complete.
func (e *Emulator) Requests() []Request {
	return e.requestsFor("")
}

// SendRequests lists the sendMessage requests, accepted and rejected, in
// completion order.
func (e *Emulator) SendRequests() []Request {
	return e.requestsFor("sendmessage")
}

func (e *Emulator) requestsFor(method string) []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Request
	for _, r := range e.requests {
		if method == "" || strings.ToLower(r.Method) == method {
			out = append(out, r.clone())
		}
	}
	return out
}

// Stats are totals over the emulator's lifetime.
type Stats struct {
	Requests int // HTTP requests received
	// SendRequests counts sendMessage requests; Sent those accepted
	// (messages delivered), Rejected those answered with an error.
	SendRequests, Sent, Rejected int
	Edits                        int // accepted editMessageText
	// TooManyRequests counts the 429s answered by the flood limiter (not
	// injected ones), total and by chat id.
	TooManyRequests       int
	TooManyRequestsByChat map[int64]int
	// MaxPerSecond is the highest number of sends accepted (sendMessage
	// and editMessageText, both counted by the limiter) in any 1 s sliding
	// window, over all chats; MaxPerSecondByChat per chat (see MaxAccepted
	// for other windows).
	MaxPerSecond       int
	MaxPerSecondByChat map[int64]int
	// Faults counts requests an injected fault applied to.
	Faults int
}

// Stats computes the current totals.
func (e *Emulator) Stats() Stats {
	e.mu.Lock()
	st := Stats{Requests: len(e.requests), TooManyRequestsByChat: map[int64]int{}, MaxPerSecondByChat: map[int64]int{}}
	for _, r := range e.requests {
		if r.Fault != FaultNone {
			st.Faults++
		}
		if strings.ToLower(r.Method) == "sendmessage" {
			st.SendRequests++
			if !r.Accepted() {
				st.Rejected++
			}
		}
	}
	var all []time.Time
	for id, cs := range e.chats {
		times := cs.sentTimes()
		all = append(all, times...)
		if len(times) > 0 {
			st.MaxPerSecondByChat[id] = maxInWindow(times, time.Second)
		}
		for _, m := range cs.msgs {
			if m.fromBot {
				st.Sent++
			}
			st.Edits += len(m.edits)
		}
		if cs.tooMany > 0 {
			st.TooManyRequests += cs.tooMany
			st.TooManyRequestsByChat[id] = cs.tooMany
		}
	}
	e.mu.Unlock()
	st.MaxPerSecond = maxInWindow(all, time.Second)
	return st
}

// Throttle is one 429 the limiter answered (not an injected fault), with
// the sendMessage requests accepted in the second before it.
type Throttle struct {
	ChatID int64
	Time   time.Time
	// Global and Chat count the accepted sends in the second before, of
	// the whole bot and to ChatID.
	Global, Chat int
}

// Throttles lists the 429s of the limiter among reqs (e.g. SendRequests),
// so a 429 points at the limit the bot's pacing missed.
func Throttles(reqs []Request) []Throttle {
	var out []Throttle
	for _, r := range reqs {
		if r.ErrorCode != 429 || r.Fault != FaultNone {
			continue
		}
		th := Throttle{ChatID: r.ChatID, Time: r.Time}
		for _, a := range reqs {
			if a.Accepted() && a.Time.After(r.Time.Add(-time.Second)) && !a.Time.After(r.Time) {
				th.Global++
				if a.ChatID == r.ChatID {
					th.Chat++
				}
			}
		}
		out = append(out, th)
	}
	return out
}
