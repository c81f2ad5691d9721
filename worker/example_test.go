package worker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/worker"
)

// A notifier enqueues a reply on the chat's lane in Valkey (a text longer
// than MaxUnits UTF-16 units, here 16, is split at spaces into parts that
// keep their order); a worker claims the parts and sends them to the Bot
// API, here the in-repo emulator, which enforces Telegram's limits (1
// message/s per chat: the 4 parts take about 3 s).
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A throwaway Valkey (or Redis) and the Bot API emulator.
	srv, err := valkeyserver.Start("standalone", valkeyserver.Options{})
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
	emu, err := tgemu.New(tgemu.WithAllowAnyChat())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer emu.Close()

	// Producer: the lanes store with Telegram's limits, and the notifier.
	store, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag("example"))
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := notifier.New(c, store, notifier.Config{MaxUnits: 16})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := n.Notify(ctx, 42, notifier.Message{Text: "Welcome to Codemojex! Type /play to start."}); err != nil {
		fmt.Println(err)
		return
	}

	// Consumer: a worker sending to the emulator until ctx ends.
	w, err := worker.New(n, worker.Config{
		Token: emu.Token(), ServerURL: emu.URL(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()

	msgs, err := emu.WaitForMessages(ctx, 42, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range msgs {
		fmt.Printf("chat %d: %q\n", m.ChatID, m.Text)
	}
	stop()
	fmt.Println("worker stopped:", <-done)
	// Output:
	// chat 42: "Welcome to "
	// chat 42: "Codemojex! "
	// chat 42: "Type /play to "
	// chat 42: "start."
	// worker stopped: <nil>
}
