package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Limits of the administration API (bounded reads: a page costs what it
// shows, whatever the number of lanes or dead letters).
const (
	// LaneScan is how many lanes of a queue /lanes and the console read to
	// find the deepest (lanes.Inspector.StatsScan).
	LaneScan = 5_000
	// DeadScan is how many dead letters of a queue a filtered read (by
	// reason, or by chat) looks at, newest first.
	DeadScan = 1_000
	// chatDeadScan is how many of each queue's newest dead letters the
	// Chat page looks through for the chat's.
	chatDeadScan = 200
)

// QueueView is one queue as /lanes shows it.
type QueueView struct {
	Name string
	lanes.Stats
	// Complete is false when the queue has more lanes with work than
	// LaneScan: Top is then the deepest of the first LaneScan read.
	Complete bool
	// Paused is why the queue is paused (PauseQueue), "" while it runs.
	Paused string
}

// Queues returns the update queue and the outbound queues (reply, notify),
// each with its top deepest lanes (at most LaneScan read per queue).
// Errors: the server's.
func (ad *Admin) Queues(ctx context.Context, top int) ([]QueueView, error) {
	var out []QueueView
	for _, src := range ad.deadSources(true) {
		st, complete, err := src.in.StatsScan(ctx, src.q, top, LaneScan)
		if err != nil {
			return nil, fmt.Errorf("admin: queue %s: %w", src.q, err)
		}
		paused, err := src.in.PausedQueues(ctx)
		if err != nil {
			return nil, fmt.Errorf("admin: queue %s: %w", src.q, err)
		}
		out = append(out, QueueView{Name: src.q, Stats: st, Complete: complete, Paused: paused[src.q]})
	}
	return out, nil
}

// PauseQueue pauses (pause true) or resumes queue (update, reply, paid or
// notify: lanes.Inspector.PauseQueue/ResumeQueue) for who, audited, and
// returns the answer to show. A paused queue is served by no process until
// resumed: its jobs wait, enqueues still land, leases in flight still
// settle. Pausing a paused queue or resuming a running one changes nothing
// and is not audited. Errors: an *InputError for an unknown queue; the
// server's.
func (ad *Admin) PauseQueue(ctx context.Context, who, queue string, pause bool) (string, error) {
	for _, src := range ad.deadSources(true) {
		if src.q != queue {
			continue
		}
		var changed bool
		var err error
		if pause {
			changed, err = src.in.PauseQueue(ctx, queue, "paused by "+who)
		} else {
			changed, err = src.in.ResumeQueue(ctx, queue)
		}
		switch {
		case err != nil:
			return "", err
		case !changed && pause:
			return fmt.Sprintf("Queue %s is already paused.", queue), nil
		case !changed:
			return fmt.Sprintf("Queue %s is not paused.", queue), nil
		case pause:
			return fmt.Sprintf("⏸ Queue %s paused: nothing of it is sent until it is resumed.", queue), ad.audit.Record(ctx, who, ActionQueuePaused, queue)
		default:
			return fmt.Sprintf("▶️ Queue %s resumed.", queue), ad.audit.Record(ctx, who, ActionQueueResumed, queue)
		}
	}
	return "", inputErr(fmt.Sprintf("❌ No queue %q.", queue))
}

// PauseChat pauses (pause true) or resumes everything the bot sends to
// chat (its lane in every outbound queue: lanes.Inspector.PauseGroup /
// ResumeGroup) for who, audited, and returns the answer to show; its
// updates are still handled, and their answers wait with the rest. A
// resume also ends a 429's park of the chat. Errors: an *InputError for a
// bad chat id (as /weight's); the server's.
func (ad *Admin) PauseChat(ctx context.Context, who, chat string, pause bool) (string, error) {
	id, bad := parseChatID(chat)
	if bad != "" {
		return "", inputErr(bad)
	}
	group := tgjob.Group(id)
	if pause {
		if err := ad.out.PauseGroup(ctx, group); err != nil {
			return "", err
		}
		return fmt.Sprintf("⏸ Chat %d paused: nothing is sent to it until it is resumed.", id), ad.audit.Record(ctx, who, ActionChatPaused, fmt.Sprintf("chat %d", id))
	}
	if err := ad.out.ResumeGroup(ctx, group); err != nil {
		return "", err
	}
	return fmt.Sprintf("▶️ Chat %d resumed.", id), ad.audit.Record(ctx, who, ActionChatResumed, fmt.Sprintf("chat %d", id))
}

// Budgets returns the outbound send budgets' learned rates (the store's
// global one, or reply, bulk and paid: lanes.Inspector.Learned), as /lanes
// shows them. Errors: the server's.
func (ad *Admin) Budgets(ctx context.Context) ([]lanes.LearnedBudget, error) {
	bs, err := ad.out.Learned(ctx)
	if err != nil {
		return nil, fmt.Errorf("admin: budgets: %w", err)
	}
	return bs, nil
}

// Backlog returns the update queue's counts and its oldest unhandled
// update's recording time.
func (ad *Admin) Backlog(ctx context.Context) (intake.Backlog, error) {
	return ad.cfg.Inbox.Backlog(ctx)
}

// Gatherer is the app's Prometheus registry (what /metrics serves).
func (ad *Admin) Gatherer() prometheus.Gatherer { return ad.cfg.Gatherer }

// Processes returns the deployment's live processes, every role on every
// host sharing the Valkey (procs.Registry.List: at most procs.MaxProcs,
// sorted by id); none when Config.Processes is nil. Errors: Valkey's.
func (ad *Admin) Processes(ctx context.Context) ([]procs.Process, error) {
	if ad.cfg.Processes == nil {
		return nil, nil
	}
	return ad.cfg.Processes.List(ctx)
}

// LimitedChats are the chats being limited by the intake's flood limits
// (an update of theirs dropped within the last FLOOD_WINDOW), at most n,
// soonest Until first (n 0: all), as /lanes lists them; none when the
// limits are off. Errors: Valkey's.
func (ad *Admin) LimitedChats(ctx context.Context, n int) ([]flood.LimitedChat, error) {
	if ad.cfg.Flood == nil {
		return nil, nil
	}
	return ad.cfg.Flood.Limited(ctx, ad.cfg.Client, time.Now(), n)
}

// GlobalRate is the bot's global budget, messages/s (TELEGRAM_GLOBAL_RATE).
func (ad *Admin) GlobalRate() int { return ad.cfg.Rates.GlobalRate }

// ParseChat parses a chat id as /weight does; the error is an *InputError
// with /weight's answer.
func (ad *Admin) ParseChat(s string) (int64, error) {
	id, bad := parseChatID(s)
	if bad != "" {
		return 0, inputErr(bad)
	}
	return id, nil
}

// SetWeight is "/weight <chat> <weight>" by who: the same validation
// (an *InputError with /weight's answer, e.g. for weight "0"), the same
// audit entry and the same answer.
func (ad *Admin) SetWeight(ctx context.Context, who, chat, weight string) (string, error) {
	id, bad := parseChatID(chat)
	if bad == "" {
		var w int
		if w, bad = parseWeight(weight); bad == "" {
			return ad.setWeight(ctx, who, id, w)
		}
	}
	return "", inputErr(bad)
}

// setWeight sets chat's weight w for who and returns /weight's answer; an
// unchanged weight is neither written nor audited.
func (ad *Admin) setWeight(ctx context.Context, who string, chat int64, w int) (string, error) {
	group := tgjob.Group(chat)
	// A weight is the chat's (lanes keeps one per group, read by every
	// queue's claim): its share of everything the bot sends it, replies and
	// notifications alike, while the global rate binds.
	old, err := ad.out.Weight(ctx, group)
	if err != nil {
		return "", err
	}
	if w == old {
		return fmt.Sprintf("Chat %d: weight is already %d; unchanged.", chat, old), nil
	}
	if err := ad.out.SetWeight(ctx, group, w); err != nil {
		return "", err
	}
	if err := ad.audit.Record(ctx, who, ActionWeightSet, fmt.Sprintf("chat %d: weight %d (was %d)", chat, w, old)); err != nil {
		return "", err
	}
	return fmt.Sprintf("✅ Chat %d: weight set to %d (was %d), for replies and notifications alike.", chat, w, old), nil
}

// ChatRef is a chat as the bot knows it: its id and name (title, or the
// user's name and @username; "" when never seen named).
type ChatRef = chats.Ref

// FindChats finds chats by id (a number: that chat) or by the start of
// their title or username (at most n, in name order).
func (ad *Admin) FindChats(ctx context.Context, q string, n int) ([]ChatRef, error) {
	q = strings.TrimSpace(q)
	if id, err := strconv.ParseInt(q, 10, 64); err == nil && id != 0 {
		name, err := ad.cfg.Directory.Name(ctx, id)
		if err != nil {
			return nil, err
		}
		return []ChatRef{{ID: id, Name: name}}, nil
	}
	return ad.cfg.Directory.Find(ctx, q, n)
}

// ChatLane is a chat's lane in one queue.
type ChatLane struct {
	Queue string
	lanes.LaneStats
}

// ChatView is what the console shows of one chat.
type ChatView struct {
	ChatRef
	Known  bool // in the broadcast audience (it wrote to the bot)
	Weight int
	// Paused: everything sent to it waits (PauseChat), in every outbound
	// queue.
	Paused bool
	// Pace is the chat's pace by Telegram's limits: messages per second
	// for a private chat, per minute for a group.
	Pace string
	// Lanes are its lanes in the update, reply and notify queues.
	Lanes []ChatLane
	// Dead are its dead letters among the 200 newest of each queue.
	Dead []DeadView
	// Game is its running game's board ("" when none), Playing its status.
	Game       string
	GameStatus string
}

// Chat returns chat id's view: O(queues x 200 dead letters read), whatever
// the number of lanes.
func (ad *Admin) Chat(ctx context.Context, id int64) (ChatView, error) {
	v := ChatView{ChatRef: ChatRef{ID: id}}
	var err error
	if v.Name, err = ad.cfg.Directory.Name(ctx, id); err != nil {
		return v, err
	}
	if v.Known, err = ad.cfg.Audience.IsKnown(ctx, id); err != nil {
		return v, err
	}
	group := tgjob.Group(id)
	if v.Weight, err = ad.out.Weight(ctx, group); err != nil {
		return v, err
	}
	if id > 0 {
		v.Pace = fmt.Sprintf("%d messages/s (private chat)", ad.cfg.Rates.ChatRate)
	} else {
		v.Pace = fmt.Sprintf("%d messages/min (group)", ad.cfg.Rates.GroupRate)
	}
	for _, src := range ad.deadSources(true) {
		rows, err := src.in.Lanes(ctx, src.q, group)
		if err != nil {
			return v, fmt.Errorf("admin: chat %d lanes: %w", id, err)
		}
		v.Lanes = append(v.Lanes, ChatLane{Queue: src.q, LaneStats: rows[0]})
		if src.in == ad.out && rows[0].Indefinite {
			v.Paused = true
		}
		page, err := ad.deadPage(ctx, DeadFilter{Queue: src.q, Chat: group, Limit: dlqShown, Scan: chatDeadScan})
		if err != nil {
			return v, err
		}
		v.Dead = append(v.Dead, page.Letters...)
	}
	slices.SortStableFunc(v.Dead, func(x, y DeadView) int { return y.At.Compare(x.At) })
	v.Dead = v.Dead[:min(len(v.Dead), dlqShown)]
	st, err := ad.cfg.Games.Current(ctx, id)
	switch {
	case errors.Is(err, gamestore.ErrNoGame):
	case err != nil:
		return v, err
	default:
		v.Game, v.GameStatus = st.Board(), string(st.Status)
	}
	return v, nil
}

// DeadFilter selects dead letters of one queue.
type DeadFilter struct {
	Queue  string // update, reply or notify ("": every outbound queue, for requeue and purge of all)
	Reason string // only reasons starting with this, e.g. "forbidden" ("": any)
	Chat   string // only this chat's lane ("": any)
	Skip   int    // a page: the Skip newest matching are left out
	Limit  int    // at most this many (>= 1)
	// Scan bounds how many letters a filtered read looks at from Skip on
	// (0: DeadScan).
	Scan int
	// skipCopies leaves out a broadcast's copies (isCopy), counted in
	// DeadPage.copies: /dlq requeue's read (withoutCopies says why).
	skipCopies bool
}

// DeadView is one dead letter of a queue, with the text it carried when
// it is a message (tgjob payload).
type DeadView struct {
	Queue string
	lanes.DeadLetter
	Text string
}

// DeadPage is one page of dead letters, newest first.
type DeadPage struct {
	Letters []DeadView
	// Next is the Skip of the next page, -1 when there is none.
	Next int
	// Total is the queue's dead letters (all reasons).
	Total int
	// Partial is set when a filter stopped at DeadScan letters read.
	Partial bool
	// copies counts the broadcast copies a read with skipCopies left out.
	copies int
}

// DeadQueues are the queues with dead letters, the update queue first.
func (ad *Admin) DeadQueues() []string {
	var out []string
	for _, s := range ad.deadSources(true) {
		out = append(out, s.q)
	}
	return out
}

// DeadLetters returns a page of f.Queue's dead letters (f.Queue required).
// Unfiltered a page costs O(log n + Limit); filtered by reason or chat it
// reads at most DeadScan letters from f.Skip (Partial then says so).
func (ad *Admin) DeadLetters(ctx context.Context, f DeadFilter) (DeadPage, error) {
	if _, ok := ad.deadSource(f.Queue); !ok {
		return DeadPage{}, inputErr(fmt.Sprintf("❌ Unknown queue %q: one of %s.", f.Queue, strings.Join(ad.DeadQueues(), ", ")))
	}
	return ad.deadPage(ctx, f)
}

func (ad *Admin) deadSource(q string) (deadSource, bool) {
	for _, s := range ad.deadSources(true) {
		if s.q == q {
			return s, true
		}
	}
	return deadSource{}, false
}

func (ad *Admin) deadPage(ctx context.Context, f DeadFilter) (DeadPage, error) {
	src, ok := ad.deadSource(f.Queue)
	if !ok {
		return DeadPage{}, fmt.Errorf("%w: queue %q", lanes.ErrInvalid, f.Queue)
	}
	limit := max(f.Limit, 1)
	page := DeadPage{Next: -1}
	st, err := src.in.Stats(ctx, src.q, 0)
	if err != nil {
		return page, err
	}
	page.Total = st.Dead
	filtered := f.Reason != "" || f.Chat != "" || f.skipCopies
	chunk := limit + 1 // one more: is there a next page?
	if filtered {
		chunk = 200
	}
	skip, read := max(f.Skip, 0), 0
	for {
		ds, err := src.in.DeadLetters(ctx, src.q, lanes.DeadQuery{Newest: chunk, Skip: skip})
		if err != nil {
			return page, fmt.Errorf("admin: dead letters of %s: %w", src.q, err)
		}
		for i, d := range ds {
			if (f.Reason != "" && !strings.HasPrefix(reasonOf(d), f.Reason)) || (f.Chat != "" && d.Group != f.Chat) {
				continue
			}
			if f.skipCopies && isCopy(src.q, d) {
				page.copies++
				continue
			}
			if len(page.Letters) == limit {
				page.Next = skip + i
				return page, nil
			}
			page.Letters = append(page.Letters, deadView(src.q, d))
		}
		skip += len(ds)
		read += len(ds)
		if len(ds) < chunk {
			return page, nil
		}
		if read >= cmp.Or(f.Scan, DeadScan) {
			page.Partial, page.Next = true, skip
			return page, nil
		}
	}
}

// reasonOf is a dead letter's reason as /dlq shows it.
func reasonOf(d lanes.DeadLetter) string { return cmp.Or(d.Reason, "unknown") }

func deadView(q string, d lanes.DeadLetter) DeadView {
	v := DeadView{Queue: q, DeadLetter: d}
	v.Reason = reasonOf(d)
	if q != intake.QueueName {
		if j, err := tgjob.Decode(d.Payload); err == nil {
			v.Text = j.Text
		}
	}
	return v
}

// matching returns the ids of up to dlqBatch dead letters of queue q that
// f selects (f.Queue aside), newest first: the given ids when there are.
func (ad *Admin) matching(ctx context.Context, q string, f DeadFilter, ids []string) ([]lanes.JobID, error) {
	js, _, err := ad.matchingRead(ctx, q, f, ids)
	return js, err
}

// requeueScan is how many of a queue's newest dead letters /dlq requeue
// (no ids) looks at for letters that are not a broadcast's copies: the
// copies it keeps dead stay the newest, so a read of dlqBatch would find
// the same ones on every call and never reach an older reply behind them.
const requeueScan = 10 * dlqBatch

// matchingRead is matching, with f.skipCopies honoured on a read (no
// ids): it also returns that read's page (its copies left out, whether it
// stopped at its Scan).
func (ad *Admin) matchingRead(ctx context.Context, q string, f DeadFilter, ids []string) ([]lanes.JobID, DeadPage, error) {
	if len(ids) > 0 {
		out := make([]lanes.JobID, 0, len(ids))
		for _, id := range ids[:min(len(ids), dlqBatch)] {
			j := lanes.JobID(id)
			if j.Validate() != nil {
				return nil, DeadPage{}, inputErr(fmt.Sprintf("❌ %q is not a dead letter's id.", id))
			}
			out = append(out, j)
		}
		return out, DeadPage{}, nil
	}
	f.Queue, f.Skip, f.Limit = q, 0, dlqBatch
	page, err := ad.deadPage(ctx, f)
	if err != nil {
		return nil, page, err
	}
	out := make([]lanes.JobID, len(page.Letters))
	for i, d := range page.Letters {
		out[i] = d.ID
	}
	return out, page, nil
}

// dlqQueues are the queues an action on dead letters of f.Queue covers:
// that one, or ("") every one (with updates, the update queue too).
func (ad *Admin) dlqQueues(f DeadFilter, updates bool) ([]deadSource, error) {
	if f.Queue == "" {
		return ad.deadSources(updates), nil
	}
	src, ok := ad.deadSource(f.Queue)
	if !ok {
		return nil, inputErr(fmt.Sprintf("❌ Unknown queue %q: one of %s.", f.Queue, strings.Join(ad.DeadQueues(), ", ")))
	}
	if !updates && src.q == intake.QueueName {
		return nil, inputErr("❌ " + dlqUpdatesNote)
	}
	return []deadSource{src}, nil
}

// RequeueDead is /dlq requeue by who: the dead letters ids of f.Queue, or
// (no ids) up to dlqBatch per queue matching f (every outbound queue when
// f.Queue is ""), back on their lanes; audited as /dlq requeue's, with its
// answer. Dead updates are not requeued (dlqUpdatesNote), nor are a
// broadcast's copies (withoutCopies: the answer counts them).
func (ad *Admin) RequeueDead(ctx context.Context, who string, f DeadFilter, ids []string) (string, error) {
	srcs, err := ad.dlqQueues(f, false)
	if err != nil {
		return "", err
	}
	if len(ids) > 0 && f.Queue == "" {
		return "", inputErr("❌ Which queue are these dead letters of?")
	}
	return ad.requeueDead(ctx, who, srcs, f, ids)
}

func (ad *Admin) requeueDead(ctx context.Context, who string, srcs []deadSource, f DeadFilter, ids []string) (string, error) {
	total, kept, partial := 0, 0, false
	var per []string
	f.skipCopies, f.Scan = true, requeueScan
	for _, src := range srcs {
		js, page, err := ad.matchingRead(ctx, src.q, f, ids)
		if err != nil {
			return "", err
		}
		js, copies, err := withoutCopies(ctx, src, js)
		if err != nil {
			return "", err
		}
		kept += copies + page.copies
		partial = partial || page.Partial
		n, err := src.in.RequeueDead(ctx, src.q, js...)
		if err != nil {
			return "", err
		}
		total += n
		per = append(per, fmt.Sprintf("%s %d", src.q, n))
	}
	notes := keptNote(kept, partial) + " " + dlqUpdatesNote
	if total == 0 {
		return "No dead letters to requeue." + notes, nil
	}
	if err := ad.audit.Record(ctx, who, ActionDeadRequeued, fmt.Sprintf("%d (%s)", total, strings.Join(per, ", "))); err != nil {
		return "", err
	}
	return fmt.Sprintf("✅ Requeued %s (%s).%s", tgtext.Plural(total, "dead letter", "dead letters"), strings.Join(per, ", "), notes), nil
}

// keptNote is /dlq requeue's word on the kept broadcast copies (none: ""),
// "at least" when a queue's read stopped at requeueScan letters.
func keptNote(kept int, partial bool) string {
	if kept == 0 {
		return ""
	}
	n := tgtext.Plural(kept, "broadcast copy", "broadcast copies")
	if partial {
		n = fmt.Sprintf("at least %s (of the newest %d per queue looked at)", n, requeueScan)
	}
	return " " + n + " kept dead: " + dlqCopiesNote
}

// dlqCopiesNote says why /dlq requeue leaves a broadcast's copies dead.
const dlqCopiesNote = "a broadcast counts its failed copies in its progress and sends nothing after its stop (send a new broadcast to reach those chats; /dlq purge deletes the copies)."

// isCopy reports whether dead letter d of queue q is a broadcast's copy
// (an outbound message whose tgjob payload names a broadcast).
func isCopy(q string, d lanes.DeadLetter) bool {
	if q == intake.QueueName {
		return false
	}
	j, err := tgjob.Decode(d.Payload)
	return err == nil && j.Broadcast != ""
}

// withoutCopies splits the dead letters js of src into those /dlq requeue
// puts back and the broadcast copies (tgjob.Job.Broadcast set) it keeps
// dead, returning the first and how many of the second. A copy is kept
// because its broadcast already counted it failed (notifier FailedTally:
// Failed[reason], once per job id), so a requeued copy that was then
// delivered would be counted sent as well and the counts would no longer
// add up to the audience, and because a stopped broadcast sends nothing
// after its stop (issue 27). An id that is no dead letter (requeued or
// purged meanwhile) is passed on, for RequeueDead to skip. Errors: the
// store's, reading the letters.
func withoutCopies(ctx context.Context, src deadSource, js []lanes.JobID) ([]lanes.JobID, int, error) {
	if len(js) == 0 || src.q == intake.QueueName {
		return js, 0, nil
	}
	ds, err := src.in.DeadLetters(ctx, src.q, lanes.DeadQuery{IDs: js})
	if err != nil {
		return nil, 0, fmt.Errorf("admin: requeue dead: %w", err)
	}
	copies := make(map[lanes.JobID]bool, len(ds))
	for _, d := range ds {
		if isCopy(src.q, d) {
			copies[d.ID] = true
		}
	}
	if len(copies) == 0 {
		return js, 0, nil
	}
	out := make([]lanes.JobID, 0, len(js)-len(copies))
	for _, id := range js {
		if !copies[id] {
			out = append(out, id)
		}
	}
	return out, len(copies), nil
}

// PurgeDead is /dlq purge by who: deletes the dead letters ids of f.Queue,
// or (no ids) up to dlqBatch per queue matching f (every queue, the update
// queue included, when f.Queue is ""); audited as /dlq purge's, with its
// answer.
func (ad *Admin) PurgeDead(ctx context.Context, who string, f DeadFilter, ids []string) (string, error) {
	srcs, err := ad.dlqQueues(f, true)
	if err != nil {
		return "", err
	}
	if len(ids) > 0 && f.Queue == "" {
		return "", inputErr("❌ Which queue are these dead letters of?")
	}
	return ad.purgeDead(ctx, who, srcs, f, ids)
}

func (ad *Admin) purgeDead(ctx context.Context, who string, srcs []deadSource, f DeadFilter, ids []string) (string, error) {
	total := 0
	var per []string
	for _, src := range srcs {
		var n int
		var err error
		if len(ids) == 0 && f.Reason == "" && f.Chat == "" {
			n, err = src.in.PurgeDead(ctx, src.q, 0, dlqBatch)
		} else {
			var js []lanes.JobID
			if js, err = ad.matching(ctx, src.q, f, ids); err == nil {
				n, err = src.in.DeleteDead(ctx, src.q, js...)
			}
		}
		if err != nil {
			return "", err
		}
		total += n
		per = append(per, fmt.Sprintf("%s %d", src.q, n))
	}
	if total == 0 {
		return "No dead letters to purge.", nil
	}
	if err := ad.audit.Record(ctx, who, ActionDeadPurged, fmt.Sprintf("%d (%s)", total, strings.Join(per, ", "))); err != nil {
		return "", err
	}
	return fmt.Sprintf("🗑 Purged %d dead letters (%s).", total, strings.Join(per, ", ")), nil
}

// BroadcastView is a broadcast as the console lists it.
type BroadcastView struct {
	notifier.Progress
	At    time.Time // when it was sent (its audit entry)
	By    string    // who sent it
	Text  string    // its progress text (as the progress message shows it)
	Known bool      // false when its progress expired (more than a day ago)
}

// Broadcasts lists the broadcasts sent among the last n audit entries,
// newest first, with their progress: O(n).
func (ad *Admin) Broadcasts(ctx context.Context, n int) ([]BroadcastView, error) {
	es, err := ad.audit.Last(ctx, n)
	if err != nil {
		return nil, err
	}
	var out []BroadcastView
	for _, e := range es {
		id, ok := broadcast.SentID(e.Action, e.Detail)
		if !ok {
			continue
		}
		v, err := ad.cfg.Broadcasts.View(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, BroadcastView{Progress: v.Progress, At: e.At, By: e.Who, Text: v.Text, Known: v.Known})
	}
	return out, nil
}

// StopBroadcast is "/broadcast stop <id>" by who, with its answer (the
// same for an unknown or finished broadcast) and audit entry.
func (ad *Admin) StopBroadcast(ctx context.Context, who, id string) (string, error) {
	return ad.cfg.Broadcasts.Stop(ctx, who, id)
}

// Composition is a broadcast composed in the console: text, free or
// paid, and when it starts and how long it is spread over, written as
// /broadcast writes them ("2h", "90m", "1d12h"; "" for none), and its
// Composer ("console:<session>"), whose earlier unconfirmed preview the
// new one replaces.
type Composition = broadcast.Composition

// ComposedPreview is a composed broadcast's preview: the Telegram
// preview's text and the label of its one confirmation, and the token
// that confirms it (StartBroadcast; "" when it cannot be sent as
// composed).
type ComposedPreview = broadcast.Preview

// PaidBroadcasts reports whether paid broadcasts are on
// (TELEGRAM_PAID_BROADCAST_RATE > 0): only then can one be composed paid.
func (ad *Admin) PaidBroadcasts() bool { return ad.cfg.Rates.PaidBroadcastRate > 0 }

// ComposeBroadcast is "/broadcast [in <d>] [over <d>] <text>" from the
// console: the same preview (count, time, for a paid one the Stars cost
// and balance, start and pace), stored for StartBroadcast for
// broadcast.PreviewLifetime; nothing is sent. Errors: an *InputError with
// /broadcast's answer for what it refuses (empty text, a bad plan, paid
// with paid broadcasts off, no known chats); the store's.
func (ad *Admin) ComposeBroadcast(ctx context.Context, c Composition) (ComposedPreview, error) {
	p, err := ad.cfg.Broadcasts.Compose(ctx, c)
	return p, refusal(err)
}

// StartBroadcast is the confirmation of composed preview token by who: the
// Telegram preview's Send (the same broadcast start and audit entry,
// ActionSent), once per preview however often it is confirmed; it
// returns the answer ("📣 Sending to 3 chats: broadcast bc_….", "📣 Started
// to 3 chats, spread over 2 h: …", "🕘 Scheduled for …", "Already sent
// (broadcast bc_…).", and for a preview that will not start "This
// broadcast was cancelled: nothing was sent." or "This preview was
// replaced by a newer one: nothing was sent. Confirm the newest."
// (broadcast.ToastReplaced)). Errors: an
// *InputError for an unknown or expired preview (nothing sent); the
// store's.
func (ad *Admin) StartBroadcast(ctx context.Context, who, token string) (string, error) {
	_, answer, err := ad.cfg.Broadcasts.StartComposed(ctx, who, token)
	return answer, refusal(err)
}

// CancelBroadcast is the Cancel of composed preview token by who: the
// Telegram preview's Cancel (decided once, not audited: nothing was
// started), after which no confirmation starts it (StartBroadcast answers
// "This broadcast was cancelled: nothing was sent."); it returns the
// answer ("❌ Broadcast cancelled: nobody received it.", or that it was
// cancelled or replaced by a newer preview before). Errors: an *InputError for an unknown or expired
// preview or one confirmed already (stop its broadcast instead); the
// store's.
func (ad *Admin) CancelBroadcast(ctx context.Context, who, token string) (string, error) {
	answer, err := ad.cfg.Broadcasts.CancelComposed(ctx, who, token)
	return answer, refusal(err)
}

// refusal is err with a *broadcast.RefusedError made an *InputError (its
// answer), other errors as they are.
func refusal(err error) error {
	if re, ok := errors.AsType[*broadcast.RefusedError](err); ok {
		return inputErr(re.Text)
	}
	return err
}

// Audit returns the last n admin actions, newest first (what /audit shows).
// Errors: the server's.
func (ad *Admin) Audit(ctx context.Context, n int) ([]AuditEntry, error) {
	return ad.audit.Last(ctx, n)
}

// AuditBefore returns the n admin actions before the one of id (an
// AuditEntry.ID), newest first: the next page of Audit. Errors: an
// *InputError for a malformed id; the server's.
func (ad *Admin) AuditBefore(ctx context.Context, id string, n int) ([]AuditEntry, error) {
	return ad.audit.Before(ctx, id, n)
}
