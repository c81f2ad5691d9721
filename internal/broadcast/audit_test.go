package broadcast_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// audited is a Service on a real Valkey, in the test's own namespace,
// whose audit is the app's (admin.AuditLog), with paid broadcasts on and
// an audience of n chats.
type audited struct {
	s     *broadcast.Service
	n     *notifier.Notifier
	audit *admin.AuditLog
	c     valkey.Client
	keys  admin.Keys
}

func newAudited(t *testing.T, n int) audited {
	t.Helper()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	store, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(ns))
	require.NoError(t, err)
	nt, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	upd, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(ns))...)
	require.NoError(t, err)
	audience := chats.NewAudience(c, ns)
	for i := range n {
		require.NoError(t, audience.Add(ctx, int64(6000+i)))
	}
	audit := admin.NewAuditLog(c, ns, admin.DefaultAuditCap, nil)
	s, err := broadcast.New(broadcast.Config{Client: c, Tag: ns, Notifier: nt, Audience: audience,
		Journal: intake.NewInbox(c, upd, ns), Audit: audit, Codec: tapdata.New("1:test-token"),
		GlobalRate: 30, PaidRate: 1000})
	require.NoError(t, err)
	return audited{s: s, n: nt, audit: audit, c: c, keys: admin.NewKeys(ns)}
}

// breakAudit makes the audit stream unwritable for real: its entries are
// moved aside and its key holds a string, so XADD answers WRONGTYPE;
// mendAudit puts the entries back.
func (a audited) breakAudit(t *testing.T) {
	ctx := context.Background()
	if n, err := a.c.Do(ctx, a.c.B().Exists().Key(a.keys.Audit()).Build()).AsInt64(); n == 1 {
		require.NoError(t, a.c.Do(ctx, a.c.B().Rename().Key(a.keys.Audit()).Newkey(a.keys.Audit()+":aside").Build()).Error())
	} else {
		require.NoError(t, err)
	}
	require.NoError(t, a.c.Do(ctx, a.c.B().Set().Key(a.keys.Audit()).Value("not a stream").Build()).Error())
}

func (a audited) mendAudit(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, a.c.Do(ctx, a.c.B().Del().Key(a.keys.Audit()).Build()).Error())
	if n, err := a.c.Do(ctx, a.c.B().Exists().Key(a.keys.Audit()+":aside").Build()).AsInt64(); n == 1 {
		require.NoError(t, a.c.Do(ctx, a.c.B().Rename().Key(a.keys.Audit()+":aside").Newkey(a.keys.Audit()).Build()).Error())
	} else {
		require.NoError(t, err)
	}
}

// entries is the audit stream, oldest first: "who|action|detail".
func (a audited) entries(t *testing.T) []string {
	es, err := a.audit.Last(context.Background(), 100)
	require.NoError(t, err)
	out := make([]string, len(es))
	for i, e := range es {
		out[len(es)-1-i] = e.Who + "|" + e.Action + "|" + e.Detail
	}
	return out
}

// A stop is audited exactly once, with its counts: at once, or, when its
// audit write failed (the audit stream unwritable: the stop itself went
// through, and Stop failed, so its update is handled again), by the retry,
// which finds the broadcast stopped and finished and answers as the stop;
// another admin's later stop of it answers "was already stopped" and
// audits nothing. (The retry used to answer "was already stopped" and
// audit nothing: the stop was never audited.)
func TestAStopIsAuditedOnceEvenWhenItsAuditFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		auditFails bool
	}{
		{"audited at once", false},
		{"its audit failed: audited by the retry", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n = 12
			a := newAudited(t, 0)
			ctx := context.Background()
			chatIDs := make([]int64, n)
			for i := range chatIDs {
				chatIDs[i] = int64(7000 + i)
			}
			id, err := a.n.Broadcast(ctx, chatIDs, notifier.Message{Text: "news"})
			require.NoError(t, err)
			if tc.auditFails {
				a.breakAudit(t)
				_, err := a.s.Stop(ctx, "42", id)
				require.ErrorContains(t, err, "WRONGTYPE")
				p, err := a.n.Progress(ctx, id)
				require.NoError(t, err)
				require.True(t, p.Stopped && p.StopFinished, "the stop went through; its audit did not")
				a.mendAudit(t)
			}
			ans, err := a.s.Stop(ctx, "42", id)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("🛑 Broadcast %s stopped: 0 sent before the stop, %d cancelled.", id, n), ans)
			want := []string{fmt.Sprintf("42|%s|%s: 0 sent before the stop, %d cancelled, 0 in flight at the stop", broadcast.ActionStopped, id, n)}
			require.Equal(t, want, a.entries(t), "audited once, with the stop's counts")

			for _, who := range []string{"43", "42"} {
				ans, err = a.s.Stop(ctx, who, id)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("Broadcast %s was already stopped. 🛑 Broadcast stopped: 0 sent before the stop, 0 failed, %d cancelled of %d", id, n, n), ans)
				require.Equal(t, want, a.entries(t), "a stop audited already is not audited again")
			}
		})
	}
}

// A halted paid broadcast's move to free (Continue free) is audited
// exactly once, with the copies moved: at once, or, when its audit write
// failed (the move went through), by the retry, which finds it continued
// free and answers as the move, or, stopped since, answers that it was
// stopped; another admin's later Continue free audits nothing. (The retry
// used to answer "already continues free", or "was stopped", and audit
// nothing.)
func TestAMoveToFreeIsAuditedOnceEvenWhenItsAuditFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		auditFails, stops bool // stops: another admin stops it before the retry
		retryAnswer       string
	}{
		{name: "audited at once", retryAnswer: "Broadcast %s already continues free."},
		{name: "its audit failed: audited by the retry", auditFails: true, retryAnswer: "▶️ Broadcast %s continues free: 5 copies at 30 messages/s."},
		{name: "its audit failed, then stopped: audited by the retry", auditFails: true, stops: true,
			retryAnswer: "Broadcast %s was stopped: nothing to continue."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n = 5
			a := newAudited(t, n)
			ctx := context.Background()
			pv, err := a.s.Compose(ctx, broadcast.Composition{Text: "paid news", Paid: true})
			require.NoError(t, err)
			id, _, err := a.s.StartComposed(ctx, admin.WhoConsole, pv.Token)
			require.NoError(t, err)
			halted, err := a.n.HaltPaid(ctx, id)
			require.NoError(t, err)
			require.True(t, halted)
			sent := fmt.Sprintf("console|%s|%s to %d chats, paid (about 0.5 Stars)", broadcast.ActionSent, id, n)
			freed := fmt.Sprintf("42|%s|%s: %d copies moved to free, paid: 0 copies, 0.0 Stars", broadcast.ActionContinuedFree, id, n)
			want := []string{sent, freed}

			if tc.auditFails {
				a.breakAudit(t)
				_, err := a.s.ContinueFree(ctx, "42", id)
				require.ErrorContains(t, err, "WRONGTYPE")
				p, err := a.n.Progress(ctx, id)
				require.NoError(t, err)
				require.True(t, p.Free, "the move went through; its audit did not")
				require.Equal(t, n, p.Moved)
				a.mendAudit(t)
				require.Equal(t, []string{sent}, a.entries(t), "the failed audit wrote nothing")
				if tc.stops {
					_, err := a.s.Stop(ctx, "43", id)
					require.NoError(t, err)
					want = []string{sent, fmt.Sprintf("43|%s|%s: 0 sent before the stop, %d cancelled, 0 in flight at the stop, paid: 0 copies, 0.0 Stars", broadcast.ActionStopped, id, n), freed}
				}
			} else {
				ans, err := a.s.ContinueFree(ctx, "42", id)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("▶️ Broadcast %s continues free: %d copies at 30 messages/s.", id, n), ans)
			}
			ans, err := a.s.ContinueFree(ctx, "42", id)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf(tc.retryAnswer, id), ans)
			require.Equal(t, want, a.entries(t), "audited once, with the copies moved")

			_, err = a.s.ContinueFree(ctx, "43", id)
			require.NoError(t, err)
			require.Equal(t, want, a.entries(t), "a move audited already is not audited again")
		})
	}
}
