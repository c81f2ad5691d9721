package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// A claim loop: four jobs on two lanes (chat 42 sends three messages, chat
// 7 one), claimed one at a time and acked. The ring serves the lanes in
// turn, so chat 7's message does not wait behind chat 42's burst; each lane
// stays FIFO. When nothing is claimable, Claim says when to look again
// (RetryIn; -1: nothing is scheduled, wait on a Waiter).
func Example() {
	ctx := context.Background()
	// A throwaway server for the example; a program connects to its own
	// (valkey.NewClient with the server's address).
	srv, err := valkeyserver.Start(os.Getenv(valkeytest.ModeEnv), valkeyserver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	c, err := srv.NewClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	store, err := lanes.New(c, lanes.WithTag("example"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := lanes.NewMinter()
	for _, msg := range []struct{ chat, text string }{
		{"42", "a1"}, {"42", "a2"}, {"42", "a3"}, {"7", "b1"},
	} {
		if _, err := store.Enqueue(ctx, "notify", []lanes.Item{{Group: msg.chat, ID: ids.New(), Payload: []byte(msg.text)}}); err != nil {
			fmt.Println(err)
			return
		}
	}

	for {
		claimed, err := store.Claim(ctx, lanes.ClaimRequest{Queues: []string{"notify"}, Lease: 30 * time.Second, Max: 1})
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(claimed.Jobs) == 0 {
			fmt.Println("idle; retry in", claimed.RetryIn)
			return
		}
		for _, job := range claimed.Jobs {
			fmt.Printf("lane %s: %s\n", job.Group, job.Payload) // send it, then settle it
			if err := store.Ack(ctx, job.Lease); err != nil {
				fmt.Println(err)
				return
			}
		}
	}
	// Output:
	// lane 42: a1
	// lane 7: b1
	// lane 42: a2
	// lane 42: a3
	// idle; retry in -1ns
}

// One Enqueue puts one job or many on lanes; its options make it
// idempotent (Dedupe), coalescing (Coalesce) or stoppable (Unless), and one
// EnqueueResult says what became of the items.
func ExampleStore_Enqueue() {
	ctx := context.Background()
	srv, err := valkeyserver.Start(os.Getenv(valkeytest.ModeEnv), valkeyserver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	c, err := srv.NewClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	store, err := lanes.New(c, lanes.WithTag("example"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := lanes.NewMinter()
	item := func(chat, text string) lanes.Item {
		return lanes.Item{Group: chat, ID: ids.New(), Payload: []byte(text)}
	}
	show := func(what string, r lanes.EnqueueResult, err error) {
		if err != nil {
			fmt.Println(what, err)
			return
		}
		fmt.Printf("%s: added %d, duplicates %d, refused %d, coalesced %d, deduped %d, %d ids\n",
			what, r.Added, r.Duplicates, r.Refused, r.Coalesced, r.Deduped, len(r.IDs))
	}

	// One job, then a fan-out of three to three lanes; an id that exists
	// already is a duplicate, left as it was.
	one := item("42", "hello")
	r, err := store.Enqueue(ctx, "notify", []lanes.Item{one})
	show("one", r, err)
	r, err = store.Enqueue(ctx, "notify", []lanes.Item{item("1", "hi"), item("2", "hi"), one})
	show("many", r, err)

	// Dedupe: a handler that runs again after a crash enqueues its replies
	// once; the repeat gets the first call's ids. The key is the caller's,
	// under the store's hash tag.
	key := "{example}:once:update-7"
	first, err := store.Enqueue(ctx, "notify", []lanes.Item{item("42", "a"), item("42", "b")}, lanes.Dedupe(key, time.Hour))
	show("dedupe", first, err)
	again, err := store.Enqueue(ctx, "notify", []lanes.Item{item("42", "a"), item("42", "b")}, lanes.Dedupe(key, time.Hour))
	show("dedupe again", again, err)
	fmt.Println("same ids:", slices.Equal(first.IDs, again.IDs))

	// Coalesce: a newer frame of the board replaces the pending one in
	// place (one send, the latest payload).
	f1, err := store.Enqueue(ctx, "notify", []lanes.Item{item("7", "frame 1")}, lanes.Coalesce("board-7", time.Minute))
	show("coalesce", f1, err)
	f2, err := store.Enqueue(ctx, "notify", []lanes.Item{item("7", "frame 2")}, lanes.Coalesce("board-7", time.Minute))
	show("coalesce again", f2, err)
	fmt.Println("same job:", f1.IDs[0] == f2.IDs[0])

	// Unless: once the stop key exists, a fan-out enqueues nothing more.
	stop := "{example}:broadcast-9:stop"
	if err := c.Do(ctx, c.B().Set().Key(stop).Value("1").Build()).Error(); err != nil {
		fmt.Println(err)
		return
	}
	r, err = store.Enqueue(ctx, "notify", []lanes.Item{item("1", "news"), item("2", "news")}, lanes.Unless(stop))
	show("stopped", r, err)

	// A bad call writes nothing and wraps ErrInvalid.
	_, err = store.Enqueue(ctx, "notify", []lanes.Item{item("7", "x"), item("8", "y")}, lanes.Coalesce("board-7", time.Minute))
	fmt.Println("invalid:", errors.Is(err, lanes.ErrInvalid))

	st, err := store.Inspector().Stats(ctx, "notify", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pending:", st.Pending)
	// Output:
	// one: added 1, duplicates 0, refused 0, coalesced 0, deduped 0, 0 ids
	// many: added 2, duplicates 1, refused 0, coalesced 0, deduped 0, 0 ids
	// dedupe: added 2, duplicates 0, refused 0, coalesced 0, deduped 0, 2 ids
	// dedupe again: added 0, duplicates 0, refused 0, coalesced 0, deduped 2, 2 ids
	// same ids: true
	// coalesce: added 1, duplicates 0, refused 0, coalesced 0, deduped 0, 1 ids
	// coalesce again: added 0, duplicates 0, refused 0, coalesced 1, deduped 0, 1 ids
	// same job: true
	// stopped: added 0, duplicates 0, refused 2, coalesced 0, deduped 0, 0 ids
	// invalid: true
	// pending: 6
}
