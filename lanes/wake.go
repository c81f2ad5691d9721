package lanes

import (
	"context"
	"fmt"
	"time"

	"github.com/valkey-io/valkey-go"
)

// Waiter lets an idle claimer block without polling: the store's scripts
// publish on the store's wake channel whenever a lane joins the ring (an
// enqueue, a settled job freeing headroom, a resumed lane or pause), a
// park or retry becomes a queue's earliest (so claimers learn the new due
// time), or a send settles after a claim found a budget spent by sends all
// in flight (counted from its arrival, the settle may refill it at once),
// and a Waiter turns those messages into wake-ups. Wake-ups by time
// alone (a lease expiring, a parked lane or retry falling due, the global
// budget refilling) come from the RetryIn a claim returns. After a lost
// connection the Waiter resubscribes and wakes its owner once, in case a
// message was missed.
type Waiter struct {
	sig  chan struct{}
	done chan struct{}
}

// NewWaiter subscribes to the store's wake channel on a dedicated connection
// and returns once the subscription is live (so no wake-up published after
// it returns is missed). The subscription ends when ctx is done. Errors: the
// server's, or ctx's when it ends first.
func (s *Store) NewWaiter(ctx context.Context) (*Waiter, error) {
	w := &Waiter{sig: make(chan struct{}, 1), done: make(chan struct{})}
	ready := make(chan error, 1)
	go w.loop(ctx, s.c, s.keys.wake(), ready)
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
		return w, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NewWaiterRetry is NewWaiter tried again while the subscription fails
// (Valkey restarting, failing over, or out of reach), after 100 ms, then
// twice as long each time up to 2 s, until it is live or ctx ends: a
// claimer that starts while Valkey is away waits for it rather than
// exiting. Each failure is passed to failed (nil: none) with the wait
// before the next try. Errors: ctx's, once it ends.
func (s *Store) NewWaiterRetry(ctx context.Context, failed func(err error, next time.Duration)) (*Waiter, error) {
	wait := 100 * time.Millisecond
	for {
		w, err := s.NewWaiter(ctx)
		if err == nil || ctx.Err() != nil {
			return w, err
		}
		if failed != nil {
			failed(err, wait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func (w *Waiter) notify() {
	select {
	case w.sig <- struct{}{}:
	default:
	}
}

func (w *Waiter) loop(ctx context.Context, c valkey.Client, channel string, ready chan<- error) {
	defer close(w.done)
	first := true
	for ctx.Err() == nil {
		// The subscribed connection is closed when done with (dc.Close),
		// never handed back to the client's pool (Dedicate's release):
		// valkey-go unsubscribes a connection it pools, and unsubscribes
		// answered BUSY (a script running) panic it ("protocol bug,
		// message handled out of order"), crashing the process.
		dc, _ := c.Dedicate()
		subscribed := make(chan struct{})
		errs := dc.SetPubSubHooks(valkey.PubSubHooks{
			OnMessage: func(valkey.PubSubMessage) { w.notify() },
			OnSubscription: func(s valkey.PubSubSubscription) {
				if s.Kind == "subscribe" {
					close(subscribed)
				}
			},
		})
		err := dc.Do(ctx, dc.B().Subscribe().Channel(channel).Build()).Error()
		if err == nil {
			select {
			case <-subscribed:
			case err = <-errs:
			case <-ctx.Done():
			}
		}
		if err == nil && ctx.Err() == nil {
			if first {
				ready <- nil
				first = false
			} else {
				w.notify() // a wake-up may have been missed while reconnecting
			}
			select {
			case <-ctx.Done():
			case <-errs:
			}
		} else if first && ctx.Err() == nil {
			ready <- fmt.Errorf("lanes: subscribe %s: %w", channel, err)
			dc.Close()
			return
		}
		dc.Close()
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Wait blocks until a wake-up, until d has passed (d < 0: no time limit), or
// until ctx ends. It reports whether a wake-up came.
func (w *Waiter) Wait(ctx context.Context, d time.Duration) bool {
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-w.sig:
		return true
	case <-timer:
		return false
	case <-ctx.Done():
		return false
	}
}

// Done is closed once the Waiter's subscription has ended (its ctx is done).
func (w *Waiter) Done() <-chan struct{} { return w.done }
