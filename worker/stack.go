package worker

// A sender's goroutine (senderPool: started for a batch when no idle one
// waits) starts with the runtime's small starting stack and, through a send
// (the payload's JSON, net/http's client, the ack's valkey-go call), grows
// it several times, each growth copying the stack frame by frame at the
// depth it is reached: about 8% of the worker process's CPU in a paid
// broadcast at 1,000/s (bench -only lazy, runtime.newstack) when each batch
// had a goroutine of its own. growStack grows it once, at the batch's
// start, where the copy has a few frames to move (the same trick as
// CockroachDB's util/growstack); a goroutine kept by the pool grows it
// again there after a garbage collection shrank it while it waited.

// stackReserve is the frame growStack takes: a stack of 4 KiB or less grows
// to 16 KiB in one step (the runtime doubles it until the frame, the used
// part and its guard fit), which holds a send's deepest path.
const stackReserve = 12 << 10

// growStack grows the calling goroutine's stack to hold stackReserve bytes
// more than it uses now (at most one growth) and returns 0. i is any
// number: the index keeps the compiler from dropping the array.
//
//go:noinline
func growStack(i int) byte {
	var b [stackReserve]byte
	return b[i&(stackReserve-1)]
}
