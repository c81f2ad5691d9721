package lanes

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"

	"github.com/valkey-io/valkey-go"
)

// ErrUnavailable is matched (errors.Is) by every *UnavailableError: the
// store was briefly unable to answer, and a call made again once it
// answers can succeed.
var ErrUnavailable = errors.New("lanes: store briefly unavailable")

// UnavailableError is a store error that Unavailable classified as the
// store briefly unable to answer (Valkey busy, loading, failing over, out
// of memory, unreachable); Err is the error as it was returned.
type UnavailableError struct {
	// Cause names the condition: a Valkey error code (one of
	// UnavailableCodes, e.g. "BUSY", "OOM"), or "connection refused",
	// "connection reset", "connection closed", "timeout", "deadline" (the
	// call's context deadline passed), "no slot" (a cluster slot without a
	// node while the cluster reconfigures).
	Cause string
	Err   error
}

func (e *UnavailableError) Error() string { return e.Err.Error() }

func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(e, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// UnavailableCodes are the Valkey error codes (an error reply's first
// word) of a server that cannot serve the command now but will: a script
// running past busy-reply-threshold (BUSY), a restart loading its data
// (LOADING), a write to a replica after a failover (READONLY), a cluster
// moving or missing slots (TRYAGAIN, CLUSTERDOWN), a replica cut off from
// its primary (MASTERDOWN), a write over maxmemory under noeviction (OOM),
// too few replicas for min-replicas-to-write (NOREPLICAS), a blocked call
// ended by a role change (UNBLOCKED). BUSYGROUP, BUSYKEY, WRONGTYPE,
// NOSCRIPT, NOPERM and ERR are not among them: those are answers, not a
// passing state.
var UnavailableCodes = []string{"BUSY", "LOADING", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "OOM", "NOREPLICAS", "UNBLOCKED"}

// Unavailable classifies err, as a store call (valkey-go, directly or
// wrapped with %w anywhere in its chain) returned it: ok when it is the
// store briefly unable to answer, with the *UnavailableError saying why:
//
//   - a Valkey error reply whose code is one of UnavailableCodes (also
//     raised by a script's redis.call, which keeps the code);
//   - the connection refused, reset, aborted or broken (ECONNREFUSED,
//     ECONNRESET, ECONNABORTED, EPIPE), closed (io.EOF,
//     io.ErrUnexpectedEOF, net.ErrClosed), or timed out (a net.Error whose
//     Timeout is true);
//   - the call's context deadline passed (context.DeadlineExceeded; a
//     cancelled context, context.Canceled, is not: the caller gave up);
//   - valkey.ErrNoSlot (a cluster slot without a node).
//
// Anything else is not (nil, false): a Valkey error reply of another code
// (WRONGTYPE, NOSCRIPT, ERR ...) or valkey.Nil, lanes' own errors
// (ErrInvalid, ErrNoJob ...), a client closed by its owner
// (valkey.ErrClosing), any other error. An err already an
// *UnavailableError (wrapped or not) is returned as it is. An err joining
// several errors (errors.Join) whose first Valkey error reply has another
// code is not unavailable: that reply is an answer.
func Unavailable(err error) (*UnavailableError, bool) {
	if err == nil {
		return nil, false
	}
	var u *UnavailableError
	if errors.As(err, &u) {
		return u, true
	}
	if cause := unavailableCause(err); cause != "" {
		return &UnavailableError{Cause: cause, Err: err}, true
	}
	return nil, false
}

// unavailableCause is Unavailable's cause of err, "" when it is not.
func unavailableCause(err error) string {
	var verr *valkey.ValkeyError
	if errors.As(err, &verr) {
		if verr.IsNil() {
			return ""
		}
		code, _, _ := strings.Cut(verr.Error(), " ")
		if slices.Contains(UnavailableCodes, code) {
			return code
		}
		return ""
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return "connection closed"
	case errors.Is(err, valkey.ErrNoSlot):
		return "no slot"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return ""
}
