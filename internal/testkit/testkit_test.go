package testkit_test

import (
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
)

// parked waits on ch: a goroutine of the repository's code that a run
// which would not stop might leave behind.
func parked(ch chan struct{}) { <-ch }

// TestWaitingNamesWhereTheRepositorysGoroutinesWait: Waiting counts each
// goroutine running the repository's code by its state and its innermost
// frame in the repository (most frequent first), and leaves out the
// goroutines of other code and testkit's own.
func TestWaitingNamesWhereTheRepositorysGoroutinesWait(t *testing.T) {
	tests := []struct {
		name string
		dump string
		want string
	}{
		{name: "counted by state and frame, most first", dump: "goroutine 1 [select]:\n" +
			"runtime.selectgo(...)\n\t/go/src/runtime/select.go:1\n" +
			"github.com/codemojex/codemojex/worker.(*acker).run(0x1)\n\t/src/worker/acks.go:1 +0x1\n\n" +
			"goroutine 2 [chan receive, 2 minutes]:\n" +
			"github.com/codemojex/codemojex/consumer.Settler.retry(...)\n\t/src/consumer/settle.go:1\n\n" +
			"goroutine 3 [chan receive, 2 minutes]:\n" +
			"github.com/codemojex/codemojex/consumer.Settler.retry(...)\n\t/src/consumer/settle.go:1\n",
			want: "   2 × chan receive, 2 minutes: github.com/codemojex/codemojex/consumer.Settler.retry(...)\n" +
				"   1 × select: github.com/codemojex/codemojex/worker.(*acker).run(0x1)\n"},
		{name: "other code and testkit's own left out", dump: "goroutine 1 [IO wait]:\n" +
			"net.(*netFD).Read(...)\n\t/go/src/net/fd.go:1\n\n" +
			"goroutine 2 [select]:\n" +
			"github.com/codemojex/codemojex/internal/testkit.RunInBackground.func1()\n\t/src/testkit.go:1\n",
			want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, testkit.Waiting([]byte(tc.dump)))
		})
	}
}

// TestWaitingFindsAParkedGoroutineInARealDump: in runtime.Stack's own
// output, a goroutine parked on a channel is named with its state and
// function.
func TestWaitingFindsAParkedGoroutineInARealDump(t *testing.T) {
	ch := make(chan struct{})
	defer close(ch)
	go parked(ch)
	b := make([]byte, 1<<20)
	require.Eventually(t, func() bool {
		return regexp.MustCompile(`(?m)^ +1 × chan receive: .*/internal/testkit_test\.parked\(`).
			MatchString(testkit.Waiting(b[:runtime.Stack(b, true)]))
	}, 5*time.Second, 10*time.Millisecond)
}
