package worker

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// goroutineID is the calling goroutine's id (the first line of its stack).
func goroutineID() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	return string(bytes.Fields(b)[1])
}

// A batch handed to the pool runs on a goroutine that finished an earlier
// batch and waits, not a new one; at most most() goroutines wait; close
// waits for a batch still running and leaves no goroutine behind.
func TestSendersGoroutinesAreKeptBetweenBatchesUpToTheSendersNeeded(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := newSenderPool(func() int { return 2 })
	ran := make(chan string, 16)
	p.run(func() { ran <- goroutineID() })
	first := <-ran
	require.Eventually(t, func() bool { return p.idle.Load() == 1 }, 5*time.Second, time.Millisecond)
	p.run(func() { ran <- goroutineID() })
	require.Equal(t, first, <-ran, "the idle goroutine took the next batch")

	// Four at once: two more goroutines start; two wait once all are done.
	require.Eventually(t, func() bool { return p.idle.Load() == 1 }, 5*time.Second, time.Millisecond)
	var started, release sync.WaitGroup
	release.Add(1)
	for range 4 {
		started.Add(1)
		p.run(func() { started.Done(); release.Wait() })
	}
	started.Wait()
	release.Done()
	require.Eventually(t, func() bool { return p.idle.Load() == 2 }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, int64(2), p.idle.Load(), "no more than most() wait")

	// close waits for a batch still running.
	done := false
	blocked := make(chan struct{})
	p.run(func() { close(blocked); time.Sleep(100 * time.Millisecond); done = true })
	<-blocked
	p.close()
	require.True(t, done, "close returned after the batch in progress")
}
