package lanes

import "errors"

var (
	// ErrInvalid is wrapped by every bad-input error; nothing was written.
	ErrInvalid = errors.New("lanes: invalid argument")
	// ErrStaleLease is returned by Ack, Extend, Release, Nack and Dead when the
	// lease token no longer holds the job (the lease expired and the job was
	// reclaimed, and maybe claimed again). Nothing was changed.
	ErrStaleLease = errors.New("lanes: stale lease")
	// ErrNoJob is returned when the job does not exist (already acked, or never
	// enqueued). Nothing was changed.
	ErrNoJob = errors.New("lanes: no such job")
	// ErrLaneFull is returned (wrapped) by Enqueue when an item's lane held
	// its queue's QueueConfig.MaxDepth pending jobs: that item was not
	// enqueued (EnqueueResult.Full counts them); items on other lanes were.
	ErrLaneFull = errors.New("lanes: lane full")
	// ErrCursorMoved is returned (wrapped) by Enqueue with AtCursor when the
	// cursor did not hold the step's expected value: another producer (or
	// an earlier run) took the step; nothing was written
	// (EnqueueResult.Moved counts the items).
	ErrCursorMoved = errors.New("lanes: cursor moved")
)
