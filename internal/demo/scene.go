package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/codemojex/codemojex/game"
)

// scene plays the script on the emulator through the tracker.
type scene struct {
	tr    *tracker
	cfg   Scene
	start time.Time
	end   time.Time // when play returned (zero before)

	burstDrained chan struct{} // closed once every burst command is answered
	share        rushShare     // the rush's measurements (set by rush)

	mu     sync.Mutex
	phase  string
	events []string // newest last
	errs   []error  // actors' failures (a reply that never came, ...)
}

var quietNames = []string{"Ana", "Ben", "Cleo", "Dev", "Eve", "Finn", "Gia", "Hugo"}

// broadcastText is the admin's broadcast; marker identifies its copies.
func broadcastText(marker string) string {
	return "New season " + marker + " starts now 🍒 type /play"
}

func newScene(tr *tracker, cfg Scene) *scene {
	s := &scene{tr: tr, cfg: cfg, burstDrained: make(chan struct{}), phase: "starting"}
	tr.add(AdminID, "Admin", RoleAdmin)
	tr.add(BurstID, "Burst", RoleBurst)
	for i := range cfg.Quiet {
		name := quietNames[i%len(quietNames)]
		if i >= len(quietNames) {
			name += fmt.Sprint(i / len(quietNames))
		}
		tr.add(firstQuiet+int64(i), name, RoleQuiet)
	}
	for i := range cfg.Crowd {
		tr.add(firstCrowd+int64(i), fmt.Sprintf("Crowd%02d", i+1), RoleCrowd)
	}
	tr.add(TapperID, "Tap", RoleTap)
	tr.add(VIPID, "VIP", RoleVIP)
	for i := range cfg.Rush {
		tr.add(firstRush+int64(i), fmt.Sprintf("Rush%03d", i+1), RoleRush)
	}
	return s
}

// rushIDs are the chats of the rush: the crowd, the VIP chat and the
// rush-only chats.
func (s *scene) rushIDs() []int64 {
	out := s.crowdIDs()
	for i := range s.cfg.Rush {
		out = append(out, firstRush+int64(i))
	}
	return out
}

func (s *scene) quietIDs() []int64 {
	out := make([]int64, s.cfg.Quiet)
	for i := range out {
		out[i] = firstQuiet + int64(i)
	}
	return out
}

// crowdIDs are the crowd chats and the VIP chat (last).
func (s *scene) crowdIDs() []int64 {
	out := make([]int64, s.cfg.Crowd, s.cfg.Crowd+1)
	for i := range out {
		out[i] = firstCrowd + int64(i)
	}
	return append(out, VIPID)
}

// setPhase names what the scene is doing now, and logs it as an event.
func (s *scene) setPhase(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = p
	s.eventLocked(p)
}

func (s *scene) event(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eventLocked(fmt.Sprintf(format, args...))
}

func (s *scene) eventLocked(e string) {
	at := time.Duration(0)
	if !s.start.IsZero() {
		at = time.Since(s.start)
	}
	s.events = append(s.events, fmt.Sprintf("%5.1fs  %s", at.Seconds(), e))
}

func (s *scene) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// view returns the phase, the last n events and the failures so far.
func (s *scene) view(n int) (string, []string, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.events[max(0, len(s.events)-n):]
	return s.phase, append([]string(nil), ev...), append([]error(nil), s.errs...)
}

// say sends text from chat and waits for its reply.
func (s *scene) say(ctx context.Context, chat int64, text string) error {
	idx, err := s.tr.send(chat, text, false)
	if err != nil {
		return err
	}
	return s.await(ctx, chat, idx, text)
}

func (s *scene) await(ctx context.Context, chat int64, idx int, text string) error {
	if err := s.tr.emu.WaitUntil(ctx, func() bool { return s.tr.answered(chat, idx) }); err != nil {
		return fmt.Errorf("chat %d: no reply to %q: %w", chat, text, err)
	}
	return nil
}

// at sleeps until offset d into the scene.
func (s *scene) at(ctx context.Context, d time.Duration) error {
	return sleepCtx(ctx, time.Until(s.start.Add(d)))
}

// play runs the whole script and returns when every actor is done and every
// chat has its broadcast copy, or when ctx ends (the scene's deadline).
// Actors' failures are collected (view), not returned: a missing reply is a
// broken promise for the summary, not a crash of the demo.
func (s *scene) play(ctx context.Context) {
	s.mu.Lock()
	s.start = time.Now()
	s.mu.Unlock()
	s.setPhase(fmt.Sprintf("warm-up: %d chats say /start", 4+s.cfg.Quiet+s.cfg.Crowd))

	var wg sync.WaitGroup
	run := func(name string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil {
				s.fail(fmt.Errorf("%s: %w", name, err))
			}
		})
	}
	run("crowd", s.crowd)
	run("burst", s.burst)
	for i, id := range s.quietIDs() {
		run(fmt.Sprintf("quiet chat %d", id), func(ctx context.Context) error { return s.quiet(ctx, id, i) })
	}
	run("admin", s.admin)
	run("tapper", s.tapper)
	wg.Wait()

	s.setPhase("draining: waiting for the broadcast to reach every chat")
	all := append([]int64{AdminID, BurstID, TapperID}, append(s.quietIDs(), s.crowdIDs()...)...)
	err := s.tr.emu.WaitUntil(ctx, func() bool {
		if !s.tr.broadcastSent() {
			return true
		}
		got := 0
		for _, id := range all {
			for _, m := range s.tr.emu.Messages(id) {
				if s.tr.isBroadcast(m) {
					got++
					break
				}
			}
		}
		return got == len(all)
	})
	if err != nil {
		s.fail(fmt.Errorf("broadcast: %w", err))
	}
	if err := s.rush(ctx); err != nil {
		s.fail(fmt.Errorf("rush: %w", err))
	}
	s.mu.Lock()
	s.end = time.Now()
	s.mu.Unlock()
	s.setPhase("done")
}

// crowd: many chats say /start at once, so the broadcast fans out wide.
func (s *scene) crowd(ctx context.Context) error {
	ids := s.crowdIDs()
	idx := make([]int, len(ids))
	for i, id := range ids {
		n, err := s.tr.send(id, "/start", false)
		if err != nil {
			return err
		}
		idx[i] = n
	}
	var errs []error
	for i, id := range ids {
		if err := s.await(ctx, id, idx[i], "/start"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// burst: one chat sends /start and Burst × /help at once.
func (s *scene) burst(ctx context.Context) error {
	if err := s.at(ctx, 300*time.Millisecond); err != nil {
		return err
	}
	s.setPhase(fmt.Sprintf("burst: chat %d sends %d × /help at once while %d chats play", BurstID, s.cfg.Burst, s.cfg.Quiet))
	var idx []int
	for i := range s.cfg.Burst + 1 {
		text := "/help"
		if i == 0 {
			text = "/start"
		}
		n, err := s.tr.send(BurstID, text, false)
		if err != nil {
			return err
		}
		idx = append(idx, n)
	}
	for _, n := range idx {
		if err := s.await(ctx, BurstID, n, "/help"); err != nil {
			return err
		}
	}
	close(s.burstDrained)
	s.event("burst chat %d: backlog drained", BurstID)
	return nil
}

// quiet: a player who plays one move at a time, with a pause after each
// reply, until the burst has drained (and MinMoves at least).
func (s *scene) quiet(ctx context.Context, chat int64, i int) error {
	if err := s.at(ctx, time.Duration(i)*150*time.Millisecond); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(chat), 0x636d78))
	palette := game.DefaultConfig().Palette
	think := func() error {
		return sleepCtx(ctx, time.Duration(float64(s.cfg.Think)*(0.75+0.5*rng.Float64())))
	}
	return s.player(ctx, chat, think, func(moves int) error {
		text := ""
		if moves > 0 && moves%8 == 0 {
			// Stay clear of the 10-attempt limit: start over.
			if err := s.say(ctx, chat, "/giveup"); err != nil {
				return err
			}
			if err := think(); err != nil {
				return err
			}
			text = "/play"
		} else {
			g := make([]string, 4)
			for k := range g {
				g[k] = palette[rng.IntN(len(palette))]
			}
			text = strings.Join(g, " ")
		}
		if err := s.say(ctx, chat, text); err != nil {
			return err
		}
		return think()
	})
}

// player runs a player in chat: /start and /play (think after each), then
// move(moves) for moves = 0, 1, ... until the burst has drained and
// MinMoves are made; it ends with /top.
func (s *scene) player(ctx context.Context, chat int64, think func() error, move func(moves int) error) error {
	for _, text := range []string{"/start", "/play"} {
		if err := s.say(ctx, chat, text); err != nil {
			return err
		}
		if err := think(); err != nil {
			return err
		}
	}
	for moves := 0; ; moves++ {
		if moves >= s.cfg.MinMoves {
			select {
			case <-s.burstDrained:
				return s.say(ctx, chat, "/top")
			default:
			}
		}
		if err := move(moves); err != nil {
			return err
		}
	}
}

// sleepCtx waits d, or until ctx ends (an error naming the demo).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("demo: %w", ctx.Err())
	}
}

// admin: raises the bursting chat's weight, looks at the queue, broadcasts.
func (s *scene) admin(ctx context.Context) error {
	steps := []struct {
		at   time.Duration
		text string
		bc   bool
	}{
		{0, "/start", false},
		{1500 * time.Millisecond, fmt.Sprintf("/weight %d %d", BurstID, burstWeight), false},
		{0, "/weights", false},
		{3500 * time.Millisecond, "/broadcast " + broadcastText(s.tr.marker), true},
		{6 * time.Second, "/lanes", false},
	}
	for _, st := range steps {
		if err := s.at(ctx, st.at); err != nil {
			return err
		}
		switch {
		case st.bc:
			s.setPhase(fmt.Sprintf("broadcast: the admin previews /broadcast and taps Send: every chat (%d)", 4+s.cfg.Quiet+s.cfg.Crowd))
		case st.text != "/start":
			s.event("admin: %s", st.text)
		}
		idx, err := s.tr.send(AdminID, st.text, st.bc)
		if err != nil {
			return err
		}
		if err := s.await(ctx, AdminID, idx, st.text); err != nil {
			return err
		}
		if st.bc {
			// The answer is a preview: only its Send button starts the
			// fan-out.
			id, err := s.tr.tap(AdminID, "✅ Send")
			if err != nil {
				return err
			}
			var toast string
			if err := s.tr.emu.WaitUntil(ctx, func() bool {
				var ok bool
				toast, ok = s.tr.answer(id)
				return ok
			}); err != nil {
				return fmt.Errorf("admin: Send never answered: %w", err)
			}
			s.event("admin: ✅ Send on the preview: %s", toast)
		}
	}
	return nil
}

// rushShare is what the rush measured: the VIP chat's messages and every
// rush chat's messages (VIP included) in a window before the admin raised
// its weight and in one after.
type rushShare struct {
	Chats              int // chats with a backlog in the rush (the crowd and the VIP)
	Before, After      windowCount
	Measured           bool
	WeightAt, ReplyWas time.Duration // when /weight was sent (scene time) and how long its reply took
}

// windowCount is the messages delivered in one window of the rush.
type windowCount struct {
	VIP, All int
}

// Times is the VIP chat's messages over an average rush chat's (0 when
// nothing was delivered).
func (w windowCount) Times(chats int) float64 {
	if w.All == 0 {
		return 0
	}
	return float64(w.VIP) * float64(chats) / float64(w.All)
}

func (w windowCount) String(chats int) string {
	return fmt.Sprintf("VIP %d of %d messages, %.1f× an average chat's", w.VIP, w.All, w.Times(chats))
}

// rush: the crowd chats and the VIP chat each send RushPer × /help at once,
// so more than 30 chats have backlogs and the global rate (30/s) binds:
// every chat gets an equal share, under 1 message/s. The VIP chat's share
// is counted for RushWindow; then the admin raises its weight with /weight
// and it is counted again for 1.5 × RushWindow: a weight-5 chat gets up to 5 times
// an average chat's share, but never more than Telegram's 1 message/s per
// private chat.
func (s *scene) rush(ctx context.Context) error {
	ids := s.rushIDs()
	s.setPhase(fmt.Sprintf("rush: %d chats send %d × /help at once; 30/s overall binds", len(ids), s.cfg.RushPer))
	// The VIP chat sends more, so its backlog lasts at its higher share.
	type sent struct {
		chat int64
		idx  int
	}
	var all []sent
	for i := range 3 * s.cfg.RushPer {
		for _, id := range ids {
			if i >= s.cfg.RushPer && id != VIPID {
				continue
			}
			n, err := s.tr.send(id, "/help", false)
			if err != nil {
				return err
			}
			all = append(all, sent{id, n})
		}
	}
	t0 := time.Now()
	count := func(from, to time.Time) windowCount {
		var w windowCount
		for _, id := range ids {
			for _, m := range s.tr.emu.Messages(id) {
				if !m.Time.Before(from) && m.Time.Before(to) {
					w.All++
					if id == VIPID {
						w.VIP++
					}
				}
			}
		}
		return w
	}
	// The first second fills every lane; then count.
	from := t0.Add(time.Second)
	if err := sleepUntil(ctx, from.Add(s.cfg.RushWindow)); err != nil {
		return err
	}
	before := count(from, from.Add(s.cfg.RushWindow))
	s.event("rush, weight 1: %s", before.String(len(ids)))
	text := fmt.Sprintf("/weight %d %d", VIPID, vipWeight)
	s.event("admin: %s", text)
	at := time.Now()
	if err := s.say(ctx, AdminID, text); err != nil {
		return err
	}
	replied := time.Now()
	from = replied.Add(500 * time.Millisecond)
	afterWindow := s.cfg.RushWindow * 3 / 2
	if err := sleepUntil(ctx, from.Add(afterWindow)); err != nil {
		return err
	}
	after := count(from, from.Add(afterWindow))
	s.event("rush, weight %d: %s", vipWeight, after.String(len(ids)))
	s.mu.Lock()
	s.share = rushShare{Chats: len(ids), Before: before, After: after, Measured: true,
		WeightAt: at.Sub(s.start), ReplyWas: replied.Sub(at)}
	s.mu.Unlock()
	s.setPhase("rush: draining every chat's backlog")
	var errs []error
	for _, c := range all {
		if err := s.await(ctx, c.chat, c.idx, "/help"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rushResult returns what the rush measured.
func (s *scene) rushResult() rushShare {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.share
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.NewTimer(time.Until(t))
	defer d.Stop()
	select {
	case <-d.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("demo: %w", ctx.Err())
	}
}

// elapsed is the time from the start of the scene to its end, or to now
// while it runs (0 before it starts).
func (s *scene) elapsed() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.start.IsZero():
		return 0
	case s.end.IsZero():
		return time.Since(s.start)
	}
	return s.end.Sub(s.start)
}

// tapGap is the least time between two of the tapper's taps: 2.5 taps/s,
// a fast player's pace (docs/floods.md: 4 fruit taps and ✅ in 2 s), under
// the intake's tap limit (the bot's FLOOD_USER_TAPS=30 per 10 s: 3/s after
// a burst of 30), so however long the scene, no tap is limited.
const tapGap = 400 * time.Millisecond

// tapper: a player who plays only with the board's buttons (4 palette taps,
// then ✅) at a human pace (tapGap), through the burst and the broadcast,
// and starts a new game with /play when one ends; each tap waits for its
// answer (the spinner).
func (s *scene) tapper(ctx context.Context) error {
	if err := s.at(ctx, 200*time.Millisecond); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(TapperID), 0x746170))
	palette := game.DefaultConfig().Palette
	pause := func(d time.Duration) error { return sleepCtx(ctx, d) }
	var last time.Time // the last tap
	tap := func(labels ...string) (string, error) {
		if err := sleepUntil(ctx, last.Add(tapGap)); err != nil {
			return "", err
		}
		last = time.Now()
		id, err := s.tr.tap(TapperID, labels...)
		if err != nil {
			return "", err
		}
		var toast string
		if err := s.tr.emu.WaitUntil(ctx, func() bool {
			var ok bool
			toast, ok = s.tr.answer(id)
			return ok
		}); err != nil {
			return "", fmt.Errorf("tap %v never answered: %w", labels, err)
		}
		return toast, nil
	}
	think := func() error { return pause(s.cfg.Think) }
	return s.player(ctx, TapperID, think, func(int) error {
		for range 4 {
			if _, err := tap(palette[rng.IntN(len(palette))]); err != nil {
				return err
			}
		}
		toast, err := tap("✅", "☑️")
		if err != nil {
			return err
		}
		if strings.HasPrefix(toast, "🎉") || strings.HasPrefix(toast, "💥") {
			s.event("tapper: %s", toast)
			if err := s.say(ctx, TapperID, "/play"); err != nil {
				return err
			}
		}
		return think()
	})
}
