package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// jobState is how the Job and Jobs pages state where job v stands:
// waiting (its place in its lane, a retry, its lane's park), in flight
// with its lease's end, retrying with its due time, dead since when.
func jobState(v admin.JobView) string {
	utc := func(t time.Time) string { return t.UTC().Format(time.DateTime) + " UTC" }
	switch v.State {
	case lanes.JobPending:
		s := "waiting"
		if v.Position >= 0 {
			s = fmt.Sprintf("waiting, %d ahead of it in its lane", v.Position)
		}
		if v.Attempts > 0 {
			s += fmt.Sprintf(" (to be retried: %d failed attempts)", v.Attempts)
		}
		switch {
		case v.Parked && v.ParkedUntil.IsZero():
			s += "; its lane is paused until resumed"
		case v.Parked:
			s += "; its lane is parked until " + utc(v.ParkedUntil)
		}
		return s
	case lanes.JobInFlight:
		return "in flight, lease until " + utc(v.LeaseUntil)
	case lanes.JobRetrying:
		return "retrying at " + utc(v.Due)
	case lanes.JobDead:
		return "dead since " + utc(v.DeadAt)
	}
	return string(v.State) + " (between two steps: reload)"
}

// jobData is the Job page: a search by id and what it found.
type jobData struct {
	Query string
	Found []admin.JobView
	// Searched: a valid id was looked for (Found empty: no queue holds it).
	Searched bool
	// Error is what is wrong with the id searched.
	Error string
}

// job is the Job page: find a job by id in every queue and show where it
// stands, its attempts, its last failure and its payload. A broadcast's
// id (bc_…) is sent to its page; a malformed id is answered on the page
// with HTTP 400, an id no queue holds with 404 (both still readable pages).
func (c *Console) job(w http.ResponseWriter, r *http.Request, sid string, s session) {
	d := jobData{Query: strings.TrimSpace(r.URL.Query().Get("id"))}
	if bc, meant := broadcast.CanonicalID(d.Query); meant {
		http.Redirect(w, r, "/broadcast?id="+url.QueryEscape(bc), http.StatusSeeOther)
		return
	}
	if d.Query != "" {
		found, err := c.b.FindJob(r.Context(), d.Query)
		var ie *admin.InputError
		switch {
		case errors.As(err, &ie):
			d.Error = ie.Text
		case err != nil:
			c.fail(w, r, err)
			return
		}
		d.Found, d.Searched = found, err == nil
	}
	code := http.StatusOK
	switch {
	case d.Error != "":
		code = http.StatusBadRequest
	case d.Searched && len(d.Found) == 0:
		code = http.StatusNotFound
	}
	c.renderStatus(w, r, sid, s, code, "job", "Job", d)
}

// jobsData is the Jobs page: a lane's pending jobs, or a queue's retries.
type jobsData struct {
	Queues      []string
	Queue, Lane string
	Jobs        []admin.JobView
	// After is this page's after (lane), Next the next page's ("" at
	// the end); Skip this page's skip (retries), NextSkip the next's (-1
	// at the end).
	After, Next    string
	Skip, NextSkip int
	Page           int
}

// jobs is the Jobs page: with a lane, its pending jobs in send order, a
// page of admin.JobsPage after the after= id; without, the queue's jobs
// waiting for a retry, soonest first, by skip=.
func (c *Console) jobs(w http.ResponseWriter, r *http.Request, sid string, s session) {
	q := r.URL.Query()
	d := jobsData{Queues: c.b.DeadQueues(), Queue: q.Get("queue"), Lane: strings.TrimSpace(q.Get("lane")),
		After: q.Get("after"), NextSkip: -1, Page: admin.JobsPage}
	if d.Queue == "" {
		d.Queue = d.Queues[len(d.Queues)-1]
	}
	var err error
	if d.Lane != "" {
		d.Jobs, err = c.b.PendingJobs(r.Context(), d.Queue, d.Lane, d.After)
		if len(d.Jobs) == admin.JobsPage {
			d.Next = string(d.Jobs[len(d.Jobs)-1].ID)
		}
	} else {
		d.Skip, _ = strconv.Atoi(q.Get("skip"))
		d.Jobs, err = c.b.RetryingJobs(r.Context(), d.Queue, d.Skip)
		if len(d.Jobs) == admin.JobsPage {
			d.NextSkip = d.Skip + admin.JobsPage
		}
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, sid, s, "jobs", "Jobs", d)
}

// weights is the Weights page: the chats with a non-default weight, a
// bounded page at a time (cursor=), each editable as on the Chat page.
func (c *Console) weights(w http.ResponseWriter, r *http.Request, sid string, s session) {
	cursor := r.URL.Query().Get("cursor")
	ws, next, err := c.b.WeightsPage(r.Context(), cursor)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, sid, s, "weights", "Weights", struct {
		Weights      []lanes.GroupWeight
		Next         string
		Paged        bool
		Step, Cursor string
	}{ws, next, cursor != "", strconv.Itoa(admin.WeightsStep), cursor})
}

// broadcastDetailData is a broadcast's page.
type broadcastDetailData struct {
	Row    broadcastRow
	Detail admin.BroadcastDetail
	// Failed are its failures by reason, sorted by reason.
	Failed []reasonCount
	State  string
}

type reasonCount struct {
	Reason string
	N      int
}

// stateOf names row's state as the broadcast's page shows it. One whose
// record is gone is expired when the audit log has it sent (row.At);
// else no such broadcast: an id not shaped like one never named one, and
// of one shaped like one nothing is known (never sent, or gone long ago).
func stateOf(row broadcastRow, d admin.BroadcastDetail) string {
	switch {
	case !row.Known && row.At != "":
		return "expired (its record is kept a day after it ends)"
	case !row.Known && !notifier.ValidBroadcastID(row.ID):
		return "no such broadcast: " + row.ID + " is not a broadcast id (bc_ and 26 letters and digits)"
	case !row.Known:
		return "no such broadcast is known: never sent, or ended more than a day ago (its record is kept a day after it ends)"
	case row.Stopped:
		return "stopped"
	case d.Halted && !d.Free:
		return "halted (the bot could not pay: continue it free from the Telegram preview's button, or stop it)"
	case row.Scheduled:
		return "scheduled"
	case row.Running:
		return "running"
	}
	return "done"
}

// broadcastDetail is a broadcast's page: its text, mode, plan, counts
// and state (live), and its Stop while it runs. An id written in another
// case ("bc_01abc…", as /broadcast stop reads it: broadcast.CanonicalID)
// is sent to its canonical page (303); a malformed id is answered 400, a
// well-formed one no broadcast has that the audit log does not name
// either 404, the page saying which (as the Job page answers).
func (c *Console) broadcastDetail(w http.ResponseWriter, r *http.Request, sid string, s session) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		http.Redirect(w, r, "/broadcasts", http.StatusSeeOther)
		return
	}
	if canon, _ := broadcast.CanonicalID(id); canon != id && notifier.ValidBroadcastID(canon) {
		http.Redirect(w, r, "/broadcast?id="+url.QueryEscape(canon), http.StatusSeeOther)
		return
	}
	d, err := c.b.Broadcast(r.Context(), id, broadcastScan)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data := broadcastDetailData{Row: rowOf(d.BroadcastView, time.Now()), Detail: d}
	for _, reason := range sortedKeys(d.Failed) {
		data.Failed = append(data.Failed, reasonCount{reason, d.Failed[reason]})
	}
	data.State = stateOf(data.Row, d)
	code := http.StatusOK
	switch {
	case !notifier.ValidBroadcastID(id):
		code = http.StatusBadRequest
	case !data.Row.Known && data.Row.At == "": // no such broadcast (an expired one's audit entry and timeline are shown)
		code = http.StatusNotFound
	}
	c.renderStatus(w, r, sid, s, code, "broadcast", "Broadcast "+id, data)
}
