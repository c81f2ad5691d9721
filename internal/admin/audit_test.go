package admin

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// TestAuditStreamIsCapped: the audit stream keeps about its cap (XADD
// MAXLEN ~ N trims whole stream nodes), whether written by Record or by
// RecordOnce (recordonce.lua): after 5x the cap it holds at least the cap
// and less than the cap plus one node (stream-node-max-entries, 100 by
// default), and the newest entry is the last one recorded.
func TestAuditStreamIsCapped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		record func(ctx context.Context, l *AuditLog, i int) error
	}{
		{"Record", func(ctx context.Context, l *AuditLog, i int) error {
			return l.Record(ctx, Who(adminID), ActionWeightSet, fmt.Sprintf("entry %d", i))
		}},
		{"RecordOnce", func(ctx context.Context, l *AuditLog, i int) error {
			wrote, err := l.RecordOnce(ctx, fmt.Sprintf("k:%d", i), time.Minute, Who(adminID), ActionWeightSet, fmt.Sprintf("entry %d", i))
			if err == nil && !wrote {
				err = fmt.Errorf("entry %d not written", i)
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := valkeytest.Shared(t).Client(t)
			ctx := context.Background()
			const limit = 200
			l := NewAuditLog(c, valkeytest.Namespace(t), limit, nil)
			for i := range 5 * limit {
				require.NoError(t, tc.record(ctx, l, i))
			}
			n, err := l.Len(ctx)
			require.NoError(t, err)
			node, err := c.Do(ctx, c.B().ConfigGet().Parameter("stream-node-max-entries").Build()).AsStrMap()
			require.NoError(t, err)
			t.Logf("audit stream: %d entries after %d recorded, cap ~%d, stream-node-max-entries %s", n, 5*limit, limit, node["stream-node-max-entries"])
			require.GreaterOrEqual(t, n, limit)
			require.Less(t, n, limit+101)
			last, err := l.Last(ctx, AuditShown)
			require.NoError(t, err)
			require.Len(t, last, AuditShown)
			require.Equal(t, fmt.Sprintf("entry %d", 5*limit-1), last[0].Detail)
			require.Equal(t, fmt.Sprintf("entry %d", 5*limit-AuditShown), last[AuditShown-1].Detail)
		})
	}
}

// RecordOnce writes an action once per key: the first call with a key
// appends it and says so, a later call with the same key (whoever makes
// it, whatever it says) appends nothing and says so, and calls with
// different keys each append theirs.
func TestRecordOnceWritesOncePerKey(t *testing.T) {
	t.Parallel()
	type call struct {
		key, who, detail string
		wrote            bool
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  []string // the stream, oldest first: "who|detail"
	}{
		{"the same key again writes nothing", []call{
			{"stop:a", "1", "first", true},
			{"stop:a", "1", "first", false},
			{"stop:a", "2", "another admin's", false},
		}, []string{"1|first"}},
		{"different keys both write", []call{
			{"stop:a", "1", "a", true},
			{"stop:b", "1", "b", true},
			{"free:a", "1", "a freed", true},
			{"stop:b", "2", "b again", false},
		}, []string{"1|a", "1|b", "1|a freed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			l := NewAuditLog(valkeytest.Shared(t).Client(t), valkeytest.Namespace(t), DefaultAuditCap, nil)
			for i, c := range tc.calls {
				wrote, err := l.RecordOnce(ctx, c.key, time.Minute, c.who, ActionQueuePaused, c.detail)
				require.NoError(t, err)
				require.Equal(t, c.wrote, wrote, "call %d (%s)", i, c.key)
			}
			es, err := l.Last(ctx, 10)
			require.NoError(t, err)
			got := make([]string, len(es))
			for i, e := range es {
				got[len(es)-1-i] = e.Who + "|" + e.Detail
				require.Equal(t, ActionQueuePaused, e.Action)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// A RecordOnce whose append fails (here the stream key holds a string:
// WRONGTYPE) writes nothing, its marker included: the next call with the
// key, once the stream can be written, records it (a stop handled again
// after its audit failed is recorded by the retry). The marker names the
// entry and is kept for keep, no longer.
func TestRecordOnceThatFailedIsWrittenByTheNextCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	l := NewAuditLog(c, ns, DefaultAuditCap, nil)
	keys := NewKeys(ns)
	require.NoError(t, c.Do(ctx, c.B().Set().Key(keys.Audit()).Value("not a stream").Build()).Error())
	wrote, err := l.RecordOnce(ctx, "stop:x", time.Hour, "1", ActionQueuePaused, "x")
	require.ErrorContains(t, err, "WRONGTYPE")
	require.False(t, wrote)
	n, err := c.Do(ctx, c.B().Exists().Key(keys.AuditOnce("stop:x")).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "no marker left by the failed write")

	require.NoError(t, c.Do(ctx, c.B().Del().Key(keys.Audit()).Build()).Error())
	wrote, err = l.RecordOnce(ctx, "stop:x", time.Hour, "1", ActionQueuePaused, "x")
	require.NoError(t, err)
	require.True(t, wrote, "the retry writes it")
	es, err := l.Last(ctx, 10)
	require.NoError(t, err)
	require.Len(t, es, 1)
	marker, err := c.Do(ctx, c.B().Get().Key(keys.AuditOnce("stop:x")).Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, es[0].ID, marker, "the marker names the entry")
	ttl, err := c.Do(ctx, c.B().Pttl().Key(keys.AuditOnce("stop:x")).Build()).AsInt64()
	require.NoError(t, err)
	require.InDelta(t, time.Hour.Milliseconds(), ttl, float64(time.Minute.Milliseconds()), "kept for keep")

	_, err = l.RecordOnce(ctx, "stop:y", 0, "1", ActionQueuePaused, "y")
	require.ErrorContains(t, err, "keep 0s, want at least 1ms")
}
