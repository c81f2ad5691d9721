package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

func (c *Console) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(files, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", c.loginPage)
	mux.HandleFunc("POST /login", c.login)
	mux.HandleFunc("POST /logout", c.change(c.logout))
	mux.HandleFunc("GET /{$}", c.signedIn(c.overview))
	mux.HandleFunc("GET /api/overview", c.signedIn(c.overviewJSON))
	mux.HandleFunc("GET /api/history", c.signedIn(c.historyJSON))
	mux.HandleFunc("GET /queues", c.signedIn(c.queues))
	mux.HandleFunc("GET /chat", c.signedIn(c.chat))
	mux.HandleFunc("POST /chat/weight", c.change(c.setWeight))
	mux.HandleFunc("POST /chat/pause", c.change(c.pauseChat))
	mux.HandleFunc("POST /queues/pause", c.change(c.pauseQueue))
	mux.HandleFunc("GET /dead", c.signedIn(c.dead))
	mux.HandleFunc("POST /dead/requeue", c.change(c.deadAction(true)))
	mux.HandleFunc("POST /dead/purge", c.change(c.deadAction(false)))
	mux.HandleFunc("GET /broadcasts", c.signedIn(c.broadcasts))
	mux.HandleFunc("GET /api/broadcasts", c.signedIn(c.broadcastsJSON))
	mux.HandleFunc("POST /broadcasts/stop", c.change(c.stopBroadcast))
	mux.HandleFunc("POST /broadcasts/compose", c.change(c.composeBroadcast))
	mux.HandleFunc("POST /broadcasts/confirm", c.change(c.confirmBroadcast))
	mux.HandleFunc("POST /broadcasts/cancel", c.change(c.cancelBroadcast))
	mux.HandleFunc("GET /audit", c.signedIn(c.audit))
	mux.HandleFunc("GET /processes", c.signedIn(c.processes))
	mux.HandleFunc("GET /job", c.signedIn(c.job))
	mux.HandleFunc("GET /jobs", c.signedIn(c.jobs))
	mux.HandleFunc("GET /weights", c.signedIn(c.weights))
	mux.HandleFunc("GET /broadcast", c.signedIn(c.broadcastDetail))
	c.mux = http.NewServeMux()
	c.mux.Handle("/", secure(mux))
}

// liveHeader marks a page's live refresh (console.js reads the page again
// every 2 s and replaces its .live parts): it takes no flash.
const liveHeader = "X-Console-Live"

// page is what every page's template gets.
type page struct {
	Title   string
	Nav     string
	CSRF    string
	Flash   string
	FlashOK bool
	Data    any
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, sid string, s session, name, title string, data any) {
	c.renderStatus(w, r, sid, s, http.StatusOK, name, title, data)
}

// renderStatus is render answering HTTP status code (e.g. 404 for a page
// of something that does not exist, still readable).
func (c *Console) renderStatus(w http.ResponseWriter, r *http.Request, sid string, s session, code int, name, title string, data any) {
	p := page{Title: title, Nav: name, CSRF: s.csrf, Data: data}
	if sid != "" && r.Header.Get(liveHeader) == "" { // a live refresh leaves the flash to the page shown
		p.Flash, p.FlashOK = c.sessions.takeFlash(sid)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := c.tmpl[name].Execute(w, p); err != nil {
		c.log.Error("console: render", slog.String("page", name), slog.Any("err", err))
	}
}

// fail answers an error reading the bot: 400 with its text for an
// *admin.InputError (a wrong filter or page); 503 with Retry-After for
// the store briefly unavailable (lanes.Unavailable: see unavailable),
// logged at WARN; else 500, logged at ERROR (a fault of the console or
// the bot, not of the moment).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ie *admin.InputError
	if errors.As(err, &ie) {
		http.Error(w, ie.Text, http.StatusBadRequest)
		return
	}
	if c.gone(w, r, err) || c.unavailable(w, r, err) {
		return
	}
	c.log.Error("console: page failed", slog.String("path", r.URL.Path), slog.Any("err", err))
	http.Error(w, "the console could not read the bot's state: "+err.Error(), http.StatusInternalServerError)
}

// StatusClientClosedRequest is what a request the client gave up on is
// answered (nginx's 499 "Client Closed Request"): nobody reads it, but a
// proxy's or an access log's count of 5xx stays the console's faults.
const StatusClientClosedRequest = 499

// gone answers err when it is the request's own context cancelled: the
// client went away (a tab closed, a reload, a timeout of its own) before
// the store answered. Not a fault of the console or of the store: logged
// at INFO (a change may or may not have been made: its audit entry says),
// answered StatusClientClosedRequest, no flash. It reports whether it did.
func (c *Console) gone(w http.ResponseWriter, r *http.Request, err error) bool {
	if !errors.Is(err, context.Canceled) || r.Context().Err() == nil {
		return false
	}
	c.log.Info("console: the client went away before the answer", slog.String("method", r.Method), slog.String("path", r.URL.Path))
	w.WriteHeader(StatusClientClosedRequest)
	return true
}

// RetryAfter is the Retry-After of a 503 answered while the store is
// briefly unavailable (seconds in the header): a BUSY script, a restart
// loading its data or a failover is over in a few seconds.
const RetryAfter = 5 * time.Second

// unavailable answers err when the store is briefly unavailable
// (lanes.Unavailable: BUSY, LOADING, READONLY, OOM, a connection refused
// or dropped, the page's store deadline passed ...) and reports whether it
// did: 503 Service Unavailable with Retry-After (RetryAfter), a short
// plain answer saying so (for a change: that it was not confirmed, to be
// checked before it is made again), JSON {"error", "retry_after_s"} for
// /api/ paths; logged at WARN with its cause. A change's flash is left
// alone: the change did not complete.
func (c *Console) unavailable(w http.ResponseWriter, r *http.Request, err error) bool {
	u, ok := lanes.Unavailable(err)
	if !ok {
		return false
	}
	c.log.Warn("console: the bot's store is briefly unavailable", slog.String("path", r.URL.Path),
		slog.String("cause", u.Cause), slog.Any("err", err))
	secs := int(RetryAfter.Seconds())
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	msg := fmt.Sprintf("The bot's store (Valkey) is briefly unavailable (%s): this page will work again in a few seconds; "+
		"try again in %d s.", u.Cause, secs)
	if r.Method == http.MethodPost {
		msg += " The change was not confirmed: once the page works again, check it before making the change again."
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": msg, "retry_after_s": secs})
		return true
	}
	http.Error(w, msg, http.StatusServiceUnavailable)
	return true
}

// done records the answer of a change as the session's flash and sends
// the browser back to the page (POST, redirect, GET). An *admin.InputError is
// shown as a refusal; the store briefly unavailable is answered 503
// (unavailable: no flash, no redirect); any other error is logged and
// shown as a failure.
func (c *Console) done(w http.ResponseWriter, r *http.Request, sid, back, answer string, err error) {
	if c.gone(w, r, err) || c.unavailable(w, r, err) {
		return
	}
	c.flash(r, sid, answer, err)
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// flash records the answer of a change as the session's flash: an
// *admin.InputError as a refusal (its text), any other error logged and
// shown as a failure, else answer as a success. It reports whether err
// was nil.
func (c *Console) flash(r *http.Request, sid, answer string, err error) bool {
	var ie *admin.InputError
	switch {
	case errors.As(err, &ie):
		c.sessions.setFlash(sid, ie.Text, false)
	case err != nil:
		c.log.Error("console: change failed", slog.String("path", r.URL.Path), slog.Any("err", err))
		c.sessions.setFlash(sid, "❌ Failed: "+err.Error(), false)
	default:
		if answer != "" {
			c.sessions.setFlash(sid, answer, true)
		}
		return true
	}
	return false
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, "", session{}, "login", "Sign in", r.URL.Query().Get("e"))
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	client := clientAddr(r, c.cfg.TrustedProxies)
	if err := r.ParseForm(); err == nil && tokenOK(r.PostForm.Get("token"), c.cfg.Token) {
		setCookie(w, r, c.sessions.create(), int(c.cfg.SessionTTL.Seconds()))
		c.log.Info("console: signed in", slog.String("client", client), slog.String("peer", r.RemoteAddr))
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if c.limiter.wrong(client) {
		c.log.Debug("console: sign-in refused (wrong token; over the limit)", slog.String("client", client), slog.String("peer", r.RemoteAddr))
		http.Error(w, "wrong token; too many wrong sign-ins from this address: wait a minute", http.StatusTooManyRequests)
		return
	}
	c.log.Warn("console: sign-in refused (wrong token)", slog.String("client", client), slog.String("peer", r.RemoteAddr))
	c.renderStatus(w, r, "", session{}, http.StatusUnauthorized, "login", "Sign in", "Wrong token.")
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, sid string) {
	c.sessions.delete(sid)
	setCookie(w, r, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// overviewData is the Overview page.
type overviewData struct {
	Queues     []admin.QueueView
	Limited    []flood.LimitedChat
	Backlog    oldest
	Last       Point
	GlobalRate int
}

type oldest struct {
	Pending, InFlight, Dead int
	Age                     string
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, sid string, s session) {
	qs, err := c.b.Queues(r.Context(), 0)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	bl, err := c.b.Backlog(r.Context())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	limited, err := c.b.LimitedChats(r.Context(), topLanes)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	d := overviewData{Queues: qs, Limited: limited, GlobalRate: c.b.GlobalRate(),
		Backlog: oldest{Pending: bl.Pending, InFlight: bl.InFlight, Dead: bl.Dead, Age: ago(bl.Oldest)}}
	if pts, _, _ := c.samples.points(); len(pts) > 0 {
		d.Last = pts[len(pts)-1]
	}
	c.render(w, r, sid, s, "overview", "Overview", d)
}

// overviewJSON is the Overview's live data: the chart's points (the
// deployment's rates), the send budgets' limits and the deployment's
// totals (figure -> summed over the live processes, e.g. "messages sent").
func (c *Console) overviewJSON(w http.ResponseWriter, r *http.Request, _ string, _ session) {
	pts, limits, totals := c.samples.points()
	queues := map[string]bool{}
	for _, p := range pts {
		for q := range p.Messages {
			queues[q] = true
		}
	}
	if len(limits) == 0 {
		limits = map[string]float64{"global": float64(c.b.GlobalRate())}
	}
	writeJSON(w, map[string]any{"points": pts, "queues": sortedKeys(queues), "budgets": sortedKeys(limits), "limits": limits,
		"totals": totals})
}

// historyJSON is the Overview's long chart: the samples of the last
// admin.HistoryCap periods kept in Valkey (every console writes and reads
// the same), oldest first, and the period in seconds.
func (c *Console) historyJSON(w http.ResponseWriter, r *http.Request, _ string, _ session) {
	ss, err := c.b.History(r.Context(), time.Now().Add(-admin.HistoryCap*c.cfg.HistoryEvery))
	if err != nil {
		c.fail(w, r, err)
		return
	}
	pts := make([]json.RawMessage, 0, len(ss))
	for _, s := range ss {
		if json.Valid([]byte(s.P)) {
			pts = append(pts, json.RawMessage(s.P))
		}
	}
	writeJSON(w, map[string]any{"every_s": c.cfg.HistoryEvery.Seconds(), "points": pts})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (c *Console) queues(w http.ResponseWriter, r *http.Request, sid string, s session) {
	qs, err := c.b.Queues(r.Context(), topLanes)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	bs, err := c.b.Budgets(r.Context())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, sid, s, "queues", "Queues", struct {
		Queues  []admin.QueueView
		Budgets []budgetView
		Scan    int
	}{qs, budgetViews(bs), admin.LaneScan})
}

// chatData is the Chat page: a search's results, or one chat.
type chatData struct {
	Query string
	Found []admin.ChatRef
	Chat  *admin.ChatView
	Error string
}

func (c *Console) chat(w http.ResponseWriter, r *http.Request, sid string, s session) {
	q := r.URL.Query()
	d := chatData{Query: strings.TrimSpace(q.Get("q"))}
	if idS := q.Get("id"); idS != "" {
		id, err := c.b.ParseChat(idS)
		if err != nil {
			d.Error = err.Error()
		} else {
			v, err := c.b.Chat(r.Context(), id)
			if err != nil {
				c.fail(w, r, err)
				return
			}
			d.Chat = &v
		}
	} else if d.Query != "" {
		found, err := c.b.FindChats(r.Context(), d.Query, chatsFound)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if len(found) == 1 {
			http.Redirect(w, r, "/chat?id="+strconv.FormatInt(found[0].ID, 10), http.StatusSeeOther)
			return
		}
		d.Found = found
		if len(found) == 0 {
			d.Error = "No chat found by that id, title or username."
		}
	}
	c.render(w, r, sid, s, "chat", "Chat", d)
}

func (c *Console) setWeight(w http.ResponseWriter, r *http.Request, sid string) {
	chat := r.PostForm.Get("chat")
	ans, err := c.b.SetWeight(r.Context(), admin.WhoConsole, chat, r.PostForm.Get("weight"))
	back := "/chat?id=" + url.QueryEscape(chat)
	if r.PostForm.Get("back") == "weights" {
		back = "/weights" // set from the Weights page: back to it
	} else if _, perr := c.b.ParseChat(chat); perr != nil {
		back = "/chat" // the answer says what is wrong with the id; the chat page would say it again
	}
	c.done(w, r, sid, back, ans, err)
}

// pauseChat pauses or resumes (form field op: "pause" or "resume") what
// the bot sends to a chat, audited as the console.
func (c *Console) pauseChat(w http.ResponseWriter, r *http.Request, sid string) {
	chat := r.PostForm.Get("chat")
	ans, err := c.b.PauseChat(r.Context(), admin.WhoConsole, chat, r.PostForm.Get("op") == "pause")
	c.done(w, r, sid, "/chat?id="+url.QueryEscape(chat), ans, err)
}

// pauseQueue pauses or resumes (form field op) a queue, audited as the
// console.
func (c *Console) pauseQueue(w http.ResponseWriter, r *http.Request, sid string) {
	ans, err := c.b.PauseQueue(r.Context(), admin.WhoConsole, r.PostForm.Get("queue"), r.PostForm.Get("op") == "pause")
	c.done(w, r, sid, "/queues", ans, err)
}

// deadData is the Dead letters page.
type deadData struct {
	Queues        []string
	Queue, Reason string
	Page          admin.DeadPage
	Prev          int // Skip of the previous page, -1 when none
	Skip          int
}

func (c *Console) dead(w http.ResponseWriter, r *http.Request, sid string, s session) {
	q := r.URL.Query()
	d := deadData{Queues: c.b.DeadQueues(), Queue: q.Get("queue"), Reason: strings.TrimSpace(q.Get("reason")), Prev: -1}
	if d.Queue == "" {
		d.Queue = d.Queues[len(d.Queues)-1]
	}
	d.Skip, _ = strconv.Atoi(q.Get("skip"))
	d.Skip = max(d.Skip, 0)
	page, err := c.b.DeadLetters(r.Context(), admin.DeadFilter{Queue: d.Queue, Reason: d.Reason, Skip: d.Skip, Limit: pageSize})
	if err != nil {
		c.fail(w, r, err)
		return
	}
	d.Page = page
	if d.Skip > 0 {
		d.Prev = max(d.Skip-pageSize, 0)
	}
	c.render(w, r, sid, s, "dead", "Dead letters", d)
}

// deadAction is POST /dead/requeue (requeue) or /dead/purge: the dead
// letter named by id, or every one matching queue and reason.
func (c *Console) deadAction(requeue bool) func(w http.ResponseWriter, r *http.Request, sid string) {
	return func(w http.ResponseWriter, r *http.Request, sid string) {
		f := admin.DeadFilter{Queue: r.PostForm.Get("queue"), Reason: strings.TrimSpace(r.PostForm.Get("reason"))}
		ids := r.PostForm["id"]
		var ans string
		var err error
		if requeue {
			ans, err = c.b.RequeueDead(r.Context(), admin.WhoConsole, f, ids)
		} else {
			ans, err = c.b.PurgeDead(r.Context(), admin.WhoConsole, f, ids)
		}
		back := "/dead?" + url.Values{"queue": {f.Queue}, "reason": {f.Reason}}.Encode()
		c.done(w, r, sid, back, ans, err)
	}
}

// broadcastRow is a broadcast as the Broadcasts page and its JSON show it.
type broadcastRow struct {
	ID        string `json:"id"`
	At        string `json:"at"`
	By        string `json:"by"`
	Total     int    `json:"total"`
	Sent      int    `json:"sent"`
	Failed    int    `json:"failed"`
	Cancelled int    `json:"cancelled"`
	Remaining int    `json:"remaining"`
	Running   bool   `json:"running"`
	Stopped   bool   `json:"stopped"`
	Known     bool   `json:"known"`
	Text      string `json:"text"`
	// Percent is the share of Total settled, sent or failed (0 to 100):
	// a stopped broadcast's cancelled copies are not counted, so one
	// stopped before it started shows 0, not 100.
	Percent   int    `json:"percent"`
	Mode      string `json:"mode"` // free, or paid with its Stars spent so far (0.1 a copy) or, scheduled, estimated (modeOf)
	Scheduled bool   `json:"scheduled"`
	// Plan is its start, pace and paid cap, e.g. "starts 2026-12-05 20:00
	// UTC (scheduled) · spread at about 0.35 messages/s · paid up to 40
	// copies, then free" ("" for an eager broadcast).
	Plan string `json:"plan"`
}

// planOf is how the Broadcasts page states p's plan at now: its start
// (lazy broadcasts; one stopped before its start "was to start … (stopped
// before it)"), its pace when spread, its paid cap.
func planOf(p notifier.Progress, now time.Time) string {
	var parts []string
	switch {
	case p.Scheduled(now) && p.Stopped:
		parts = append(parts, "was to start "+broadcast.StartTime(p.At)+" (stopped before it)")
	case p.Scheduled(now):
		parts = append(parts, "starts "+broadcast.StartTime(p.At)+" (scheduled)")
	case p.Lazy && !p.At.IsZero():
		parts = append(parts, "started "+broadcast.StartTime(p.At))
	}
	if p.Rate > 0 {
		parts = append(parts, broadcast.SpreadPhrase(p))
	}
	if p.Paid && p.PaidMax > 0 {
		parts = append(parts, fmt.Sprintf("paid up to %d copies, then free", p.PaidMax))
	}
	return strings.Join(parts, " · ")
}

// modeOf is how the Broadcasts page names p's mode at now: free, or paid
// with the Stars spent so far (0.1 a copy sent paid); a paid one not
// started yet (scheduled) with the cost the preview estimated instead, its
// copies (the audience planned, up to its paid cap) × 0.1 Star: "paid
// (about 0.3 Stars estimated: 3 copies × 0.1 Star)", never a spend of 0.0
// that reads as free.
func modeOf(p notifier.Progress, now time.Time) string {
	switch {
	case !p.Paid:
		return "free"
	case p.Scheduled(now) && !p.Stopped:
		copies := p.Total
		if p.PaidMax > 0 {
			copies = min(copies, p.PaidMax)
		}
		noun := "copies"
		if copies == 1 {
			noun = "copy"
		}
		return fmt.Sprintf("paid (about %s Stars estimated: %d %s × 0.1 Star)",
			notifier.FormatStars(copies*notifier.StarTenthsPerCopy), copies, noun)
	case p.Halted:
		return fmt.Sprintf("paid, halted (%.1f Stars)", float64(p.PaidSent)/10)
	case p.Free:
		return fmt.Sprintf("paid, then free (%.1f Stars)", float64(p.PaidSent)/10)
	}
	return fmt.Sprintf("paid (%.1f Stars)", float64(p.PaidSent)/10)
}

func (c *Console) broadcastRows(r *http.Request) ([]broadcastRow, error) {
	bs, err := c.b.Broadcasts(r.Context(), broadcastScan)
	if err != nil {
		return nil, err
	}
	out := make([]broadcastRow, 0, len(bs))
	now := time.Now()
	for _, b := range bs {
		out = append(out, rowOf(b, now))
	}
	return out, nil
}

// rowOf is broadcast b as the Broadcasts page and its detail page show it
// at now.
func rowOf(b admin.BroadcastView, now time.Time) broadcastRow {
	row := broadcastRow{ID: b.ID, By: admin.AuditEntry{Who: b.By}.Actor(), Total: b.Total, Sent: b.Sent,
		Cancelled: b.Cancelled, Remaining: max(b.Remaining, 0), Stopped: b.Stopped, Known: b.Known, Text: b.Text}
	if !b.At.IsZero() {
		row.At = b.At.UTC().Format(time.DateTime)
	}
	for _, n := range b.Failed {
		row.Failed += n
	}
	row.Running = b.Known && !b.Stopped && !b.Done()
	row.Mode = modeOf(b.Progress, now)
	row.Scheduled, row.Plan = b.Known && !b.Stopped && b.Scheduled(now), planOf(b.Progress, now)
	if b.Total > 0 { // sent or failed: a copy cancelled by a stop is not progress
		row.Percent = max(100*(b.Total-row.Remaining-b.Cancelled)/b.Total, 0)
	}
	return row
}

// broadcastCard is a scheduled or running broadcast's card on the
// Broadcasts page (template bc-card), with the session's CSRF token for
// its Stop.
type broadcastCard struct {
	Row  broadcastRow
	CSRF string
}

// broadcastsData is the Broadcasts page: the scheduled (not started yet),
// running and recent broadcasts, and the compose form (with its preview
// once asked for).
type broadcastsData struct {
	Scheduled, Running, Recent []broadcastRow
	// PaidOn: paid broadcasts are on (the form offers paid).
	PaidOn  bool
	Form    admin.Composition
	Preview *admin.ComposedPreview
}

func (c *Console) broadcasts(w http.ResponseWriter, r *http.Request, sid string, s session) {
	c.broadcastsPage(w, r, sid, s, broadcastsData{})
}

// broadcastsPage renders the Broadcasts page with d's form and preview.
func (c *Console) broadcastsPage(w http.ResponseWriter, r *http.Request, sid string, s session, d broadcastsData) {
	rows, err := c.broadcastRows(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for _, b := range rows {
		switch {
		case b.Running && b.Scheduled:
			d.Scheduled = append(d.Scheduled, b)
		case b.Running:
			d.Running = append(d.Running, b)
		default:
			d.Recent = append(d.Recent, b)
		}
	}
	d.PaidOn = c.b.PaidBroadcasts()
	c.render(w, r, sid, s, "broadcasts", "Broadcasts", d)
}

// composeBroadcast is POST /broadcasts/compose: the preview of the form's
// broadcast (text, mode free or paid, in and over as /broadcast writes
// them), shown on the Broadcasts page with its Confirm (nothing is sent
// yet), or what is wrong with it, the form kept as it was filled. The
// preview shown replaces the session's earlier one still unconfirmed (in
// another tab, or behind the browser's Back): its Confirm then answers
// broadcast.ToastReplaced and starts nothing, as an older Telegram
// preview's Send does after a newer /broadcast. A mode
// other than free, paid or none (the form without paid broadcasts has no
// mode) is answered 400 with what it wants, nothing previewed.
func (c *Console) composeBroadcast(w http.ResponseWriter, r *http.Request, sid string) {
	s, _ := c.sessions.get(sid) // signed in: change checked it
	f := r.PostForm
	mode := f.Get("mode")
	if mode != "" && mode != "free" && mode != "paid" {
		http.Error(w, fmt.Sprintf("❌ mode %q: want free or paid. Nothing was previewed.", mode), http.StatusBadRequest)
		return
	}
	d := broadcastsData{Form: admin.Composition{Text: f.Get("text"), Paid: mode == "paid", In: f.Get("in"), Over: f.Get("over"),
		Composer: "console:" + s.composer}}
	p, err := c.b.ComposeBroadcast(r.Context(), d.Form)
	if c.unavailable(w, r, err) {
		return
	}
	if c.flash(r, sid, "", err) {
		d.Preview = &p
	}
	c.broadcastsPage(w, r, sid, s, d)
}

// confirmBroadcast is POST /broadcasts/confirm: the preview's Confirm
// (its token) starts the broadcast, audited as console; a second
// confirmation of the same preview starts nothing more.
func (c *Console) confirmBroadcast(w http.ResponseWriter, r *http.Request, sid string) {
	ans, err := c.b.StartBroadcast(r.Context(), admin.WhoConsole, r.PostForm.Get("token"))
	c.done(w, r, sid, "/broadcasts", ans, err)
}

// cancelBroadcast is POST /broadcasts/cancel: the preview's Cancel (its
// token) decides the composed preview cancelled, as the Telegram preview's
// Cancel does, so that no later confirmation of it (browser Back, a
// second tab) starts anything; back to the Broadcasts page with the
// answer.
func (c *Console) cancelBroadcast(w http.ResponseWriter, r *http.Request, sid string) {
	ans, err := c.b.CancelBroadcast(r.Context(), admin.WhoConsole, r.PostForm.Get("token"))
	c.done(w, r, sid, "/broadcasts", ans, err)
}

func (c *Console) broadcastsJSON(w http.ResponseWriter, r *http.Request, _ string, _ session) {
	rows, err := c.broadcastRows(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, rows)
}

func (c *Console) stopBroadcast(w http.ResponseWriter, r *http.Request, sid string) {
	ans, err := c.b.StopBroadcast(r.Context(), admin.WhoConsole, strings.TrimSpace(r.PostForm.Get("id")))
	c.done(w, r, sid, "/broadcasts", ans, err)
}

// auditPage is how many audit entries a page shows.
const auditPage = 50

func (c *Console) audit(w http.ResponseWriter, r *http.Request, sid string, s session) {
	var es []admin.AuditEntry
	var err error
	before := r.URL.Query().Get("before")
	if before == "" {
		es, err = c.b.Audit(r.Context(), auditPage)
	} else {
		es, err = c.b.AuditBefore(r.Context(), before, auditPage)
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	d := struct {
		Entries []admin.AuditEntry
		Older   string // the before= of the next page, "" when this one is the last
		Paged   bool
	}{Entries: es, Paged: before != ""}
	if len(es) == auditPage {
		d.Older = es[len(es)-1].ID
	}
	c.render(w, r, sid, s, "audit", "Audit", d)
}

// processes is the Processes page: every live process of the deployment
// (each one's heartbeat in Valkey, internal/procs), with its roles,
// version and own figures.
func (c *Console) processes(w http.ResponseWriter, r *http.Request, sid string, s session) {
	ps, err := c.b.Processes(r.Context())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, sid, s, "processes", "Processes", ps)
}

// budgetView is one send budget on the Queues page: its name as /metrics
// labels it, its rate now of its configured ceiling (messages per Window),
// how it moves, and its last decrease (zero Lowered: never).
type budgetView struct {
	lanes.LearnedBudget
	Name string
}

// Held reports whether the budget's hold still caps it below its ceiling.
func (b budgetView) Held() bool { return b.Cap < b.Configured && time.Now().Before(b.HoldUntil) }

func budgetViews(bs []lanes.LearnedBudget) []budgetView {
	out := make([]budgetView, len(bs))
	for i, b := range bs {
		out[i] = budgetView{LearnedBudget: b, Name: notifier.BudgetName(b.Queue)}
	}
	return out
}
