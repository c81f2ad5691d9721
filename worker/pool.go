package worker

import (
	"sync"
	"sync/atomic"
)

// senderPool keeps the goroutines that send batches from one batch to the
// next, instead of one goroutine per batch (claimLoop.Handle): a fresh
// goroutine starts on the runtime's smallest stack and grows it to a send's
// depth (growStack), and its exit frees it, once per batch, so once per copy
// of a broadcast (one copy per lane): goroutine starts and exits and stack
// growths were about 7% of the worker process's CPU in a paid broadcast at
// 1,000/s (bench -only lazy, runtime.newproc, goexit0, newstack). A batch
// handed over goes to an idle goroutine when one waits, else to a new one;
// a goroutine whose batch is done waits for the next unless most()
// goroutines wait already (the senders the budget needs now), then it
// ends. Safe for concurrent use; close once, after the last run.
type senderPool struct {
	work chan func()
	done chan struct{}
	wg   sync.WaitGroup
	idle atomic.Int64
	most func() int
}

func newSenderPool(most func() int) *senderPool {
	return &senderPool{work: make(chan func()), done: make(chan struct{}), most: most}
}

// run runs f on an idle goroutine of the pool, or on a new one.
func (p *senderPool) run(f func()) {
	select {
	case p.work <- f:
	default:
		p.wg.Go(func() { p.loop(f) })
	}
}

// loop runs f, then the batches handed to it while it is idle, until more
// than most() goroutines would wait or the pool is closed.
func (p *senderPool) loop(f func()) {
	for {
		f()
		if p.idle.Add(1) > int64(p.most()) {
			p.idle.Add(-1)
			return
		}
		select {
		case f = <-p.work:
			p.idle.Add(-1)
		case <-p.done:
			p.idle.Add(-1)
			return
		}
	}
}

// close ends the idle goroutines and waits for those still running a batch
// to finish it and end.
func (p *senderPool) close() {
	close(p.done)
	p.wg.Wait()
}
