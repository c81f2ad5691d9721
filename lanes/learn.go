package lanes

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

// LearnConfig says how a budget's learned rate moves (LowerBudget, and every
// claim reading it). A configured rate (WithGlobalRate, QueueConfig.Rate) is
// a ceiling, not a target: on evidence of a limit the receiver enforces
// across every lane (codemojex: 429s from several chats at once) while
// the budget binds (LearnBindingDivisor), LowerBudget halves it at once
// (multiplicative decrease, never below max(1, ceil(configured ÷ 4)), a
// probed budget's start ÷ 4: LearnFloorDivisor); from then on it climbs
// back by max(1, ceil(configured ÷ 20)) every Every (additive increase), never above
// the configured rate, and for Hold after the decrease never above three
// quarters of the rate that brought it (so the rate that hit the limit is
// not tried again at once). The learned state lives in Valkey
// ({T}:s:learned): every claimer of the store claims at min(configured,
// learned), and a restarted process starts from it.
type LearnConfig struct {
	// Every is the additive increase's period [DefaultLearnEvery, 5 s]:
	// from half to the whole configured rate in 10 periods.
	Every time.Duration
	// Hold is how long after a decrease the rate stays at most three
	// quarters of the rate that brought it [DefaultLearnHold, 10 min].
	Hold time.Duration
	// Cooldown: a decrease of a budget within Cooldown of its last one
	// changes nothing [DefaultLearnCooldown, 2 s] (every process, and
	// every 429 of one burst, reports the same push-back).
	Cooldown time.Duration
	// Probe is the least time between two raises of a probed global rate
	// (WithGlobalRateStart), and after a decrease before the next raise
	// [DefaultLearnProbe, 1 s]. A 429 that comes back after the next raise
	// still takes the rate back to before the raise its send was claimed
	// at (RevertProbe), so it need not cover a round trip; a longer one
	// climbs slower.
	Probe time.Duration
	// Epoch is the length of a budget's proof epoch [DefaultLearnEpoch,
	// 10 s]: every claim notes the most sends one window of the budget
	// held in the epoch; one that ends with no burst of 429s makes that its
	// proof, which LowerBudget weighs a burst against (LearnedBudget.Proven).
	// Longer: a proof takes longer to earn and to earn back after a burst.
	Epoch time.Duration
}

// The defaults of LearnConfig.
const (
	DefaultLearnEvery    = 5 * time.Second
	DefaultLearnHold     = 10 * time.Minute
	DefaultLearnCooldown = 2 * time.Second
	DefaultLearnProbe    = time.Second
	DefaultLearnEpoch    = 10 * time.Second
)

// The divisors of a budget's learning: the lowest rate a decrease leaves is
// configured ÷ LearnFloorDivisor (a probed budget's: its start ÷
// LearnFloorDivisor; at least 1), each increase adds configured ÷
// LearnStepDivisor (at least 1), both rounded up. The floor is a quarter:
// 429s that would take a budget lower do not show a limit (Telegram
// publishes about 30 messages/s, and a rate configured 4 times too high
// is the operator's to fix) but push-back of another kind, a chat's own
// flood wait mistaken for the bot's or a transient one, which the pause
// for their retry_after answers (and a binding burst at the floor
// releases the hold that keeps a budget there: Store.LowerBudget). With 1/16 (before), chaos seed 7's 16
// bursts of injected 429s in 10 minutes, halving budgets that bound
// under a broadcast's backlog, held replies at 4/s and the group reply
// lanes overflowed (docs/chaos.md, row 36).
const (
	LearnFloorDivisor = 4
	LearnStepDivisor  = 20
)

// WithLearning sets how the budgets' learned rates move (LearnConfig; zero
// fields take the defaults). Every claimer of a store should use the same:
// the one a decrease was made with is kept with it. Errors (from New):
// ErrInvalid for a negative field, or Every under 1 ms.
func WithLearning(c LearnConfig) Option {
	return func(o *options) error {
		if c.Every < 0 || c.Hold < 0 || c.Cooldown < 0 || c.Probe < 0 || c.Epoch < 0 ||
			(c.Every > 0 && c.Every < time.Millisecond) || (c.Epoch > 0 && c.Epoch < time.Millisecond) {
			return fmt.Errorf("%w: learning every %v, hold %v, cooldown %v, probe %v, epoch %v: want >= 0 (every and epoch >= 1ms)",
				ErrInvalid, c.Every, c.Hold, c.Cooldown, c.Probe, c.Epoch)
		}
		o.learn = c
		return nil
	}
}

func (c LearnConfig) withDefaults() LearnConfig {
	if c.Every == 0 {
		c.Every = DefaultLearnEvery
	}
	if c.Hold == 0 {
		c.Hold = DefaultLearnHold
	}
	if c.Cooldown == 0 {
		c.Cooldown = DefaultLearnCooldown
	}
	if c.Probe == 0 {
		c.Probe = DefaultLearnProbe
	}
	if c.Epoch == 0 {
		c.Epoch = DefaultLearnEpoch
	}
	return c
}

// LearnedBudget is one budget's learned rate (Inspector.Learned).
type LearnedBudget struct {
	// Queue names the queue whose own budget it is (QueueConfig.Rate); ""
	// is the store's global rate (WithGlobalRate).
	Queue string
	// Configured is the configured rate: the ceiling, per Window.
	Configured int
	Window     time.Duration
	// Rate is what claims use now: min(Configured, learned), per Window.
	Rate int
	// Lowered is when the budget last went down (zero: never), Why why
	// (LowerBudget's why), Hit the rate it had then, HoldUntil the end of
	// the hold (LearnConfig.Hold), Decreases how many times it went down
	// since its first.
	Lowered   time.Time
	Why       string
	Hit       int
	HoldUntil time.Time
	Decreases int64
	// Cap is the most Rate climbs to before HoldUntil: min(Configured,
	// max(the rate the decrease left, Hit × 3 ÷ 4)) while the hold runs,
	// Configured otherwise (a probed budget after a 429 answered a probe:
	// the rate before the probe).
	Cap int
	// Start is a probed budget's start (WithGlobalRateStart; 0: not
	// probed): it climbs by probes, not with time.
	Start int
	// Proven is the budget's proof, per Window: the most sends one window
	// held in a 10-s epoch that ended with no burst of 429s since the last
	// binding one (0: none). Store.LowerBudget does not go below it, and
	// leaves a budget whose proof covers its rate as it is (counted in
	// Forgiven, the proof spent).
	Proven   int
	Forgiven int64
	// Released counts the holds a binding burst at the budget's floor
	// released (Store.LowerBudget): a burst there is no limit, so the
	// decreases that brought the budget down to it are not held to.
	Released int64
}

// budget is one send budget's field of {T}:s:learned, its configured
// rate, its start (0: not probed), its send log's key and its window.
type budget struct {
	field             string
	configured, start int
	log               string
	window            time.Duration
}

// budgetsOf are the budgets that hold queue's sends: its own ("q:<queue>")
// when it has one, and the store's ("global") unless the queue is outside
// it; none when neither is configured.
func (s *core) budgetsOf(queue string) []budget {
	var out []budget
	qc := s.opt.queues[queue]
	if qc.Rate > 0 {
		out = append(out, budget{field: "q:" + queue, configured: qc.Rate, log: s.keys.queueKey(queue, "rate"), window: qc.Window})
	}
	if s.opt.rate > 0 && !qc.OutsideGlobal {
		out = append(out, budget{field: "global", configured: s.opt.rate, start: s.opt.rateStart, log: s.keys.rate(), window: s.opt.window})
	}
	return out
}

// LowerBudget halves, at once, every budget that holds queue's sends (its
// own, QueueConfig.Rate, and the store's global rate unless the queue is
// OutsideGlobal) and binds, because the receiver showed a limit across
// every lane (why says which evidence, e.g. "429 from several chats"):
// each one's rate becomes max(floor, rate now ÷ 2) (see LearnConfig),
// shared by every claimer at its next claim. A budget binds when its send
// log counts at least rate now ÷ LearnBindingDivisor sends in its last
// window (sends in flight included); one that does not is left alone: its
// sends ran below what the halving would leave, so the push-back says
// nothing about its rate, and halving it again at each burst would only
// take it down step by step to its floor for nothing (the caller's pause
// for the 429's retry_after is the answer there). A binding budget is then
// weighed against its proof (LearnedBudget.Proven): the most sends one of
// its windows held in a 10-s epoch that ended with no burst since the last
// binding one, noted by every claim. A proof of at least its rate now
// shows that rate held for a whole epoch, so the burst is no limit at it:
// the budget is left as it is (LearnedBudget.Forgiven counts it). Else it
// goes down to max(floor, rate now ÷ 2, proof). Either way the proof is
// spent: a second binding burst before the next clean epoch ends lowers
// it, as a real limit below the rate does once the pause for its
// retry_after ends (random bursts, chaos seed 7's 16 in 10 minutes, took
// budgets that had run 50/s for minutes to their floor, and the replies
// overflowed; docs/delivery.md, "Down at once"). A budget's second
// decrease, or binding burst, within LearnConfig.Cooldown of its last one
// (a probe taken back by RevertProbe included) changes nothing. A binding
// burst at a budget's floor lowers nothing and releases the hold a
// decrease left running (LearnedBudget.Released): a burst there is no
// limit (LearnFloorDivisor), so neither were those that brought the
// budget down (chaos seed 7: clustered random bursts halved the probed
// total to its floor, and a 10-minute hold kept it there while the
// replies overflowed); it climbs again as after a hold. It returns whether any budget
// went down and the lowest of their rates now (per window); (false, 0)
// when queue has no budget. One script call per budget. Errors:
// ErrInvalid for a bad queue name or a why over 200 bytes; the server's.
// Inspector.LowerBudget halves whether the budgets bind or not.
func (s *Store) LowerBudget(ctx context.Context, queue, why string) (lowered bool, rate int, err error) {
	o, err := s.lower(ctx, queue, why, LearnBindingDivisor)
	return o.Lowered, o.Rate, err
}

// Lowering is what LowerBudgetOutcome did to the budgets that hold a
// queue's sends.
type Lowering struct {
	// Lowered: a budget went down; Rate is the lowest of their rates now
	// (per window; 0 when the queue has no budget).
	Lowered bool
	Rate    int
	// Forgiven: a budget's proof covered its rate, so it was kept
	// (LearnedBudget.Forgiven); Released: a budget at its floor had its
	// hold released (LearnedBudget.Released).
	Forgiven, Released bool
}

// LowerBudgetOutcome is LowerBudget saying also whether a burst was
// forgiven by a budget's proof or released a hold at a floor (for a
// caller's log). Errors as LowerBudget's.
func (s *Store) LowerBudgetOutcome(ctx context.Context, queue, why string) (Lowering, error) {
	return s.lower(ctx, queue, why, LearnBindingDivisor)
}

// LowerBudget halves every budget that holds queue's sends at once, as
// Store.LowerBudget does, whether it binds or not and whatever its proof
// (which it spends): an operator's "slow
// down" (Telegram's support asked, a limit known from elsewhere). Errors
// as Store.LowerBudget's.
func (in *Inspector) LowerBudget(ctx context.Context, queue, why string) (lowered bool, rate int, err error) {
	o, err := in.lower(ctx, queue, why, 0)
	return o.Lowered, o.Rate, err
}

// LearnBindingDivisor: Store.LowerBudget lowers a budget only when its
// send log counts at least its rate now ÷ LearnBindingDivisor sends in the
// last window.
const LearnBindingDivisor = 2

// lower is LowerBudgetOutcome with the binding divisor d (0: lower every
// budget).
func (s *core) lower(ctx context.Context, queue, why string, d int) (o Lowering, err error) {
	if err := checkWhy(queue, why); err != nil {
		return o, err
	}
	lc := s.opt.learn.withDefaults()
	for i, b := range s.budgetsOf(queue) {
		c := b.configured
		base := c
		if b.start > 0 && b.start < c {
			base = b.start
		}
		floor := max(1, (base+LearnFloorDivisor-1)/LearnFloorDivisor)
		step := max(1, (c+LearnStepDivisor-1)/LearnStepDivisor)
		args := []string{"lower", b.field, strconv.Itoa(c), strconv.Itoa(floor), strconv.Itoa(step),
			ms(lc.Every), ms(lc.Hold), ms(lc.Cooldown), why, strconv.Itoa(b.start), ms(b.window), strconv.Itoa(d), ms(lc.Epoch)}
		v, err := s.scripts.learn.Exec(ctx, s.c, []string{s.keys.learned(), b.log}, args).AsIntSlice()
		if err != nil {
			return o, fmt.Errorf("lanes: lower budget %s of %s: %w", b.field, queue, err)
		}
		if len(v) != 2 {
			return o, fmt.Errorf("lanes: lower budget %s of %s: malformed reply", b.field, queue)
		}
		o.Lowered = o.Lowered || v[0] == 1
		o.Forgiven = o.Forgiven || v[0] == 3
		o.Released = o.Released || v[0] == 4
		if i == 0 || int(v[1]) < o.Rate {
			o.Rate = int(v[1])
		}
	}
	return o, nil
}

// checkWhy checks LowerBudget's and RevertProbe's queue and why (ErrInvalid).
func checkWhy(queue, why string) error {
	if err := validQueue(queue); err != nil {
		return err
	}
	if len(why) > 200 {
		return fmt.Errorf("%w: lower budget: why of %d bytes: at most 200", ErrInvalid, len(why))
	}
	return nil
}

// RevertProbe takes a probed global rate (WithGlobalRateStart) back when
// Telegram answered the send of lease l with a 429 (why says which, e.g.
// "429 while probing"): to the rate before the raise that reached the rate
// the send was claimed at, among the rate's last changes before that
// claim. For a send claimed at a raise that is the rate before the raise,
// however many raises came after it (an answer can come back after the
// next probe). For one claimed at a rate a revert went back to, it is the
// rate before the earlier raise to that rate: a revert lands on a rate a
// raise reached, which had held only as long as sends did not fill
// Telegram's window, and a 429 there shows it does not hold (chaos seed 11
// settled one above the emulator's window this way, and drew 429s in
// bunches until its hold ended). A rate no raise reached (the start, a
// halving's) is not gone below this way. It is held at most there for
// LearnConfig.Hold, doubled for each failed probe in a row (at most 16
// times; a step down from a revert's rate is not a failed probe). One 429
// is evidence enough: going back one step costs little, where
// LowerBudget's halving waits for 429s from several chats. But a send
// claimed at a rate the budget's proof covers (LearnedBudget.Proven, see
// LowerBudget) takes nothing back: that rate held a whole clean epoch, so
// the 429 is no failed probe (counted in LearnedBudget.Forgiven; the first
// such 429 spends the proof, the rest of its burst within
// LearnConfig.Cooldown is weighed against what it spent). It returns
// whether the rate went back and the global rate now; (false, 0) when l's
// queue is not held by a probed global rate, (false, rate) when no raise
// among the changes kept reached the send's rate, or the rate is already
// at most that. Call it before the lease is settled (the job's claim time
// is read from its hash; once the job is gone, now counts). One script
// call. Errors: ErrInvalid for a bad lease or a why over 200 bytes; the
// server's.
func (s *Store) RevertProbe(ctx context.Context, l Lease, why string) (reverted bool, rate int, err error) {
	if err := s.checkLease(l); err != nil {
		return false, 0, err
	}
	if err := checkWhy(l.Queue, why); err != nil {
		return false, 0, err
	}
	if s.opt.rateStart == 0 || s.opt.queues[l.Queue].OutsideGlobal {
		return false, 0, nil
	}
	lc := s.opt.learn.withDefaults()
	args := []string{"revert", "global", strconv.Itoa(s.opt.rate), ms(lc.Hold), why, ms(lc.Epoch), ms(lc.Cooldown)}
	v, err := s.scripts.learn.Exec(ctx, s.c, []string{s.keys.learned(), s.keys.job(l.Queue, l.ID)}, args).AsIntSlice()
	if err != nil {
		return false, 0, fmt.Errorf("lanes: revert probe of %s: %w", l.Queue, err)
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("lanes: revert probe of %s: malformed reply", l.Queue)
	}
	return v[0] == 1, int(v[1]), nil
}

// Learned returns every configured budget's learned rate, the store's
// global one first (Queue ""), then the queues' own by name. One script
// call. Errors: the server's.
func (in *Inspector) Learned(ctx context.Context) ([]LearnedBudget, error) {
	var out []LearnedBudget
	args := []string{"read", ms(in.opt.learn.withDefaults().Epoch)}
	if in.opt.rate > 0 {
		out = append(out, LearnedBudget{Configured: in.opt.rate, Window: in.opt.window, Start: in.opt.rateStart})
		args = append(args, "global", strconv.Itoa(in.opt.rate), strconv.Itoa(in.opt.rateStart))
	}
	names := make([]string, 0, len(in.opt.queues))
	for q, qc := range in.opt.queues {
		if qc.Rate > 0 {
			names = append(names, q)
		}
	}
	sort.Strings(names)
	for _, q := range names {
		qc := in.opt.queues[q]
		out = append(out, LearnedBudget{Queue: q, Configured: qc.Rate, Window: qc.Window})
		args = append(args, "q:"+q, strconv.Itoa(qc.Rate), "0")
	}
	if len(out) == 0 {
		return nil, nil
	}
	arr, err := in.scripts.learn.Exec(ctx, in.c, []string{in.keys.learned()}, args).ToArray()
	if err != nil {
		return nil, fmt.Errorf("lanes: learned rates: %w", err)
	}
	if len(arr) != len(out)+1 {
		return nil, fmt.Errorf("lanes: learned rates: malformed reply")
	}
	for i := range out {
		if err := parseLearned(&out[i], arr[i]); err != nil {
			return nil, fmt.Errorf("lanes: learned rates: %w", err)
		}
	}
	return out, nil
}

// parseLearned fills b from one budget's row of learn.lua's read.
func parseLearned(b *LearnedBudget, m valkey.ValkeyMessage) error {
	row, err := m.ToArray()
	if err != nil || len(row) != 11 {
		return fmt.Errorf("malformed row")
	}
	var n [11]int64
	for _, i := range []int{0, 1, 2, 4, 5, 6, 8, 9, 10} {
		if n[i], err = row[i].AsInt64(); err != nil {
			return fmt.Errorf("malformed row: %w", err)
		}
	}
	b.Why, err = row[3].ToString()
	if err != nil {
		return fmt.Errorf("malformed why: %w", err)
	}
	b.Rate, b.Hit, b.Decreases, b.Cap = int(n[0]), int(n[2]), n[4], int(n[6])
	b.Proven, b.Forgiven, b.Released = int(n[8]), n[9], n[10]
	if n[1] > 0 {
		b.Lowered, b.HoldUntil = time.UnixMilli(n[1]), time.UnixMilli(n[5])
	}
	return nil
}
