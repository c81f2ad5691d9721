package intake_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// replicated is an inbox on a primary with one replica, waiting for it
// (ReplicaWait) up to timeout, with the Short calls it made.
type replicated struct {
	in      *intake.Inbox
	lease   *intake.Lease
	tag     string
	replica *valkeytest.Server
	rc      valkey.Client // a client of the replica

	mu     sync.Mutex
	shorts []int
}

func newReplicated(t *testing.T, timeout time.Duration) *replicated {
	t.Helper()
	primary, replica := valkeytest.StartReplicated(t)
	c := primary.Client(t)
	r := &replicated{tag: valkeytest.Namespace(t), replica: replica, rc: replica.Client(t)}
	store, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(r.tag))...)
	require.NoError(t, err)
	r.in = intake.NewInbox(c, store, r.tag).WithReplicaWait(intake.ReplicaWait{Replicas: 1, Timeout: timeout, Short: func(acked int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.shorts = append(r.shorts, acked)
	}})
	r.lease = intake.NewLease(c, r.tag, 3*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, r.lease.Acquire(context.Background(), func(bool) {}))
	return r
}

// freeze stops the replica (SIGSTOP) until the returned thaw (also run
// when the test ends).
func (r *replicated) freeze(t *testing.T) (thaw func()) {
	t.Helper()
	require.NoError(t, r.replica.Signal(syscall.SIGSTOP))
	var once sync.Once
	thaw = func() { once.Do(func() { require.NoError(t, r.replica.Signal(syscall.SIGCONT)) }) }
	t.Cleanup(thaw)
	return thaw
}

func (r *replicated) short() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.shorts...)
}

// record records updates 1 and 2 by getUpdates (Record) or by webhook
// (Accept).
func (r *replicated) record(ctx context.Context, webhook bool) error {
	ups := []intake.Update{update(1), update(2)}
	if webhook {
		_, err := r.in.Accept(ctx, ups)
		return err
	}
	_, _, err := r.in.Record(ctx, r.lease.Token(), ups)
	return err
}

// onReplica reports whether the replica holds update id's job.
func (r *replicated) onReplica(t *testing.T, id int64) bool {
	t.Helper()
	key := "{" + r.tag + "}:q:" + intake.QueueName + ":job:" + string(intake.JobID(0, id))
	n, err := r.rc.Do(context.Background(), r.rc.B().Exists().Key(key).Build()).AsInt64()
	require.NoError(t, err)
	return n == 1
}

// With a replica wait, a record returns only once a replica acknowledged
// its writes, so what the bot confirms to Telegram survives a failover to
// that replica: with the replica frozen the record is still waiting,
// thawed it returns, and the replica holds both updates' jobs; no wait
// fell short.
func TestARecordReturnsOnlyOnceAReplicaHoldsItsUpdates(t *testing.T) {
	t.Parallel()
	for _, webhook := range []bool{false, true} {
		name := map[bool]string{false: "getUpdates", true: "webhook"}[webhook]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newReplicated(t, time.Minute)
			thaw := r.freeze(t)
			done := make(chan error, 1)
			go func() { done <- r.record(context.Background(), webhook) }()
			select {
			case err := <-done:
				t.Fatalf("the record returned (%v) while the replica was frozen", err)
			case <-time.After(300 * time.Millisecond):
			}
			thaw()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("the record did not return once the replica was back")
			}
			require.True(t, r.onReplica(t, 1), "update 1 on the replica")
			require.True(t, r.onReplica(t, 2), "update 2 on the replica")
			require.Empty(t, r.short())
		})
	}
}

// A replica that does not answer holds a record at most the wait's
// timeout: the record returns then (the bot keeps taking updates while a
// replica is down), and Short is told that 0 replicas acknowledged.
func TestARecordWaitsForASilentReplicaAtMostItsTimeout(t *testing.T) {
	t.Parallel()
	for _, webhook := range []bool{false, true} {
		name := map[bool]string{false: "getUpdates", true: "webhook"}[webhook]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const timeout = 300 * time.Millisecond
			r := newReplicated(t, timeout)
			r.freeze(t)
			t0 := time.Now()
			require.NoError(t, r.record(context.Background(), webhook))
			require.GreaterOrEqual(t, time.Since(t0), timeout, "it waited")
			require.Equal(t, []int{0}, r.short())
		})
	}
}
