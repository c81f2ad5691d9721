package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// Limits of the console's job and weight listings.
const (
	// JobsPage is the most jobs a listing (a lane's pending jobs, a
	// queue's retries) reads at once.
	JobsPage = 50
	// WeightsStep is the HSCAN COUNT of a page of weights.
	WeightsStep = 100
)

// JobView is a job as the console shows it: where it stands
// (lanes.JobView) and its payload as shown (Shown).
type JobView struct {
	lanes.JobView
	// Shown is its payload for a reader: indented JSON (a message job's
	// fields, a recorded update), or the bytes quoted (Go syntax) when
	// they are not JSON. A payload holds what is sent to a chat or what
	// Telegram sent, never the bot token.
	Shown string
}

func jobView(v lanes.JobView) JobView {
	var b bytes.Buffer
	shown := strconv.Quote(string(v.Payload))
	if utf8.Valid(v.Payload) && json.Valid(v.Payload) && json.Indent(&b, v.Payload, "", "  ") == nil {
		shown = b.String()
	}
	return JobView{JobView: v, Shown: shown}
}

func jobViews(vs []lanes.JobView) []JobView {
	out := make([]JobView, len(vs))
	for i, v := range vs {
		out[i] = jobView(v)
	}
	return out
}

// queueSource is the store of queue q, or an *InputError naming the
// queues.
func (ad *Admin) queueSource(q string) (deadSource, error) {
	src, ok := ad.deadSource(q)
	if !ok {
		return deadSource{}, inputErr(fmt.Sprintf("❌ Unknown queue %q: one of %s.", q, strings.Join(ad.DeadQueues(), ", ")))
	}
	return src, nil
}

// FindJob finds job id in every queue (the update queue, reply, notify,
// paid when on): each queue that holds it, as it stands (a job id is in
// one queue). None when no queue holds it (acked and gone, purged, or
// never). Errors: an *InputError for a malformed id; the server's.
func (ad *Admin) FindJob(ctx context.Context, id string) ([]JobView, error) {
	jid := lanes.JobID(strings.TrimSpace(id))
	if err := jid.Validate(); err != nil {
		return nil, inputErr(fmt.Sprintf("❌ %q is not a job id (job_ and 26 characters, as the Dead letters page shows them).", id))
	}
	var out []JobView
	for _, src := range ad.deadSources(true) {
		v, ok, err := src.in.Job(ctx, src.q, jid)
		if err != nil {
			return out, fmt.Errorf("admin: job %s in %s: %w", jid, src.q, err)
		}
		if ok {
			out = append(out, jobView(v))
		}
	}
	return out, nil
}

// PendingJobs lists up to JobsPage pending jobs of lane of queue (a chat
// id) in send order, after job id after ("" from the head). Errors: an
// *InputError for an unknown queue or a malformed lane or after; the
// server's.
func (ad *Admin) PendingJobs(ctx context.Context, queue, lane, after string) ([]JobView, error) {
	src, err := ad.queueSource(queue)
	if err != nil {
		return nil, err
	}
	vs, err := src.in.PendingJobs(ctx, queue, lane, lanes.JobID(after), JobsPage)
	if errors.Is(err, lanes.ErrInvalid) {
		return nil, inputErr(fmt.Sprintf("❌ Lane %q or job %q: %v.", lane, after, err))
	}
	return jobViews(vs), err
}

// RetryingJobs lists up to JobsPage of queue's jobs waiting for a retry
// (an unordered queue's delayed set: the update queue's), soonest first,
// after the skip soonest. Errors: an *InputError for an unknown queue or
// skip < 0; the server's.
func (ad *Admin) RetryingJobs(ctx context.Context, queue string, skip int) ([]JobView, error) {
	src, err := ad.queueSource(queue)
	if err != nil {
		return nil, err
	}
	if skip < 0 {
		return nil, inputErr(fmt.Sprintf("❌ Skip %d: want 0 or more.", skip))
	}
	vs, err := src.in.RetryingJobs(ctx, queue, skip, JobsPage)
	return jobViews(vs), err
}

// WeightsPage is a page of the chats with a non-default weight (about
// WeightsStep; lanes.Inspector.WeightsPage) from cursor ("" the start),
// and the next page's cursor ("" at the end). Errors: an *InputError for
// a malformed cursor; the server's.
func (ad *Admin) WeightsPage(ctx context.Context, cursor string) ([]lanes.GroupWeight, string, error) {
	ws, next, err := ad.out.WeightsPage(ctx, cursor, WeightsStep)
	if errors.Is(err, lanes.ErrInvalid) {
		return nil, "", inputErr(fmt.Sprintf("❌ Cursor %q is not a weights page.", cursor))
	}
	return ws, next, err
}

// BroadcastDetail is one broadcast as its console page shows it.
type BroadcastDetail struct {
	BroadcastView
	// Texts are its texts as the chats get them: the default (Lang "")
	// first, then each language's with a text of its own, in the
	// catalog's order; each in its parts (none when its record is gone or
	// keeps no text).
	Texts []notifier.BroadcastText
	// Timeline is what was done to it, oldest first: its audit entries
	// among the last scan (sent, stopped, continued free), by whom.
	Timeline []AuditEntry
}

// Broadcast returns broadcast id's detail: its progress, its text, and
// when and by whom it was sent (At and By from its audit entry among the
// last scan ones; zero when not among them) and its timeline (every one
// of those entries naming it). A broadcast whose progress
// expired is Known false. Errors: the store's.
func (ad *Admin) Broadcast(ctx context.Context, id string, scan int) (BroadcastDetail, error) {
	id = strings.TrimSpace(id)
	v, err := ad.cfg.Broadcasts.View(ctx, id)
	if err != nil {
		return BroadcastDetail{}, err
	}
	d := BroadcastDetail{BroadcastView: BroadcastView{Progress: v.Progress, Text: v.Text, Known: v.Known}}
	es, err := ad.audit.Last(ctx, scan)
	if err != nil {
		return d, err
	}
	for _, e := range es { // newest first
		if sent, ok := broadcast.SentID(e.Action, e.Detail); ok && sent == id && d.At.IsZero() {
			d.At, d.By = e.At, e.Who
		}
		if id != "" && (e.Detail == id || strings.HasPrefix(e.Detail, id+" ") || strings.HasPrefix(e.Detail, id+":")) {
			d.Timeline = append(d.Timeline, e)
		}
	}
	slices.Reverse(d.Timeline)
	if v.Known {
		d.Texts, err = ad.cfg.Broadcasts.Texts(ctx, id)
	}
	return d, err
}
