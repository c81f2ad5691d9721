package lanes_test

import (
	"context"
	"fmt"
	"os"
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
		if _, err := store.Enqueue(ctx, "notify", msg.chat, ids.New(), []byte(msg.text)); err != nil {
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
