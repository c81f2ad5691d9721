package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// consoleTimeout bounds one request of the operator: a frozen console
// (SIGSTOP) answers nothing, and the next read waits for it.
const consoleTimeout = 10 * time.Second

// consoleGrace is how long after a fault that holds the console's process
// or Valkey ends the console may still fail a request: the process
// restarted by it starting to serve, its Valkey connections made again.
const consoleGrace = lease

// consoleReq is one request the operator made to the console, its times
// after the load started.
type consoleReq struct {
	Path     string // method and path
	At, End  time.Duration
	Want     string // a change's (a POST's) redirect when it is done: where the console sends it back
	Status   int    // the answer's status; 0 when none came
	Location string // the answer's Location (a redirect)
	// RetryAfter is the answer's Retry-After (a 503 while the store is
	// briefly unavailable carries it).
	RetryAfter string
	Refused    string // the change's answer shown on the page it came back to, when a failure
	Err        string // why no answer came, or the start of a failed answer's body
}

// ok reports whether r answered as a console serving well answers: 200
// for a page (not showing its change refused), 303 to where it wants for
// a change (the sign-in: the Overview).
func (r consoleReq) ok() bool {
	switch {
	case r.Refused != "":
		return false
	case r.Want != "":
		return r.Status == http.StatusSeeOther && r.Location == r.Want
	}
	return r.Status == http.StatusOK
}

// outcome names r's answer for the report: its status (with where a
// redirect sends it, or "refused" for a change refused), or "no answer".
func (r consoleReq) outcome() string {
	switch {
	case r.Status == 0:
		return "no answer"
	case r.Refused != "":
		return fmt.Sprintf("%d refused", r.Status)
	case r.Location != "":
		return fmt.Sprintf("%d %s", r.Status, r.Location)
	}
	return fmt.Sprint(r.Status)
}

// consoleRow is a broadcast as the Broadcasts page's JSON
// (/api/broadcasts) lists it.
type consoleRow struct {
	ID      string `json:"id"`
	Total   int    `json:"total"`
	Sent    int    `json:"sent"`
	Failed  int    `json:"failed"`
	Running bool   `json:"running"`
	Mode    string `json:"mode"`
}

// The operator's change: weightChat's weight set to consoleWeight with
// the Chat page's form (the Telegram admin's /weight sets groupsFirst's).
const (
	weightChat    = groupsFirst - 1
	consoleWeight = 3
)

// operator keeps the console open while the run goes on, as a person
// with its Broadcasts and Queues pages open: signed in (again after the
// console's process restarted: sessions live in its memory), it reads the
// Broadcasts page's JSON every second and the Queues page every 2 s, as
// their live refresh does (docs/console.md, Live pages), recording every
// request and what each Broadcasts answer listed; from weightAt on it
// sets weightChat's weight with the Chat page's form (once a second
// until the page it comes back to says it was done).
type operator struct {
	addr, token string
	start       time.Time
	weightAt    time.Duration
	http        *http.Client
	mu          sync.Mutex
	reqs        []consoleReq
	signIns     int
	signedIn    bool
	weightDone  string                // the console's answer to the weight change, once a success
	listed      map[string]consoleRow // each broadcast as last listed
	running     int                   // Broadcasts answers listing a running broadcast
	problems    []string              // a listed broadcast missing later, or its counts going back
}

func newOperator(addr, token string, start time.Time, weightAt time.Duration) *operator {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &operator{addr: addr, token: token, start: start, weightAt: weightAt, listed: map[string]consoleRow{},
		http: &http.Client{Jar: jar, Timeout: consoleTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// run reads the pages until ctx ends.
func (o *operator) run(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		if o.weightDone == "" && time.Since(o.start) >= o.weightAt {
			o.setWeight(ctx)
		}
		o.read(ctx, "/api/broadcasts")
		if i%2 == 0 {
			o.read(ctx, "/queues")
		}
		sleep(ctx, time.Second)
	}
}

// signIn signs in unless signed in; false when it could not.
func (o *operator) signIn(ctx context.Context) bool {
	if o.signedIn {
		return true
	}
	r, _ := o.do(ctx, http.MethodPost, "/login", url.Values{"token": {o.token}}, "/", false)
	o.record(ctx, r)
	if !r.ok() {
		return false
	}
	o.mu.Lock()
	o.signIns++
	o.mu.Unlock()
	o.signedIn = true
	return true
}

// get GETs path (as a live refresh: X-Console-Live) and records it.
func (o *operator) get(ctx context.Context, path string, live bool) (consoleReq, []byte) {
	r, body := o.do(ctx, http.MethodGet, path, nil, "", live)
	if r.Status == http.StatusSeeOther && r.Location == "/login" {
		o.signedIn = false // the session is gone: the console's process restarted
	}
	return r, body
}

var (
	csrfRE  = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	flashRE = regexp.MustCompile(`(?s)<p id="flash" class="flash (ok|bad)">(.*?)</p>`)
)

// setWeight opens weightChat's Chat page, sets its weight with the page's
// form and reads the answer on the page it comes back to: weightDone
// once it says the weight is set (or already was), the request marked
// refused when it says the change failed.
func (o *operator) setWeight(ctx context.Context) {
	if !o.signIn(ctx) {
		return
	}
	page := fmt.Sprintf("/chat?id=%d", weightChat)
	r, body := o.get(ctx, page, false)
	o.record(ctx, r)
	m := csrfRE.FindSubmatch(body)
	if !r.ok() || m == nil {
		return
	}
	form := url.Values{"csrf": {string(m[1])}, "chat": {fmt.Sprint(weightChat)}, "weight": {fmt.Sprint(consoleWeight)}}
	r, _ = o.do(ctx, http.MethodPost, "/chat/weight", form, page, false)
	o.record(ctx, r)
	if !r.ok() {
		return
	}
	r, body = o.get(ctx, page, false)
	f := flashRE.FindSubmatch(body)
	switch {
	case !r.ok():
	case f == nil:
		r.Refused = "no answer shown"
	case string(f[1]) != "ok":
		r.Refused = html.UnescapeString(string(f[2]))
	default:
		o.mu.Lock()
		o.weightDone = html.UnescapeString(string(f[2]))
		o.mu.Unlock()
	}
	o.record(ctx, r)
}

// read signs in when it must, then GETs path (the Broadcasts JSON's rows
// checked against the answers before); the rows of a 200, nil otherwise.
func (o *operator) read(ctx context.Context, path string) []consoleRow {
	if !o.signIn(ctx) {
		return nil
	}
	r, body := o.get(ctx, path, !strings.HasPrefix(path, "/api/"))
	o.record(ctx, r)
	if !r.ok() || path != "/api/broadcasts" {
		return nil
	}
	var rows []consoleRow
	if err := json.Unmarshal(body, &rows); err != nil {
		o.problem("%.1fs: the Broadcasts JSON does not parse: %v", r.At.Seconds(), err)
		return nil
	}
	o.saw(r.At, rows)
	return rows
}

// saw checks one Broadcasts answer against the ones before: a broadcast
// once listed is listed again, its total the same (or larger, when the
// answer before listed it running: a broadcast's total is its plan, the
// audience when it began, until its walk of the audience finds the chats
// that joined since, e.g. a /start rush; notifier Progress) and its
// settled copies (sent and failed) never fewer.
func (o *operator) saw(at time.Duration, rows []consoleRow) {
	o.mu.Lock()
	defer o.mu.Unlock()
	byID := map[string]consoleRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	if slices.ContainsFunc(rows, func(r consoleRow) bool { return r.Running }) {
		o.running++
	}
	for id, before := range o.listed {
		now, ok := byID[id]
		switch {
		case !ok:
			o.problemLocked("%.1fs: broadcast %s, listed before, is missing from the console's Broadcasts", at.Seconds(), id)
		case now.Total < before.Total || now.Total > before.Total && !before.Running || now.Sent+now.Failed < before.Sent+before.Failed:
			o.problemLocked("%.1fs: broadcast %s went from %d sent, %d failed of %d to %d sent, %d failed of %d on the console",
				at.Seconds(), id, before.Sent, before.Failed, before.Total, now.Sent, now.Failed, now.Total)
		}
	}
	for id, r := range byID {
		o.listed[id] = r
	}
}

func (o *operator) problem(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.problemLocked(format, args...)
}

func (o *operator) problemLocked(format string, args ...any) {
	if len(o.problems) < 10 {
		o.problems = append(o.problems, fmt.Sprintf(format, args...))
	}
}

// do sends one request (a change's want: where its redirect must send
// it; live: as a page's live refresh); its body when an answer came.
func (o *operator) do(ctx context.Context, method, path string, form url.Values, want string, live bool) (consoleReq, []byte) {
	r := consoleReq{Path: method + " " + path, At: time.Since(o.start), Want: want}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+o.addr+path, body)
	if err != nil {
		r.Err = err.Error()
		return r, nil
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if live {
		req.Header.Set("X-Console-Live", "1")
	}
	res, err := o.http.Do(req)
	var raw []byte
	if err == nil {
		raw, err = io.ReadAll(res.Body)
		_ = res.Body.Close()
		r.Status, r.Location, r.RetryAfter = res.StatusCode, res.Header.Get("Location"), res.Header.Get("Retry-After")
	}
	if err != nil {
		r.Err = err.Error()
	} else if !r.ok() && r.Status != http.StatusSeeOther {
		r.Err = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
	}
	r.End = time.Since(o.start)
	return r, raw
}

// record keeps r (not when the load's end cut it: no answer, ctx ended).
func (o *operator) record(ctx context.Context, r consoleReq) {
	if r.Status == 0 && ctx.Err() != nil {
		return
	}
	o.mu.Lock()
	o.reqs = append(o.reqs, r)
	o.mu.Unlock()
}

// final reads the Broadcasts JSON once settled, trying every second for
// up to 30 s until it answers 200. Errors: no 200 in that time.
func (o *operator) final(ctx context.Context) ([]consoleRow, error) {
	var rows []consoleRow
	if !waitFor(ctx, 30*time.Second, func() bool {
		if rows = o.read(ctx, "/api/broadcasts"); rows != nil {
			return true
		}
		sleep(ctx, time.Second)
		return false
	}) {
		return nil, fmt.Errorf("the console's Broadcasts JSON never answered 200 after settling")
	}
	return rows, nil
}

// consoleVerdict is the checker's account of the console.
type consoleVerdict struct {
	Requests, OK, Excused int
	Excusals              []string       // each excused request, described, and the fault that excuses it
	Unexcused             []string       // requests that failed in a way no fault of their span explains
	Outcomes              map[string]int // every request's outcome (its status, or "no answer")
}

// excuses reports whether fault a explains r, a request not answered
// well that overlapped it (from its beginning until consoleGrace after its
// end): a fault of the console's process (kill-9, sigterm, sigstop)
// explains no answer (refused, dropped, or none while frozen) and a
// sign-out (303 to /login: the sessions were the killed process's); a
// fault of Valkey (its restart, failover, a network cut or slowness,
// BUSY, OOM, READONLY) explains only the console's answer for the store
// briefly unavailable, 503 with Retry-After. Anything else (a 500, a
// change's failure shown on its page, no answer while only Valkey was
// faulted) is a fault of the console.
func excuses(a applied, r consoleReq) bool {
	if r.At > a.Ended+consoleGrace || r.End < a.Began {
		return false
	}
	switch {
	case a.Target == consoleSlot:
		return r.Status == 0 || (r.Status == http.StatusSeeOther && r.Location == "/login")
	case a.Target == "valkey" || a.Kind == faultSlow:
		return r.Status == http.StatusServiceUnavailable && r.RetryAfter != ""
	}
	return false
}

// signInPath is a sign-in's consoleReq.Path.
const signInPath = "POST /login"

// signedOutByRestart reports whether r is a sign-out (303 to /login)
// that a restart of the console's process explains however long after it
// r came: the sessions live in the process, so every request after a
// kill-9 or a SIGTERM (the process restarted) is signed out until the
// operator signs in again. A restart between the operator's last sign-in
// before r (a POST /login answered well, in reqs) and r's start excuses
// it (chaos seed 14: the first request to reach the restarted console
// came 5 s after its restart, past consoleGrace, held back by a
// network cut to Valkey; a SIGSTOP keeps the sessions and excuses a
// sign-out only within its span, as excuses says). It returns the last
// such restart.
func signedOutByRestart(r consoleReq, reqs []consoleReq, faults []applied) (applied, bool) {
	if r.Status != http.StatusSeeOther || r.Location != "/login" {
		return applied{}, false
	}
	var signedIn time.Duration = -1
	for _, q := range reqs {
		if q.Path == signInPath && q.ok() && q.End <= r.At {
			signedIn = max(signedIn, q.End)
		}
	}
	var by applied
	found := false
	for _, a := range faults {
		if a.Target == consoleSlot && (a.Kind == faultKill || a.Kind == faultTerm) && a.Began > signedIn && a.Began <= r.At && (!found || a.Began >= by.Began) {
			by, found = a, true
		}
	}
	return by, found
}

// excuser is the fault among faults that excuses r: one of its span
// (excuses) or, for a sign-out, a restart of the console since the
// operator's last sign-in among reqs (signedOutByRestart); of those, the
// one begun last, the nearest cause (a 503 of BUSY within a net-slow's
// grace is named the valkey-busy that began after it); false when none
// does.
func excuser(faults []applied, r consoleReq, reqs []consoleReq) (applied, bool) {
	by, found := signedOutByRestart(r, reqs, faults)
	for _, a := range faults {
		if excuses(a, r) && (!found || a.Began >= by.Began) {
			by, found = a, true
		}
	}
	return by, found
}

// judgeConsole sorts reqs: answered as a console serving well answers
// (consoleReq.ok), excused (a fault of its span excuses it: each named
// with the fault that does, excuser), or unexcused (each named).
func judgeConsole(reqs []consoleReq, faults []applied) consoleVerdict {
	v := consoleVerdict{Requests: len(reqs), Outcomes: map[string]int{}}
	for _, r := range reqs {
		v.Outcomes[r.outcome()]++
		if r.ok() {
			v.OK++
			continue
		}
		desc := fmt.Sprintf("%s at %.1fs-%.1fs: %s", r.Path, r.At.Seconds(), r.End.Seconds(), r.outcome())
		if r.Err != "" {
			desc += ": " + r.Err
		}
		if a, ok := excuser(faults, r, reqs); ok {
			v.Excused++
			what := a.Kind
			if a.Target != a.Kind {
				what += " " + a.Target
			}
			v.Excusals = append(v.Excusals, fmt.Sprintf("%s (excused by %s at %.1fs-%.1fs)", desc, what, a.Began.Seconds(), a.Ended.Seconds()))
			continue
		}
		v.Unexcused = append(v.Unexcused, desc)
	}
	return v
}

// consoleFinal checks the console's Broadcasts once settled against the
// progress messages: one free broadcast and (when started) one paid,
// neither running, each with the sent and failed counts its progress
// message ends with. It returns the problems (none when they agree).
func consoleFinal(rows []consoleRow, v verdict, paid bool) []string {
	var out []string
	want := []struct {
		mode         string
		sent, failed int
	}{{"free", v.ProgressSent, v.ProgressFailed}}
	if paid {
		want = append(want, struct {
			mode         string
			sent, failed int
		}{"paid", v.PaidProgressSent, v.PaidProgressFailed})
	}
	for _, w := range want {
		var got []consoleRow
		for _, r := range rows {
			if strings.HasPrefix(r.Mode, w.mode) {
				got = append(got, r)
			}
		}
		switch {
		case len(got) != 1:
			out = append(out, fmt.Sprintf("the console lists %d %s broadcasts once settled, not 1: %+v", len(got), w.mode, got))
		case got[0].Running || got[0].Sent != w.sent || got[0].Failed != w.failed:
			out = append(out, fmt.Sprintf("the console shows the %s broadcast %s at %d sent, %d failed (running %t) once settled; its progress message says %d sent, %d failed",
				w.mode, got[0].ID, got[0].Sent, got[0].Failed, got[0].Running, w.sent, w.failed))
		}
	}
	return out
}

// requests lists the operator's requests so far.
func (o *operator) requests() []consoleReq {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.reqs)
}

// sum adds m's values.
func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
