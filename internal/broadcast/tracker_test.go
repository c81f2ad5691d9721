package broadcast

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// auditTrail keeps the entries recorded, in order ("who|action|detail"),
// for the tests that read them in this package (it cannot import
// admin.AuditLog: admin imports it). The audit's own properties, and the
// stop's and the move to free's audit once on the real AuditLog, are
// tested in package broadcast_test (audit_test.go).
type auditTrail struct {
	mu      sync.Mutex
	entries []string
	once    map[string]bool // RecordOnce's keys recorded
}

func (a *auditTrail) Record(_ context.Context, who, action, detail string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, who+"|"+action+"|"+detail)
	return nil
}

func (a *auditTrail) RecordOnce(_ context.Context, key string, _ time.Duration, who, action, detail string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.once[key] {
		return false, nil
	}
	if a.once == nil {
		a.once = map[string]bool{}
	}
	a.once[key] = true
	a.entries = append(a.entries, who+"|"+action+"|"+detail)
	return true, nil
}

// recorded returns the entries recorded so far.
func (a *auditTrail) recorded() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.entries)
}

// newService is a Service on a real Valkey, in the test's own namespace;
// opts change its Config before it is made.
func newService(t *testing.T, editInterval time.Duration, opts ...func(*Config)) (*Service, Keys) {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	store, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(ns))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	upd, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(ns))...)
	require.NoError(t, err)
	cfg := Config{Client: c, Tag: ns, Notifier: n, Audience: chats.NewAudience(c, ns),
		Journal: intake.NewInbox(c, upd, ns), Audit: &auditTrail{}, Codec: tapdata.New("1:test-token"),
		GlobalRate: 30, EditInterval: editInterval}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg)
	require.NoError(t, err)
	return s, NewKeys(ns)
}

// The tracker is a service: Run calls started, looks at the tracked
// broadcasts (an unreadable entry is untracked; a progress message not
// sent yet is left as it is stored), returns nil when its context ends,
// and leaves no goroutine behind.
func TestTrackerRunsUntilStopped(t *testing.T) {
	s, keys := newService(t, 20*time.Millisecond)
	ctx := context.Background()
	c := s.cfg.Client
	id, err := s.notifier.Broadcast(ctx, []int64{4242}, notifier.Message{Text: "hello"})
	require.NoError(t, err)
	waiting, err := json.Marshal(tracked{Chat: adminID, Job: "no-such-job", Last: "old"})
	require.NoError(t, err)
	require.NoError(t, c.Do(ctx, c.B().Hset().Key(keys.Tracked()).FieldValue().
		FieldValue("junk", "not json").FieldValue(id, string(waiting)).Build()).Error())

	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valkey-io/valkey-go.(*pipe)._background"),
		goleak.IgnoreAnyFunction("github.com/valkey-io/valkey-go.(*pipe)._backgroundWrite"),
		goleak.IgnoreAnyFunction("github.com/valkey-io/valkey-go.(*pipe)._backgroundRead"))
	runCtx, stop := context.WithCancel(ctx)
	started := make(chan struct{})
	done := make(chan error, 1)
	tr := s.Tracker()
	require.Equal(t, "broadcast tracker", tr.Name())
	go func() { done <- tr.Run(runCtx, func() { close(started) }) }()
	<-started
	s.wake()
	require.Eventually(t, func() bool {
		all, err := c.Do(ctx, c.B().Hgetall().Key(keys.Tracked()).Build()).AsStrMap()
		_, junk := all["junk"]
		return err == nil && !junk
	}, 10*time.Second, 10*time.Millisecond, "the unreadable entry is untracked")
	all, err := c.Do(ctx, c.B().Hgetall().Key(keys.Tracked()).Build()).AsStrMap()
	require.NoError(t, err)
	require.Equal(t, map[string]string{id: string(waiting)}, all, "a progress message not sent yet is left as stored")
	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// An admin API view: a known broadcast with its progress text, an unknown
// one with only its id; SentID reads the id of a "broadcast sent" entry only.
func TestViewAndSentID(t *testing.T) {
	s, _ := newService(t, time.Second)
	ctx := context.Background()
	id, err := s.notifier.Broadcast(ctx, []int64{4343}, notifier.Message{Text: "hi"})
	require.NoError(t, err)
	v, err := s.View(ctx, id)
	require.NoError(t, err)
	require.True(t, v.Known)
	require.Equal(t, id, v.ID)
	require.Equal(t, progressText(v.Progress), v.Text)
	v, err = s.View(ctx, "bc_nope")
	require.NoError(t, err)
	require.Equal(t, View{Progress: notifier.Progress{ID: "bc_nope"}}, v)

	got, ok := SentID(ActionSent, id+" to 3 chats, paid (about 0.3 Stars)")
	require.True(t, ok)
	require.Equal(t, id, got)
	_, ok = SentID(ActionStopped, id+": 1 sent before the stop")
	require.False(t, ok)
}
