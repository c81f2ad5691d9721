package notifier

import (
	"errors"
	"strconv"
)

var (
	// ErrInvalid is wrapped by every bad-input error (chat id 0, unknown
	// class, bad parse mode, invalid UTF-8, bad broadcast id); nothing was
	// written.
	ErrInvalid = errors.New("notifier: invalid argument")
	// ErrEmptyText: the text is empty or only white space (Telegram answers
	// such a sendMessage 400 "message text is empty"). Wraps ErrInvalid.
	ErrEmptyText = errors.New("notifier: empty text")
	// ErrInactive is matched (errors.Is) by *InactiveError.
	ErrInactive = errors.New("notifier: chat is inactive")
	// ErrUnknownBroadcast: no progress is stored under the id (never
	// created, or expired after its TTL).
	ErrUnknownBroadcast = errors.New("notifier: unknown broadcast")
	// ErrPaidInFlight: ContinueFree found paid copies still in flight
	// (being sent when the paid part halted); nothing was moved, try again
	// once they settle (seconds).
	ErrPaidInFlight = errors.New("notifier: paid copies still in flight")
)

// InactiveError is returned by Notify for a notification to a chat that
// blocked the bot (or deactivated, or kicked it): nothing was enqueued.
// chatstate.Store.MarkActive clears the mark.
type InactiveError struct {
	// ChatID is the chat the message would have gone to (after aliasing).
	ChatID int64
}

func (e *InactiveError) Error() string {
	return "notifier: chat " + strconv.FormatInt(e.ChatID, 10) + " is inactive (it blocked the bot)"
}

// Is makes errors.Is(err, ErrInactive) true.
func (e *InactiveError) Is(target error) bool { return target == ErrInactive }

type invalidErr struct {
	msg string
	err error
}

func (e *invalidErr) Error() string { return e.msg }
func (e *invalidErr) Unwrap() []error {
	if e.err != nil {
		return []error{ErrInvalid, e.err}
	}
	return []error{ErrInvalid}
}

func invalid(msg string) error { return &invalidErr{msg: "notifier: " + msg} }
