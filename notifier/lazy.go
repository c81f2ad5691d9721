package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/luascript"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A lazy broadcast is one durable record ({T}:n:bc:<id>: its text and
// options stored once as the copies' template, a cursor over the audience,
// its counts) and a short window of copies on the chats' lanes: a Filler
// makes the copies a step at a time, only as far ahead of what the budget
// can send as FillConfig.Lead, reading the audience from Valkey in steps
// (Audience.Walk), never whole. Each step is one atomic enqueue that also
// moves the cursor (lanes.AtCursor): a step is enqueued once however
// often a process crashes or several fill at once, so a broadcast resumes
// from its cursor and neither loses nor repeats copies. A copy's payload
// carries only the broadcast id, the chat and the part (tgjob.KindCopy);
// the worker reads the text from the record (ExpandCopy). The copies still
// waiting are tracked in {T}:n:bc:<id>:out (what StopBroadcast cancels and
// ContinueFree moves; a settled copy leaves it), so what a broadcast holds
// in Valkey is its record plus the window, whatever its audience.

// Audience is what a lazy broadcast walks: every chat it reaches, read in
// steps from the store (internal/chats implements it over its buckets).
type Audience interface {
	// Walk returns at most max chats of the audience that come after
	// cursor ("" the start), in the walk's order, and the cursor after
	// them ("" once the walk is over). A chat added to the audience during
	// a walk may or may not be returned; none is returned twice. Errors:
	// the store's.
	Walk(ctx context.Context, cursor string, max int) ([]int64, string, error)
	// Remaining is how many chats a walk from cursor would return now
	// ("" the start: Size). Errors: a malformed cursor; the store's.
	Remaining(ctx context.Context, cursor string) (int, error)
	// Size is how many chats a walk returns now (before inactive chats
	// are left out). Errors: the store's.
	Size(ctx context.Context) (int, error)
	// Knows reports whether chat is in the audience (so its own turn in
	// the walk reaches it). Errors: the store's.
	Knows(ctx context.Context, chat int64) (bool, error)
}

// Plan says when a lazy broadcast starts and how fast it goes.
type Plan struct {
	// At is when the first copy may be sent (zero or past: now).
	At time.Time
	// Spread, when > 0, spreads the copies evenly over this long from At
	// (the rate shown in the preview: copies ÷ Spread), never faster than
	// the budget; 0 sends as fast as the budget allows. The pace is made
	// again every FillConfig.Replan from the copies left and the time
	// left, so chats that join during the spread do not stretch it past
	// its end (after the end: the budget's pace).
	Spread time.Duration
	// Texts are the texts of some languages (a language as
	// FillConfig.Languages names a chat's: "ru", "pt-BR") that the chats
	// of that language get instead of the message's text, which the
	// others get (the default). Each must split into as many parts as the
	// default (ErrInvalid otherwise: every chat gets the same number of
	// copies). Nil: one text for all.
	Texts map[string]string
	// PaidMax, on a paid broadcast, is the most copies sent paid (what the
	// Stars balance covers); the copies after them go free on the notify
	// queue. 0: every copy paid.
	PaidMax int
}

// FillConfig tunes a Filler; zero fields take the defaults.
type FillConfig struct {
	// Lead is how far ahead of its budget a broadcast's copies are made
	// (default 2 s): the window on the lanes is the queue's rate × Lead
	// copies, at least one step.
	Lead time.Duration
	// Rates are the queues' budgets in copies per second (tgjob.QueueNotify,
	// tgjob.QueuePaid); a queue without one takes 30.
	Rates map[string]int
	// StepChats is how many chats one step covers (default and most:
	// lanes.MaxCursorItems ÷ the text's parts).
	StepChats int
	// Tick is how often Run looks for work when nothing wakes it
	// (default DefaultTick).
	Tick time.Duration
	// Replan is how often a running broadcast's total and its spread's
	// pace are made again from the audience left after its cursor
	// (Audience.Remaining; default 5 s): chats that join during a walk
	// and land ahead of the cursor get the broadcast, and the counts and
	// the pace follow them.
	Replan time.Duration
	// Languages returns the language of each of chats, in order ("" or
	// a language without a text of its own: the default text), read in one
	// round trip for a step (chats.Languages.Of). Only a broadcast with
	// Plan.Texts calls it; Start refuses one without it. Errors: the
	// store's.
	Languages func(ctx context.Context, chats []int64) ([]string, error)
	// Log reports steps that failed (default slog.Default()).
	Log *slog.Logger
}

// Filler makes lazy broadcasts' copies (see the comment at the top of
// lazy.go). Every process that sends may run one (Run): they share the
// work through the cursor, each step taken once. Safe for concurrent use.
type Filler struct {
	n      *Notifier
	aud    Audience
	cfg    FillConfig
	wake   chan struct{}
	replan *valkey.Lua // lua/replan.lua
}

// NewFiller returns a Filler of n's lazy broadcasts over aud. Errors:
// ErrInvalid for a nil aud.
func (n *Notifier) NewFiller(aud Audience, cfg FillConfig) (*Filler, error) {
	if aud == nil {
		return nil, invalid("filler: nil audience")
	}
	if cfg.Lead <= 0 {
		cfg.Lead = 2 * time.Second
	}
	if cfg.StepChats <= 0 || cfg.StepChats > lanes.MaxCursorItems {
		cfg.StepChats = lanes.MaxCursorItems
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.Replan <= 0 {
		cfg.Replan = DefaultReplan
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Filler{n: n, aud: aud, cfg: cfg, wake: make(chan struct{}, 1), replan: luascript.Must(luaFS, "replan")}, nil
}

// DefaultTick is FillConfig.Tick's default: 500 ms, so that a pass at a
// paid broadcast's 1,000/s makes one step of a full 500 chats
// (lanes.MaxCursorItems) and a pass costs its six round trips per 500
// copies, not per 100 as every 100 ms (issue 27, CPU a copy: a round trip
// is a wake-up of Valkey's when nothing else came with it). Six: the due
// broadcasts, then the step's own four (its record read, the audience
// walk, resolve, the enqueue: allowed), then the record read that finds
// the window full and ends the pass. That is at least: a walk over small
// buckets, a resolve with aliases or inactive chats to read, the
// languages of a broadcast with texts per language and the replan every
// Replan add theirs. The window (Lead, 2 s) holds four passes' copies,
// so the budget never waits on a pass; a scheduled broadcast starts at
// most a tick late, and a process whose filler was not woken (Wake) takes
// up a started one at most a tick later.
const DefaultTick = 500 * time.Millisecond

// DefaultReplan is FillConfig.Replan's default.
const DefaultReplan = 5 * time.Second

// Fields of a lazy broadcast's record (beside those of keys.go).
const (
	fieldLazy    = "lz"  // "1": a lazy broadcast
	fieldTpl     = "tpl" // the copies' template: JSON array of tgjob.Job, one per part; "tpl:<lang>" a language's (Plan.Texts)
	fieldLangs   = "ls"  // the languages with a template of their own, comma-separated (absent: none)
	fieldParts   = "np"  // parts per chat
	fieldCursor  = "cur" // the audience walk's cursor; cursorEnd once over
	fieldAt      = "at"  // start, unix ms
	fieldRate    = "rt"  // spread: copies per second (decimal), absent: the budget's pace
	fieldSkipped = "sk"  // copies not made: chats marked inactive (chats × parts)
	fieldPaidQ   = "qp"  // copies enqueued on the paid queue
	fieldPaidMax = "pm"  // paid copies at most (0/absent: all)
	fieldClosed  = "xc"  // "1": the stop's counts were settled (lua/stopdone.lua)
	fieldEnd     = "en"  // spread: its end, unix ms
	fieldRateAt  = "rf"  // spread: when the pace rt was set (unix ms; absent: at)
	fieldRateQ   = "rb"  // spread: the copies due by rf on the pace before (decimal; absent: 0)
	fieldReplan  = "rp"  // when the total and the pace were last made again (unix ms)
	cursorEnd    = "$"
)

// Start begins a lazy broadcast of msg to the whole audience, as plan
// says, and returns its id: its record (Progress.Total is the audience's
// size then, without the chats marked inactive, times the parts, until the
// walk is over) and its place among
// the broadcasts to fill. Unless it is scheduled later, its first step is
// made here, so its first copies are on their lanes when Start returns.
// With msg.Key a repeated Start returns the first one's id and starts
// nothing (see Message.Key). msg.Class is ignored (a Notification);
// msg.Paid puts the copies on the paid queue (up to plan.PaidMax).
//
// Errors: ErrInvalid / ErrEmptyText for a bad message or plan (nothing
// written); the store's (wrapped).
func (f *Filler) Start(ctx context.Context, msg Message, plan Plan) (string, error) {
	n := f.n
	msg.Class = Notification
	tmpl, err := n.jobs(1, msg)
	if err != nil {
		return "", err
	}
	if plan.Spread < 0 || plan.PaidMax < 0 {
		return "", invalid(fmt.Sprintf("broadcast plan: spread %v, paid max %d", plan.Spread, plan.PaidMax))
	}
	size, err := f.aud.Size(ctx)
	if err != nil {
		return "", fmt.Errorf("notifier: broadcast: %w", err)
	}
	inactive, err := n.chats.InactiveCount(ctx)
	if err != nil {
		return "", fmt.Errorf("notifier: broadcast: %w", err)
	}
	size = max(size-inactive, 0)
	bc := BroadcastIDPrefix + strings.TrimPrefix(string(n.minter.New()), lanes.JobIDPrefix)
	tpls, err := f.templates(bc, msg, plan.Texts)
	if err != nil {
		return "", err
	}
	at := plan.At
	if now := time.Now(); at.Before(now) {
		at = now
	}
	total := size * len(tmpl)
	extra := append(tpls, fieldLazy, "1", fieldParts, strconv.Itoa(len(tmpl)),
		fieldAt, strconv.FormatInt(at.UnixMilli(), 10))
	if plan.Spread > 0 && total > 0 {
		extra = append(extra, fieldRate, strconv.FormatFloat(float64(total)/plan.Spread.Seconds(), 'g', -1, 64),
			fieldEnd, strconv.FormatInt(at.Add(plan.Spread).UnixMilli(), 10))
	}
	if msg.Paid && plan.PaidMax > 0 {
		extra = append(extra, fieldPaidMax, strconv.Itoa(plan.PaidMax))
	}
	// The record and its place among the broadcasts to fill in one call:
	// a record without its place would never be filled, and a repeat with
	// msg.Key would find it and start nothing. Kept ProgressTTL after its
	// planned end: a scheduled or spread broadcast settles no copy for a
	// while.
	o := startOpts{fill: at}
	if wait := time.Until(at) + plan.Spread; wait > 0 {
		o.ttl = n.cfg.ProgressTTL + wait
	}
	prev, err := n.startProgress(ctx, bc, msg, total, 0, o, extra...)
	if err != nil || prev != "" {
		return prev, err
	}
	if !at.After(time.Now()) {
		if _, err := f.fillOne(ctx, bc, time.Now()); err != nil {
			// The record holds; a Filler's Run takes the step again.
			f.cfg.Log.Warn("broadcast: first step", slog.String("broadcast", bc), slog.Any("err", err))
		}
	}
	f.Wake()
	return bc, nil
}

// templates returns the record's fields of broadcast bc's templates, as
// (field, value) pairs: msg's (fieldTpl) and, for each language of texts,
// msg with that text (fieldTpl:<lang>), with fieldLangs naming them.
// Errors: ErrInvalid for a language's text the notifier refuses, one that
// splits into another number of parts than msg's, texts without
// FillConfig.Languages, or an empty or comma-holding language.
func (f *Filler) templates(bc string, msg Message, texts map[string]string) ([]string, error) {
	if len(texts) > 0 && f.cfg.Languages == nil {
		return nil, invalid("broadcast: texts per language without FillConfig.Languages")
	}
	langs := make([]string, 0, len(texts))
	for l := range texts {
		if l == "" || strings.Contains(l, ",") {
			return nil, invalid(fmt.Sprintf("broadcast: language %q", l))
		}
		langs = append(langs, l)
	}
	slices.Sort(langs)
	var out []string
	parts := 0
	for _, l := range append([]string{""}, langs...) {
		m := msg
		if l != "" {
			m.Text = texts[l]
		}
		tmpl, err := f.n.jobs(1, m)
		if err != nil {
			return nil, err
		}
		if l == "" {
			parts = len(tmpl)
		} else if len(tmpl) != parts {
			return nil, invalid(fmt.Sprintf("broadcast: the %s text splits into %d parts, the default into %d", l, len(tmpl), parts))
		}
		for i := range tmpl {
			tmpl[i].Chat, tmpl[i].Broadcast = 0, bc
		}
		tpl, err := json.Marshal(tmpl)
		if err != nil {
			return nil, fmt.Errorf("notifier: broadcast: %w", err)
		}
		out = append(out, tplField(l), string(tpl))
	}
	if len(langs) > 0 {
		out = append(out, fieldLangs, strings.Join(langs, ","))
	}
	return out, nil
}

// tplField is the record's field of language lang's template ("" the
// default's).
func tplField(lang string) string {
	if lang == "" {
		return fieldTpl
	}
	return fieldTpl + ":" + lang
}

// Wake has Run look for work now (a broadcast started or resumed).
func (f *Filler) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Run fills the lazy broadcasts that are due until ctx ends: a pass
// (Fill) every FillConfig.Tick, or at once after a Wake or a pass that
// filled to its limit. A pass that fails is logged and tried again at the
// next tick. It returns ctx's error.
func (f *Filler) Run(ctx context.Context) error {
	t := time.NewTicker(f.cfg.Tick)
	defer t.Stop()
	for {
		if _, err := f.Fill(ctx); err != nil && ctx.Err() == nil {
			f.cfg.Log.Warn("broadcast fill", slog.Any("err", err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-f.wake:
		}
	}
}

// maxActive is how many due broadcasts one Fill pass looks at.
const maxActive = 100

// Fill makes one pass over the lazy broadcasts that are due: for each, the
// steps its window and its spread allow now. It returns how many copies it
// enqueued. A broadcast whose walk is over, or that was stopped, leaves the
// list of broadcasts to fill. Errors: the store's (the broadcasts after a
// failing one wait for the next pass).
func (f *Filler) Fill(ctx context.Context) (int, error) {
	now := time.Now()
	ids, err := f.n.c.Do(ctx, f.n.c.B().Zrangebyscore().Key(f.n.keys.active()).Min("-inf").
		Max(strconv.FormatInt(now.UnixMilli(), 10)).Limit(0, maxActive).Build()).AsStrSlice()
	if err != nil {
		return 0, fmt.Errorf("notifier: fill: %w", err)
	}
	total := 0
	for _, id := range ids {
		added, err := f.fillOne(ctx, id, now)
		total += added
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// lazyState is what one step reads of a lazy broadcast's record.
type lazyState struct {
	cursor                string
	done                  bool // stopped, walked, or gone
	halted                bool
	paid                  bool // the next copies go on the paid queue
	parts, queued, paidQ  int
	paidMax               int
	at                    time.Time
	rate                  float64   // spread: copies per second, 0: none
	rateAt                time.Time // spread: when rate was set (at when never made again)
	rateQ                 float64   // spread: the copies due by rateAt (the schedule so far)
	end                   time.Time // spread: its end (zero: none)
	replanned             time.Time // when the total and pace were last made again
	skipped               int       // copies not made: chats marked inactive
	total                 int       // the copies planned (field t)
	outstanding           int
	stopped, free, walked bool
	langs                 map[string]bool // the languages with a template of their own (nil: none)
}

// readLazy reads broadcast id's record and its outstanding copies.
func (f *Filler) readLazy(ctx context.Context, id string) (lazyState, error) {
	n := f.n
	out := n.c.DoMulti(ctx,
		n.c.B().Hmget().Key(n.keys.progress(id)).Field(fieldCursor, fieldStop, fieldPaid, fieldFree, fieldHalt,
			fieldParts, fieldQueued, fieldPaidQ, fieldPaidMax, fieldAt, fieldRate, fieldLazy,
			fieldRateAt, fieldRateQ, fieldEnd, fieldReplan, fieldSkipped, fieldTotal, fieldLangs).Build(),
		n.c.B().Zcard().Key(n.keys.out(id)).Build())
	v, err := out[0].ToArray()
	if err != nil {
		return lazyState{}, err
	}
	str := func(i int) string { s, _ := v[i].ToString(); return s }
	num := func(i int) int { x, _ := strconv.Atoi(str(i)); return x }
	st := lazyState{cursor: str(0), stopped: str(1) == "1", free: str(3) == "1", halted: str(4) == "1",
		parts: num(5), queued: num(6), paidQ: num(7), paidMax: num(8)}
	st.walked = st.cursor == cursorEnd
	st.done = st.stopped || st.walked || str(11) != "1"
	st.paid = str(2) == "1" && !st.free && (st.paidMax == 0 || st.paidQ < st.paidMax)
	msAt := func(i int) time.Time {
		if ms, err := strconv.ParseInt(str(i), 10, 64); err == nil {
			return time.UnixMilli(ms)
		}
		return time.Time{}
	}
	st.at, st.rateAt, st.end, st.replanned = msAt(9), msAt(12), msAt(14), msAt(15)
	if st.rateAt.IsZero() {
		st.rateAt = st.at
	}
	st.rate, _ = strconv.ParseFloat(str(10), 64)
	st.rateQ, _ = strconv.ParseFloat(str(13), 64)
	st.skipped, st.total = num(16), num(17)
	if ls := str(18); ls != "" {
		st.langs = map[string]bool{}
		for _, l := range strings.Split(ls, ",") {
			st.langs[l] = true
		}
	}
	o, err := out[1].AsInt64()
	if err != nil {
		return lazyState{}, err
	}
	st.outstanding = int(o)
	return st, nil
}

// maxStepsPerPass bounds the steps one broadcast takes in one pass.
const maxStepsPerPass = 16

// fillOne takes the steps broadcast id's window and spread allow at now,
// and returns the copies it enqueued. A broadcast done (walked, stopped,
// expired) leaves the list to fill. Errors: the store's.
func (f *Filler) fillOne(ctx context.Context, id string, now time.Time) (int, error) {
	added := 0
	for range maxStepsPerPass {
		st, err := f.readLazy(ctx, id)
		if err != nil {
			return added, fmt.Errorf("notifier: fill %s: %w", id, err)
		}
		if st.done {
			return added, f.n.c.Do(ctx, f.n.c.B().Zrem().Key(f.n.keys.active()).Member(id).Build()).Error()
		}
		if now.Sub(st.replanned) >= f.cfg.Replan {
			if st, err = f.replanOne(ctx, id, st, now); err != nil {
				return added, fmt.Errorf("notifier: fill %s: %w", id, err)
			}
		}
		chats := f.allowed(st, now)
		if chats <= 0 || st.halted {
			return added, nil
		}
		a, err := f.step(ctx, id, st, chats)
		added += a
		if errors.Is(err, lanes.ErrCursorMoved) {
			continue // another filler took the step: read again
		}
		if err != nil {
			return added, fmt.Errorf("notifier: fill %s: %w", id, err)
		}
	}
	return added, nil
}

// allowed is how many chats the next step of st may cover at now: what
// the window (the queue's rate × Lead copies, at least one step, minus
// the copies outstanding) and the spread (rate × time since the start,
// one step ahead, minus the copies queued) leave, at most a step. The
// window's room counts once it holds a whole step's copies, or half the
// window when that is less (stepRoom): a broadcast sent at its budget's
// pace frees its window a few copies at a time, and a step for each few
// (its four round trips at least, each waking Valkey: its record read,
// the audience walk, resolve, the enqueue; DefaultTick)
// cost more of Valkey's CPU than the copies' own work (bench section 14 at
// 1,000/s: about 20 steps of 47 copies a second, 0.1 wake-ups a copy);
// the copies left on the lanes meanwhile (at least half the window, Lead
// ÷ 2 of the budget) keep the senders busy as before.
func (f *Filler) allowed(st lazyState, now time.Time) int {
	parts := max(st.parts, 1)
	step := min(f.cfg.StepChats, lanes.MaxCursorItems/parts)
	queue := tgjob.QueueNotify
	if st.paid {
		queue = tgjob.QueuePaid
	}
	rate := f.cfg.Rates[queue]
	if rate <= 0 {
		rate = 30
	}
	window := max(step*parts, int(float64(rate)*f.cfg.Lead.Seconds()))
	room := window - st.outstanding
	if room < stepRoom(step*parts, window) {
		room = 0
	}
	if st.rate > 0 && (st.end.IsZero() || now.Before(st.end)) {
		due := int(math.Floor(st.rateQ+st.rate*now.Sub(st.rateAt).Seconds())) + parts - st.queued
		room = min(room, due)
	}
	if st.paid && st.paidMax > 0 {
		room = min(room, max(st.paidMax-st.paidQ, parts))
	}
	return min(step, room/parts)
}

// stepRoom is the room (copies) a window of window copies needs before a
// step of up to step copies is taken (allowed): the whole step, or half the
// window when that is less (a window of one step then refills when half of
// it was sent, not only once it ran empty).
func stepRoom(step, window int) int {
	return max(min(step, window/2), 1)
}

// replanOne makes broadcast id's total and its spread's pace again from
// the audience left after its cursor (Audience.Remaining) and returns st
// as written: the total is the copies queued plus those still to make
// (the chats left, less the inactive chats not yet skipped, times the
// parts: an estimate until the walk is over, when it is the copies made);
// when the total changed, a spread's pace is the copies left ÷ the time
// left to its end, counted on from the copies the pace before had made due
// by now (so a schedule ahead of its copies, as a thin spread's first copy
// is, is not granted that lead again); within a second of its end, none
// (the budget's pace). Nothing is
// written when a step, a stop or another filler came first
// (lua/replan.lua). Errors: the store's.
func (f *Filler) replanOne(ctx context.Context, id string, st lazyState, now time.Time) (lazyState, error) {
	n := f.n
	rest, err := f.aud.Remaining(ctx, st.cursor)
	if err != nil {
		return st, err
	}
	inactive, err := n.chats.InactiveCount(ctx)
	if err != nil {
		return st, err
	}
	parts := max(st.parts, 1)
	left := max(rest-max(inactive-st.skipped/parts, 0), 0) * parts
	pace := ""
	switch {
	case st.rate <= 0 || st.end.IsZero():
	case now.Before(st.end.Add(-time.Second)) && st.queued+left == st.total: // the plan holds: so does its pace
	case now.Before(st.end.Add(-time.Second)):
		st.rateQ += st.rate * now.Sub(st.rateAt).Seconds()
		st.rate, st.rateAt = float64(left)/st.end.Sub(now).Seconds(), now
		pace = strconv.FormatFloat(st.rate, 'g', -1, 64)
	default:
		st.rate, pace = 0, "-"
	}
	_, err = f.replan.Exec(ctx, n.c, []string{n.keys.progress(id)}, []string{st.cursor,
		strconv.Itoa(st.queued + left), strconv.FormatInt(now.UnixMilli(), 10), pace, strconv.FormatFloat(st.rateQ, 'g', -1, 64)}).AsInt64()
	st.replanned = now
	return st, err
}

// step makes the copies of the next chats (at most chats) of broadcast id
// in one atomic enqueue that moves its cursor (lanes.AtCursor); chats
// marked inactive are skipped and counted, a chat that migrated goes to its
// new id unless the audience has that one (its own turn reaches it). It
// returns the copies added. Errors: lanes.ErrCursorMoved (another filler
// took the step), the store's.
func (f *Filler) step(ctx context.Context, id string, st lazyState, chats int) (int, error) {
	n := f.n
	walked, next, err := f.aud.Walk(ctx, st.cursor, chats)
	if err != nil {
		return 0, err
	}
	if next == "" || next == st.cursor {
		next = cursorEnd
	}
	targets, skipped, err := f.resolve(ctx, walked)
	if err != nil {
		return 0, err
	}
	langs, err := f.languages(ctx, st, targets)
	if err != nil {
		return 0, err
	}
	parts := max(st.parts, 1)
	encs := map[string][]func(int64) []byte{}
	items := make([]lanes.Item, 0, len(targets)*parts)
	for i, chat := range targets {
		enc, ok := encs[langs[i]]
		if !ok {
			if enc, err = f.encoders(id, st, langs[i]); err != nil {
				return 0, err
			}
			encs[langs[i]] = enc
		}
		for _, e := range enc {
			items = append(items, lanes.Item{Group: tgjob.Group(chat), ID: n.minter.New(), Payload: e(chat)})
		}
	}
	queue, incr := tgjob.QueueNotify, map[string]int64{}
	if skipped > 0 {
		incr[fieldSkipped] = int64(skipped * parts)
	}
	if st.paid {
		queue = tgjob.QueuePaid
		incr[fieldPaidQ] = int64(len(items))
	}
	res, err := n.store.Enqueue(ctx, queue, items, lanes.Unless(n.keys.stop(id)), lanes.CountDead(n.deadTally(id)), lanes.AtCursor(lanes.Cursor{
		Key: n.keys.progress(id), Field: fieldCursor, From: st.cursor, To: next,
		Count: fieldQueued, Incr: incr, Track: n.keys.out(id),
	}))
	return res.Added, err
}

// resolve returns the chats of one step as they are sent to: each after
// its migration aliases, without repeats, leaving out a migrated chat's new
// id when the audience has it (its own turn reaches it), and how many were
// marked inactive (skipped). Errors: the store's.
func (f *Filler) resolve(ctx context.Context, walked []int64) ([]int64, int, error) {
	if len(walked) == 0 {
		return nil, 0, nil
	}
	targets, inactive, err := f.n.chats.ResolveMany(ctx, walked)
	if err != nil {
		return nil, 0, err
	}
	asked := make(map[int64]bool, len(walked))
	for _, c := range walked {
		asked[c] = true
	}
	out := targets[:0]
	skipped := 0
	for i, c := range targets {
		if !asked[c] {
			known, err := f.aud.Knows(ctx, c)
			if err != nil {
				return nil, 0, err
			}
			if known {
				continue
			}
		}
		if inactive[i] {
			skipped++
			continue
		}
		out = append(out, c)
	}
	return out, skipped, nil
}

// languages returns the language of each of chats for broadcast st: the
// chat's (FillConfig.Languages) when st has a template of that language,
// else "" (the default); all "" for a broadcast of one text, without
// reading them. Errors: the store's.
func (f *Filler) languages(ctx context.Context, st lazyState, chats []int64) ([]string, error) {
	out := make([]string, len(chats))
	if len(st.langs) == 0 || len(chats) == 0 {
		return out, nil
	}
	if f.cfg.Languages == nil {
		return nil, invalid("broadcast with texts per language: no FillConfig.Languages")
	}
	ls, err := f.cfg.Languages(ctx, chats)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if i < len(ls) && st.langs[ls[i]] {
			out[i] = ls[i]
		}
	}
	return out, nil
}

// encoders returns the copies' payload encoders of broadcast id for
// language lang ("" the default), one per part: a tgjob.KindCopy naming
// the broadcast, the part and the language.
func (f *Filler) encoders(id string, st lazyState, lang string) ([]func(int64) []byte, error) {
	parts := max(st.parts, 1)
	enc := make([]func(int64) []byte, parts)
	for i := range enc {
		j := tgjob.Job{Kind: tgjob.KindCopy, Broadcast: id, Lang: lang}
		if parts > 1 {
			j.Part, j.Parts = i+1, parts
		}
		e, err := j.ChatEncoder()
		if err != nil {
			return nil, err
		}
		enc[i] = e
	}
	return enc, nil
}

// copyCache keeps lazy broadcasts' templates in a process, read once per
// broadcast (ExpandCopy): at most copyCacheMax of them, the whole cache
// dropped when full (a few broadcasts run at once).
type copyCache struct {
	mu sync.Mutex
	m  map[copyKey][]tgjob.Job
}

// copyKey names a broadcast's template of a language in copyCache.
type copyKey struct{ broadcast, lang string }

const copyCacheMax = 64

// ExpandCopy returns copy j (tgjob.KindCopy) as the message it stands for:
// part j.Part of its broadcast's template of j.Lang (its default one when
// j.Lang is "" or has none: Plan.Texts) (text, parse mode, markup,
// silence), for j's chat, keeping j's broadcast and part. The template is
// read from the broadcast's record once per process and language (then
// CachedCopy expands it without ctx). Errors: ErrUnknownBroadcast when the
// record is gone (expired); ErrInvalid for a part the template lacks; the
// server's (wrapped).
func (n *Notifier) ExpandCopy(ctx context.Context, j tgjob.Job) (tgjob.Job, error) {
	if out, ok, err := n.CachedCopy(j); ok {
		return out, err
	}
	tmpl, err := n.readTemplate(ctx, j.Broadcast, j.Lang)
	if err != nil {
		return j, err
	}
	n.copies.mu.Lock()
	if n.copies.m == nil || len(n.copies.m) >= copyCacheMax {
		n.copies.m = make(map[copyKey][]tgjob.Job)
	}
	n.copies.m[copyKey{j.Broadcast, j.Lang}] = tmpl
	n.copies.mu.Unlock()
	return expandFrom(tmpl, j)
}

// CachedCopy is ExpandCopy of copy j from this process's cache alone, with
// no call to the server: ok is false when j's template is not cached (not
// read yet by ExpandCopy, or dropped), and then out and err say nothing.
// With ok: out, or ErrInvalid for a part the template lacks. The worker
// makes a context for the read only when this misses (once per broadcast
// and language), not once per copy.
func (n *Notifier) CachedCopy(j tgjob.Job) (out tgjob.Job, ok bool, err error) {
	n.copies.mu.Lock()
	tmpl, ok := n.copies.m[copyKey{j.Broadcast, j.Lang}]
	n.copies.mu.Unlock()
	if !ok {
		return j, false, nil
	}
	out, err = expandFrom(tmpl, j)
	return out, true, err
}

// expandFrom is copy j as part j.Part of template tmpl. Errors: ErrInvalid
// for a part tmpl lacks.
func expandFrom(tmpl []tgjob.Job, j tgjob.Job) (tgjob.Job, error) {
	i := max(j.Part, 1) - 1
	if i >= len(tmpl) {
		return j, invalid(fmt.Sprintf("copy of %s: part %d of %d", j.Broadcast, j.Part, len(tmpl)))
	}
	out := tmpl[i]
	out.V, out.Kind, out.Chat, out.Broadcast, out.Part, out.Parts = tgjob.Version, tgjob.KindSend, j.Chat, j.Broadcast, j.Part, j.Parts
	return out, nil
}

// readTemplate reads broadcast bc's template of lang from its record (the
// default's when lang is "" or has none). Errors: ErrUnknownBroadcast when
// the record is gone; ErrInvalid for a template that does not decode; the
// server's (wrapped).
func (n *Notifier) readTemplate(ctx context.Context, bc, lang string) ([]tgjob.Job, error) {
	v, err := n.c.Do(ctx, n.c.B().Hmget().Key(n.keys.progress(bc)).Field(tplField(lang), fieldTpl).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("notifier: copy of %s: %w", bc, err)
	}
	raw, err := v[0].ToString()
	if err != nil {
		raw, err = v[1].ToString()
	}
	if valkey.IsValkeyNil(err) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownBroadcast, bc)
	}
	if err != nil {
		return nil, fmt.Errorf("notifier: copy of %s: %w", bc, err)
	}
	var tmpl []tgjob.Job
	if err := json.Unmarshal([]byte(raw), &tmpl); err != nil || len(tmpl) == 0 {
		return nil, invalid(fmt.Sprintf("copy of %s: template: %v", bc, err))
	}
	return tmpl, nil
}
