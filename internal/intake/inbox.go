package intake

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/luascript"
	"github.com/codemojex/codemojex/tgapi"
)

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and loaded with luascript.Must.
//
//go:embed lua/*.lua
var luaFS embed.FS

// ErrLeaseLost is returned (wrapped) by the intake when the poller lease is
// no longer held by this process: another poller took over, nothing was
// written.
var ErrLeaseLost = errors.New("intake: poller lease lost")

// leaseErr maps a script's "LEASE ..." error reply to ErrLeaseLost.
func leaseErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "LEASE ") {
		return fmt.Errorf("%w: %v", ErrLeaseLost, err)
	}
	return err
}

// Update is one update as fetched: its id and its JSON, kept verbatim so
// the queue holds exactly what Telegram sent (tgapi.Update, what getUpdates
// hands out).
type Update = tgapi.Update

// Inbox is the durable record of updates in Valkey (see the package doc):
// the getUpdates offset and re-base epoch, the update queue (a lanes queue,
// QueueName, one lane per chat), the per-lane handled marks, the recorded
// times, journals, and the poller's lease and heartbeat as /healthz reads
// them. Every Valkey command of the intake is a method of Inbox or Lease.
// Safe for concurrent use.
type Inbox struct {
	c                           valkey.Client
	store                       *lanes.Store
	keys                        Keys
	offset, rebase, fin, forget *valkey.Lua
	moveMarks, moveFloors       *valkey.Lua
	now                         func() time.Time
	limiter                     *flood.Limiter
	dropped                     func(context.Context, []flood.Drop)
	ignores                     func(raw json.RawMessage) string
	ignored                     func(reason string)
	replicas                    ReplicaWait
}

// NewInbox returns the inbox under hash tag tag, on client c, with the
// update queue on store (built with StoreOptions and lanes.WithTag(tag)).
func NewInbox(c valkey.Client, store *lanes.Store, tag string) *Inbox {
	return &Inbox{c: c, store: store, keys: Keys{tag: tag}, offset: luascript.Must(luaFS, "offset"),
		rebase: luascript.Must(luaFS, "rebase"), fin: luascript.Must(luaFS, "done"),
		forget: luascript.Must(luaFS, "forget"), moveMarks: luascript.Must(luaFS, "movemarks"),
		moveFloors: luascript.Must(luaFS, "movefloors"), now: time.Now}
}

// WithLimits makes the inbox's records apply the intake limits of l
// (package flood; nil or limits off: none) and tell dropped (may be nil)
// of the updates they dropped, once the rest of their batch is on the
// queue. The check is part of the call that writes the batch's recorded
// times (flood.Limiter.Record): no round trip is added. A dropped update
// is not enqueued, so no handler sees it, and is confirmed to Telegram
// like the rest of its batch (Record moves the offset past it; Accept
// counts it as recorded). Call it before the inbox is used; it returns in.
func (in *Inbox) WithLimits(l *flood.Limiter, dropped func(context.Context, []flood.Drop)) *Inbox {
	if l != nil && !l.Limits().On() {
		l = nil
	}
	in.limiter, in.dropped = l, dropped
	return in
}

// WithFilter makes the inbox's records drop the updates the bot does not
// act on before anything is written for them: ignores(raw) is why the bot
// ignores the update of JSON raw ("" when it acts on it, or may: the
// caller's classifier, internal/update's Mux.Ignores), and ignored (may be
// nil) is told each drop's reason. A dropped update is confirmed to
// Telegram like the rest of its batch (Record moves the offset past it;
// Accept answers as for one recorded), is not enqueued, counts on no
// intake limit (WithLimits) and writes nothing to Valkey: no recorded
// time, no job, no lane. An update fetched or delivered again is asked
// and told again. Call it before the inbox is used; it returns in.
func (in *Inbox) WithFilter(ignores func(raw json.RawMessage) string, ignored func(reason string)) *Inbox {
	in.ignores, in.ignored = ignores, ignored
	return in
}

// acted returns the updates of ups the bot acts on (all of them without a
// filter, WithFilter), telling ignored of each other one.
func (in *Inbox) acted(ups []Update) []Update {
	if in.ignores == nil {
		return ups
	}
	kept := ups[:0:0]
	for _, u := range ups {
		why := in.ignores(u.JSON)
		if why == "" {
			kept = append(kept, u)
			continue
		}
		if in.ignored != nil {
			in.ignored(why)
		}
	}
	return kept
}

// Keys returns the inbox's key builder (tests read the keys it writes).
func (in *Inbox) Keys() Keys { return in.keys }

// Store returns the update queue's lanes store.
func (in *Inbox) Store() *lanes.Store { return in.store }

// Offset returns the getUpdates offset to send: the last recorded update_id
// + 1, or 0 when nothing was ever recorded.
func (in *Inbox) Offset(ctx context.Context) (int64, error) {
	return in.readInt(ctx, in.keys.Offset(), "inbox offset")
}

// Epoch returns the current re-base epoch (0 before any re-base).
func (in *Inbox) Epoch(ctx context.Context) (int64, error) {
	return in.readInt(ctx, in.keys.Rebases(), "update epoch")
}

// readInt reads the integer at key, 0 when key does not exist. Errors: the
// server's (or a value that is not an integer), named what.
func (in *Inbox) readInt(ctx context.Context, key, what string) (int64, error) {
	v, err := in.c.Do(ctx, in.c.B().Get().Key(key).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("intake: %s: %w", what, err)
	}
	return v, nil
}

// Record puts the updates (in update_id order) whose id is at or above the
// stored offset on the update queue, then advances the offset past them
// (only while token holds the poller lease): nothing is confirmed to
// Telegram before it is on the queue. Recording the same update again (a
// batch fetched again after a crash between the two steps) adds nothing
// while its job waits or runs, and is skipped by the handler (the lane's
// handled mark) after. With WithReplicaWait it returns once replicas
// acknowledged its writes (or the wait's timeout passed). It returns how
// many jobs were new and the next offset. Errors: ErrLeaseLost (the offset is not moved), lanes.ErrInvalid
// for an update over MaxUpdateBytes (nothing written), the server's error.
func (in *Inbox) Record(ctx context.Context, token string, ups []Update) (int, int64, error) {
	off, epoch, err := in.pollState(ctx, token)
	if err != nil {
		return 0, 0, err
	}
	fresh := ups[:0:0]
	for _, u := range ups {
		if u.ID >= off {
			fresh = append(fresh, u)
		}
	}
	if len(fresh) == 0 {
		// Fetched again (a record that failed after its writes, its wait
		// included): wait again before it is confirmed.
		if len(ups) > 0 {
			if err := in.waitReplicas(ctx); err != nil {
				return 0, 0, err
			}
		}
		return 0, off, nil
	}
	added, err := in.enqueue(ctx, epoch, true, fresh)
	if err != nil {
		return 0, 0, err
	}
	next, err := in.setOffset(ctx, token, "", fresh[len(fresh)-1].ID+1)
	if err != nil {
		return 0, 0, err
	}
	if err := in.waitReplicas(ctx); err != nil {
		return 0, 0, err
	}
	return added, next, nil
}

// pollState reads the offset and the epoch and checks that token holds the
// poller lease, in one MGET: a poller that lost its lease enqueues nothing
// (and, should it lose the lease right after, its offset write is fenced;
// what it enqueued is recorded once all the same).
func (in *Inbox) pollState(ctx context.Context, token string) (off, epoch int64, err error) {
	vs, err := in.c.Do(ctx, in.c.B().Mget().Key(in.keys.Lease(), in.keys.Offset(), in.keys.Rebases()).Build()).ToArray()
	if err == nil && len(vs) != 3 {
		err = fmt.Errorf("MGET answered %d values, want 3", len(vs))
	}
	if err != nil {
		return 0, 0, fmt.Errorf("intake: inbox offset: %w", err)
	}
	if holder, _ := vs[0].ToString(); holder != token {
		return 0, 0, fmt.Errorf("%w: held by %q", ErrLeaseLost, holder)
	}
	off, _ = vs[1].AsInt64()
	epoch, _ = vs[2].AsInt64()
	return off, epoch, nil
}

// Rebase records a batch that lies entirely below the stored offset, handed
// out again because the server ignored the offset (its update_id sequence
// was reset): it begins re-base E (rebase.lua; a re-base begun before a
// crash is resumed with its E), puts the batch on the update queue in epoch
// E, then sets the offset past the batch, only while token holds the lease.
// It returns the next offset and E. Errors: ErrLeaseLost, an error when
// the batch is not entirely below the offset (nothing written either way),
// the server's error.
func (in *Inbox) Rebase(ctx context.Context, token string, ups []Update) (int64, int64, error) {
	args := make([]string, 0, 1+len(ups))
	args = append(args, token)
	for _, u := range ups {
		args = append(args, strconv.FormatInt(u.ID, 10))
	}
	keys := []string{in.keys.Lease(), in.keys.Offset(), in.keys.Rebases(), in.keys.Rebasing()}
	epoch, err := in.rebase.Exec(ctx, in.c, keys, args).AsInt64()
	if err != nil {
		return 0, 0, fmt.Errorf("intake: begin re-base: %w", leaseErr(err))
	}
	if _, err := in.enqueue(ctx, epoch, true, ups); err != nil {
		return 0, 0, err
	}
	next, err := in.setOffset(ctx, token, "rebase", ups[len(ups)-1].ID+1)
	if err != nil {
		return 0, 0, err
	}
	if err := in.waitReplicas(ctx); err != nil {
		return 0, 0, err
	}
	return next, epoch, nil
}

// Accept records updates received by a webhook (no offset, no lease: any
// number of processes receive): each is put on the update queue in the
// current epoch, and an update_id received again (Telegram resends after a
// timeout or an error answer) adds nothing while its job waits or runs, and
// is skipped by the handler after. With WithReplicaWait it returns once
// replicas acknowledged its writes (or the wait's timeout passed). It
// returns how many jobs were new.
// Errors: lanes.ErrInvalid for an update over MaxUpdateBytes (nothing
// written), the server's error (the caller answers 500, so Telegram sends
// it again).
func (in *Inbox) Accept(ctx context.Context, ups []Update) (int, error) {
	epoch, err := in.Epoch(ctx)
	if err != nil {
		return 0, err
	}
	n, err := in.enqueue(ctx, epoch, false, ups)
	if err != nil {
		return 0, err
	}
	if err := in.waitReplicas(ctx); err != nil {
		return 0, err
	}
	return n, nil
}

// enqueue puts ups on the update queue in epoch (one job per update, its
// id JobID(epoch, update_id), on lane LaneOf; inOrder when they were
// fetched by getUpdates, see Claimed.InOrder) and records their recorded
// times (ZADD NX: a repeat keeps the first). The times are written first:
// a job is claimable as soon as it is enqueued, and its handler's finish
// (done.lua) forgets its time, so a time written after the job could
// outlive it and count as an update waiting forever. For the same reason,
// when some job was there already (its update waiting, being handled, or
// finished but not yet acked), the times this call wrote are forgotten for
// the updates that are finished (forget.lua, atomic with done.lua): an
// update still waiting or running keeps its time, whichever record
// enqueued it. Should the enqueue fail, the times stay until the caller
// records the updates again (the poller fetches the batch again, the
// offset not moved; a webhook answers 500 and Telegram resends) and they
// are handled; an update too large for the queue is refused before
// anything is written. The updates the bot does not act on (WithFilter)
// are dropped first: nothing is written for them.
func (in *Inbox) enqueue(ctx context.Context, epoch int64, inOrder bool, ups []Update) (int, error) {
	if ups = in.acted(ups); len(ups) == 0 {
		return 0, nil
	}
	now := in.now()
	items := make([]lanes.Item, len(ups))
	var zadds valkey.Commands // the plain record of the times, without limits
	for i, u := range ups {
		items[i] = lanes.Item{Group: LaneOf(u.JSON), ID: JobID(epoch, u.ID), Payload: payload(now, inOrder, u.JSON)}
		if len(items[i].Payload) > maxPayload {
			return 0, fmt.Errorf("intake: record updates: %w: update %d of %d bytes: at most %d", lanes.ErrInvalid, u.ID, len(u.JSON), MaxUpdateBytes)
		}
		if in.limiter == nil {
			zadds = append(zadds, in.c.B().Zadd().Key(in.keys.Recorded()).Nx().ScoreMember().ScoreMember(float64(now.UnixMilli()), string(items[i].ID)).Build())
		}
	}
	var added []int // the updates whose time this call wrote
	var drops []flood.Drop
	if in.limiter != nil {
		var err error
		if items, ups, added, drops, err = in.limit(ctx, now, items, ups); err != nil {
			return 0, err
		}
		if len(items) == 0 {
			in.tellDropped(ctx, drops)
			return 0, nil
		}
	} else {
		for i, r := range in.c.DoMulti(ctx, zadds...) {
			n, err := r.AsInt64()
			if err != nil {
				return 0, fmt.Errorf("intake: record update times: %w", err)
			}
			if n == 1 {
				added = append(added, i)
			}
		}
	}
	res, err := in.store.Enqueue(ctx, QueueName, items)
	if err != nil {
		return 0, fmt.Errorf("intake: record updates: %w", err)
	}
	if res.Added < len(items) && len(added) > 0 {
		keys := []string{in.keys.Recorded(), in.keys.LegacyDone(), in.keys.LegacyFloor()}
		args := make([]string, 0, 5*len(added))
		for _, i := range added {
			keys = append(keys, in.keys.Seen(items[i].Group), in.keys.Done(items[i].Group))
			args = append(args, string(items[i].ID), items[i].Group, strconv.FormatInt(epoch, 10),
				strconv.FormatInt(ups[i].ID, 10), seenMember(epoch, ups[i].ID))
		}
		if err := in.forget.Exec(ctx, in.c, keys, args).Error(); err != nil {
			return 0, fmt.Errorf("intake: record update times: %w", err)
		}
	}
	in.tellDropped(ctx, drops)
	return res.Added, nil
}

// limit writes the recorded times of items (updates ups) through the
// intake limits (flood.Limiter.Record: the same one call as the plain
// ZADD NX) and returns the items and updates within the limits, the
// indexes (into those) of the ones whose time this call wrote, and the
// drops.
func (in *Inbox) limit(ctx context.Context, now time.Time, items []lanes.Item, ups []Update) ([]lanes.Item, []Update, []int, []flood.Drop, error) {
	subjects := make([]flood.Subject, len(ups))
	members := make([]string, len(ups))
	for i, u := range ups {
		subjects[i], members[i] = flood.SubjectOf(u.JSON), string(items[i].ID)
	}
	res, err := in.limiter.Record(ctx, in.c, in.keys.Recorded(), now, subjects, members)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("intake: record update times: %w", err)
	}
	keptItems, keptUps := items[:0:0], ups[:0:0]
	var added []int
	var drops []flood.Drop
	for i, r := range res {
		if r.Outcome == flood.Dropped {
			drops = append(drops, flood.Drop{UpdateID: ups[i].ID, Subject: subjects[i], Result: r})
			continue
		}
		if r.Outcome == flood.Recorded {
			added = append(added, len(keptItems))
		}
		keptItems, keptUps = append(keptItems, items[i]), append(keptUps, ups[i])
	}
	return keptItems, keptUps, added, drops, nil
}

func (in *Inbox) tellDropped(ctx context.Context, drops []flood.Drop) {
	if len(drops) > 0 && in.dropped != nil {
		in.dropped(ctx, drops)
	}
}

func (in *Inbox) setOffset(ctx context.Context, token, mode string, next int64) (int64, error) {
	keys := []string{in.keys.Lease(), in.keys.Offset(), in.keys.Rebasing()}
	s, err := in.offset.Exec(ctx, in.c, keys, []string{token, mode, strconv.FormatInt(next, 10)}).ToString()
	if err != nil {
		return 0, fmt.Errorf("intake: advance offset: %w", leaseErr(err))
	}
	off, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("intake: advance offset: unexpected reply %q", s)
	}
	return off, nil
}

// Claimed is an update claimed from the update queue by a handler.
type Claimed struct {
	// Job is the lanes job (its lease settles the update).
	Job lanes.Job
	// Lane is the update's lane (its chat, see LaneOf).
	Lane string
	// Epoch and ID are the update's re-base epoch and update_id.
	Epoch, ID int64
	// JSON is the update as Telegram sent it.
	JSON json.RawMessage
	// Recorded is when it was recorded (the recording process's clock, ms).
	Recorded time.Time
	// InOrder: it was fetched by getUpdates (Record, Rebase), which hands
	// out a chat's updates in update_id order, so no earlier update of its
	// lane can be recorded after it; its finish then keeps no finished set
	// for its lane (see MarkHandled). False for a webhook's (Accept).
	InOrder bool
}

// ErrMalformed is wrapped by Claim's per-update error for a job that is
// not an update the intake wrote (see Claimed); the caller dead-letters it.
var ErrMalformed = errors.New("intake: malformed update job")

// Claim claims up to max updates of one lane (lanes' weighted rotation: a
// lane of weight w gets up to w per turn), each held for lease. It returns
// the updates in order, with a per-update decoding error (ErrMalformed)
// where a job is not one the intake wrote, and, when nothing was claimable,
// how long until something may be (lanes.Claimed.RetryIn). Errors: the
// server's.
func (in *Inbox) Claim(ctx context.Context, lease time.Duration, max int) ([]Claimed, []error, time.Duration, error) {
	c, err := in.ClaimAndAck(ctx, lease, max, nil)
	return c.Updates, c.Errs, c.RetryIn, err
}

// Claims is what ClaimAndAck handed out and settled.
type Claims struct {
	// Updates are the claimed updates of one lane, in order (see Claim);
	// Errs has their decoding errors (ErrMalformed wrapped, nil when fine).
	Updates []Claimed
	Errs    []error
	// RetryIn, when Updates is empty: see lanes.Claimed.RetryIn.
	RetryIn time.Duration
	// Acked has one entry per ack, in order: nil when its job was acked,
	// else lanes.ErrStaleLease or lanes.ErrNoJob (wrapped) as Ack returns.
	Acked []error
}

// ClaimAndAck acks the jobs of acks (updates already marked handled with
// MarkHandled) and then claims as Claim does, in one atomic call and one
// round trip (lanes.ClaimRequest.Ack): a handler that finished a batch
// settles it and gets its next batch at once. At most lanes.MaxClaim acks.
// When it returns an error the acks may or may not have been applied:
// settle each again with Ack (which answers nil for a job already acked).
// Errors: the server's, lanes.ErrInvalid (wrapped) for a bad ack.
func (in *Inbox) ClaimAndAck(ctx context.Context, lease time.Duration, max int, acks []Claimed) (Claims, error) {
	return in.ClaimAndAckAs(ctx, "", lease, max, acks)
}

// ClaimAndAckAs is ClaimAndAck by claimer (lanes.ClaimRequest.Claimer: a
// consumer that beats its heart with consumer.KeepAlive, so its updates
// are recovered within seconds if it dies; "" for none).
func (in *Inbox) ClaimAndAckAs(ctx context.Context, claimer string, lease time.Duration, max int, acks []Claimed) (Claims, error) {
	req := lanes.ClaimRequest{Queues: []string{QueueName}, Lease: lease, Max: max, Claimer: claimer}
	for _, a := range acks {
		req.Ack = append(req.Ack, a.Job.Lease)
	}
	c, err := in.store.Claim(ctx, req)
	if err != nil {
		return Claims{}, fmt.Errorf("intake: claim updates: %w", err)
	}
	out := Claims{Updates: make([]Claimed, len(c.Jobs)), Errs: make([]error, len(c.Jobs)), RetryIn: c.RetryIn, Acked: c.Acked}
	for i, j := range c.Jobs {
		out.Updates[i] = Claimed{Job: j, Lane: j.Group}
		epoch, id, err := parseJobID(j.ID)
		if err != nil {
			out.Errs[i] = fmt.Errorf("%w: %v", ErrMalformed, err)
			continue
		}
		out.Updates[i].Epoch, out.Updates[i].ID = epoch, id
		head, body, ok := bytes.Cut(j.Payload, []byte("\n"))
		head, inOrder := bytes.CutSuffix(head, []byte(inOrderMark))
		out.Updates[i].InOrder = inOrder
		ms, perr := strconv.ParseInt(string(head), 10, 64)
		if !ok || perr != nil {
			out.Errs[i] = fmt.Errorf("%w: job %s: no recorded time", ErrMalformed, j.ID)
			continue
		}
		out.Updates[i].Recorded, out.Updates[i].JSON = time.UnixMilli(ms), json.RawMessage(body)
	}
	return out, nil
}

// Finished-set bounds (done.lua): each lane remembers its last
// SeenCap finished update ids for SeenTTL after its last finish (Telegram
// keeps an unconfirmed update for 24 h). Webhook deliveries arrive out of
// order (up to max_connections=40 at once, resends after an error, any
// number of receivers), so an id below the lane's handled mark is looked
// up here instead of assumed handled; ids trimmed from the set, or older
// than an expired set, count as handled (a late arrival that far behind is
// a resend). The lane's floor (the highest id trimmed, or its mark when the
// set was created beside one) is one more member of the set (score 1), so
// it expires with it: a floor only counts while the set exists. Memory: at
// most SeenCap+1 members per chat active within SeenTTL, nothing after.
const (
	SeenCap = 64
	SeenTTL = 24 * time.Hour
)

// seenMember is u's member of its lane's finished set: epoch and id
// zero-padded, so lexical order is (epoch, update_id) order.
func seenMember(epoch, id int64) string { return fmt.Sprintf("%020d:%020d", epoch, id) }

// floorPrefix starts the member of a finished set holding its floor: "f" and
// the floor's padded member (seenMember), score 1, so it ranks after every
// finished id (score 0) and never collides with one.
const floorPrefix = "f"

// Handled reports whether u was handled (or dead-lettered) already: its id
// is in its lane's finished set, or it is at or below its lane's handled
// mark and either at or below the lane's floor (the set's floor member,
// or the lane's field of the hash of floors of before, the higher) or the
// lane has no set
// (expired, or never kept: a lane only getUpdates fed). An id below the
// mark that is in none of these was not handled: a webhook update that
// arrived after a newer one of its chat (it is then handled after it).
// Under getUpdates, updates arrive in order, so an id below the mark is
// always in the set or below the floor, or its lane has no set. Errors:
// the server's.
func (in *Inbox) Handled(ctx context.Context, u Claimed) (bool, error) {
	member := seenMember(u.Epoch, u.ID)
	rs := in.c.DoMulti(ctx,
		in.c.B().Zscore().Key(in.keys.Seen(u.Lane)).Member(member).Build(),
		in.c.B().Exists().Key(in.keys.Seen(u.Lane)).Build(),
		in.c.B().Hget().Key(in.keys.LegacyFloor()).Field(u.Lane).Build(),
		in.c.B().Hget().Key(in.keys.Done(u.Lane)).Field(u.Lane).Build(),
		in.c.B().Hget().Key(in.keys.LegacyDone()).Field(u.Lane).Build(),
		in.c.B().Zrange().Key(in.keys.Seen(u.Lane)).Min("1").Max("1").Byscore().Build(),
	)
	if err := rs[0].Error(); err == nil {
		return true, nil
	} else if !valkey.IsValkeyNil(err) {
		return false, fmt.Errorf("intake: finished set of lane %s: %w", u.Lane, err)
	}
	exists, err := rs[1].AsInt64()
	if err != nil {
		return false, fmt.Errorf("intake: finished set of lane %s: %w", u.Lane, err)
	}
	floor, err := rs[2].ToString()
	if err != nil && !valkey.IsValkeyNil(err) {
		return false, fmt.Errorf("intake: floor of lane %s: %w", u.Lane, err)
	}
	fs, err := rs[5].AsStrSlice()
	if err != nil {
		return false, fmt.Errorf("intake: floor of lane %s: %w", u.Lane, err)
	}
	if len(fs) > 0 {
		if f := strings.TrimPrefix(fs[0], floorPrefix); f > floor {
			floor = f
		}
	}
	e, id, err := higherMark(u.Lane, rs[3], rs[4])
	if err != nil {
		return false, err
	}
	if !(e > u.Epoch || (e == u.Epoch && id >= u.ID)) {
		return false, nil // above the mark: new
	}
	return exists == 0 || member <= floor, nil
}

// Finish settles a handled update: MarkHandled, then Ack.
// Errors: lanes.ErrStaleLease (wrapped) when the job's lease had expired
// (the update may run again elsewhere; the mark makes that a no-op), the
// server's.
func (in *Inbox) Finish(ctx context.Context, u Claimed) error {
	if err := in.MarkHandled(ctx, u); err != nil {
		return err
	}
	if err := in.store.Ack(ctx, u.Job.Lease); err != nil {
		return fmt.Errorf("intake: finish update %d: %w", u.ID, err)
	}
	return nil
}

// MarkHandled records that u was handled: raises its lane's handled mark,
// adds it to the lane's finished set (unless u is InOrder and the lane has
// no set: then every update of the lane at or below the mark is finished,
// which the mark alone says, as for a lane whose set expired; a lane that
// only getUpdates feeds keeps no set), forgets its recorded time, drops
// its journal and deletes the keys of forget (done.lua): keys under the
// inbox's tag that only guarded against u being handled twice (the
// notifier idempotency keys of its messages), which the mark makes
// needless from then on. Its job is still to be acked (Ack, or
// ClaimAndAck's acks): until then its lane's next update waits, and should
// the ack never come (a crash), the job is claimed again after its lease
// and skipped as handled. Errors: the server's.
func (in *Inbox) MarkHandled(ctx context.Context, u Claimed, forget ...string) error {
	return in.done(ctx, u, true, forget...)
}

// Ack acks u's job (after MarkHandled): nil also when it was acked already
// (lanes.ErrNoJob: an ack carried by a claim that failed may have been
// applied). Errors: lanes.ErrStaleLease (wrapped) when the lease was
// lost, the server's.
func (in *Inbox) Ack(ctx context.Context, u Claimed) error {
	err := in.store.Ack(ctx, u.Job.Lease)
	if err != nil && !errors.Is(err, lanes.ErrNoJob) {
		return fmt.Errorf("intake: ack update %d: %w", u.ID, err)
	}
	return nil
}

func (in *Inbox) done(ctx context.Context, u Claimed, handled bool, forget ...string) error {
	raise, inOrder := "0", "0"
	if handled {
		raise = "1"
	}
	if u.InOrder {
		inOrder = "1"
	}
	keys := append([]string{in.keys.Done(u.Lane), in.keys.Recorded(), in.keys.Journal(u.ID), in.keys.Seen(u.Lane), in.keys.LegacyFloor(), in.keys.LegacyDone()}, forget...)
	args := []string{u.Lane, strconv.FormatInt(u.Epoch, 10), strconv.FormatInt(u.ID, 10), string(u.Job.ID), raise,
		seenMember(u.Epoch, u.ID), strconv.Itoa(SeenCap), strconv.Itoa(int(SeenTTL / time.Second)), inOrder}
	if err := in.fin.Exec(ctx, in.c, keys, args).Error(); err != nil {
		return fmt.Errorf("intake: finish update %d: %w", u.ID, err)
	}
	return nil
}

// Retry records a failed attempt at u with reason (a handler panic, an
// infrastructure error): the update is tried again after delay, its lane
// parked meanwhile so the chat's later updates wait behind it, and past the
// queue's MaxAttempts it is dead-lettered with reason (dead is true) and its
// lane goes on. Errors: lanes.ErrStaleLease (wrapped), the server's.
func (in *Inbox) Retry(ctx context.Context, u Claimed, delay time.Duration, reason string) (dead bool, err error) {
	out, err := in.store.Nack(ctx, u.Job.Lease, delay, reason)
	if err != nil {
		return false, fmt.Errorf("intake: retry update %d: %w", u.ID, err)
	}
	if out != lanes.DeadLettered {
		return false, nil
	}
	return true, in.done(ctx, u, false)
}

// Dead dead-letters u at once with reason (it can never succeed, e.g. it
// does not decode). Errors as Retry.
func (in *Inbox) Dead(ctx context.Context, u Claimed, reason string) error {
	if err := in.store.Dead(ctx, u.Job.Lease, reason); err != nil {
		return fmt.Errorf("intake: dead-letter update %d: %w", u.ID, err)
	}
	return in.done(ctx, u, false)
}

// Postpone gives u back unhandled without using an attempt, to be claimed
// again after delay, its lane (the chat's updates) parked meanwhile so no
// later update of the chat overtakes it (lanes Store.Postpone): for an
// update that cannot go on until something outside it drains (its chat's
// reply lane is full). Errors as Retry; lanes.ErrInvalid for a delay
// under 1 ms.
func (in *Inbox) Postpone(ctx context.Context, u Claimed, delay time.Duration) error {
	if err := in.store.Postpone(ctx, u.Job.Lease, delay); err != nil {
		return fmt.Errorf("intake: postpone update %d: %w", u.ID, err)
	}
	return nil
}

// Release gives u back unhandled without using an attempt (a shutdown).
// Errors as Retry.
func (in *Inbox) Release(ctx context.Context, u Claimed) error {
	if err := in.store.Release(ctx, u.Job.Lease); err != nil {
		return fmt.Errorf("intake: release update %d: %w", u.ID, err)
	}
	return nil
}

// Backlog is the update queue's state for metrics.
type Backlog struct {
	// Pending updates wait on their lanes (incl. retries); InFlight are
	// being handled; Dead are dead-lettered (kept for /dlq).
	Pending, InFlight, Dead int
	// Recovered counts the updates whose handler's lease expired and were
	// taken back (lanes Stats.Recovered: ever, never reset).
	Recovered int64
	// Oldest is when the oldest update not yet handled was recorded (zero
	// when none).
	Oldest time.Time
}

// Backlog reads the update queue's counts (lanes Stats) and the oldest
// recorded time. Errors: the server's.
func (in *Inbox) Backlog(ctx context.Context) (Backlog, error) {
	st, err := in.store.Inspector().Stats(ctx, QueueName, 0)
	if err != nil {
		return Backlog{}, fmt.Errorf("intake: update queue stats: %w", err)
	}
	b := Backlog{Pending: st.Pending, InFlight: st.InFlight, Dead: st.Dead, Recovered: st.Recovered}
	if b.Oldest, err = in.Oldest(ctx); err != nil {
		return Backlog{}, err
	}
	return b, nil
}

// Oldest returns when the oldest update not yet handled (nor
// dead-lettered) was recorded, the zero time when none: one ZRANGE of the
// recorded times (Keys.Recorded). Errors: the server's.
func (in *Inbox) Oldest(ctx context.Context) (time.Time, error) {
	zs, err := in.c.Do(ctx, in.c.B().Zrange().Key(in.keys.Recorded()).Min("0").Max("0").Withscores().Build()).AsZScores()
	if err != nil {
		return time.Time{}, fmt.Errorf("intake: oldest update: %w", err)
	}
	if len(zs) == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(int64(zs[0].Score)), nil
}

// PollerState reads the poller lease's holder ("" when free) and the token
// of the poller whose last getUpdates succeeded within the heartbeat's
// expiry ("" when none), in one MGET.
func (in *Inbox) PollerState(ctx context.Context) (holder, polled string, err error) {
	vals, err := in.c.Do(ctx, in.c.B().Mget().Key(in.keys.Lease(), in.keys.Polled()).Build()).ToArray()
	if err == nil && len(vals) != 2 {
		err = fmt.Errorf("MGET answered %d values, want 2", len(vals))
	}
	if err != nil {
		return "", "", fmt.Errorf("intake: read the poller lease: %w", err)
	}
	holder, _ = vals[0].ToString() // "" when the lease is free
	polled, _ = vals[1].ToString()
	return holder, polled, nil
}

// Mark returns lane's handled mark: the epoch and update_id of the last
// update handled on it (id -1 when none). Errors: the server's.
func (in *Inbox) Mark(ctx context.Context, lane string) (epoch, id int64, err error) {
	rs := in.c.DoMulti(ctx,
		in.c.B().Hget().Key(in.keys.Done(lane)).Field(lane).Build(),
		in.c.B().Hget().Key(in.keys.LegacyDone()).Field(lane).Build())
	return higherMark(lane, rs[0], rs[1])
}

// migrateStep is how many lanes' marks one step of MigrateMarks moves.
const migrateStep = 500

// MigrateMarks moves the handled marks the intake kept in one hash before
// the buckets ({T}:app:in:done, see Keys.LegacyDone) into their buckets,
// in steps of about migrateStep lanes (one HSCAN and one movemarks.lua
// call each), and returns how many it moved. Safe to run while updates
// are handled, and by several processes at once: a step keeps the higher
// of two marks of a lane, and until a lane's mark is moved the readers
// (Handled, Mark, done.lua, forget.lua) take the higher of its old and
// its bucket's mark, so nothing is lost at any point. One pass over the
// old hash; a mark written there after the pass (by a process of a
// version before the buckets) is still read, and moved by done.lua when
// the lane's next update finishes, or by the next start. Errors: the
// server's (the marks moved before it stay moved).
func (in *Inbox) MigrateMarks(ctx context.Context) (int, error) {
	return in.migrateLanes(ctx, in.keys.LegacyDone(), in.keys.Done, in.moveMarks, "move handled marks")
}

// MigrateFloors empties the hash of per-lane floors the intake kept before
// the floor lived in the lane's finished set ({T}:app:in:floor, see
// Keys.LegacyFloor), in steps of about migrateStep lanes (one HSCAN and
// one movefloors.lua call each): a lane whose set exists gets the higher
// floor in its set, a lane whose set expired needs none (its field is
// dropped). It returns how many fields it moved or dropped. Safe while
// updates are handled and by several processes at once: until a lane's
// field is gone, Handled, done.lua and forget.lua take the higher of the
// two floors, so no handled update counts as new at any point. Errors:
// the server's (the fields moved before it stay moved).
func (in *Inbox) MigrateFloors(ctx context.Context) (int, error) {
	return in.migrateLanes(ctx, in.keys.LegacyFloor(), in.keys.Seen, in.moveFloors, "move floors")
}

// migrateLanes empties legacy, a hash with a field per lane, in steps of
// about migrateStep lanes: one HSCAN, then one call of script with KEYS
// legacy and laneKey(lane) of each lane scanned, ARGV those lanes. It
// returns the sum of the script's answers (how many fields it moved or
// dropped). Errors: the server's, named what (the steps before it stay
// done).
func (in *Inbox) migrateLanes(ctx context.Context, legacy string, laneKey func(lane string) string, script *valkey.Lua, what string) (int, error) {
	moved := 0
	var cursor uint64
	for {
		e, err := in.c.Do(ctx, in.c.B().Hscan().Key(legacy).Cursor(cursor).Count(migrateStep).Build()).AsScanEntry()
		if err != nil {
			return moved, fmt.Errorf("intake: %s: %w", what, err)
		}
		keys := []string{legacy}
		var laneIDs []string
		for i := 0; i+1 < len(e.Elements); i += 2 {
			keys = append(keys, laneKey(e.Elements[i]))
			laneIDs = append(laneIDs, e.Elements[i])
		}
		if len(laneIDs) > 0 {
			n, err := script.Exec(ctx, in.c, keys, laneIDs).AsInt64()
			if err != nil {
				return moved, fmt.Errorf("intake: %s: %w", what, err)
			}
			moved += int(n)
		}
		if cursor = e.Cursor; cursor == 0 {
			return moved, nil
		}
	}
}

// higherMark is the higher of a lane's handled marks in its bucket (r)
// and in the hash kept before the buckets (old), as parseMark reads them.
func higherMark(lane string, r, old valkey.ValkeyResult) (epoch, id int64, err error) {
	e, n, err := parseMark(lane, r)
	if err != nil {
		return 0, 0, err
	}
	oe, on, err := parseMark(lane, old)
	if err != nil {
		return 0, 0, err
	}
	if oe > e || (oe == e && on > n) {
		return oe, on, nil
	}
	return e, n, nil
}

// parseMark reads a lane's handled mark "<epoch>:<update_id>" from the
// answer to HGET of the handled marks (none, or unreadable: epoch 0, id -1).
func parseMark(lane string, r valkey.ValkeyResult) (epoch, id int64, err error) {
	v, err := r.ToString()
	if valkey.IsValkeyNil(err) {
		return 0, -1, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("intake: handled mark of lane %s: %w", lane, err)
	}
	es, is, _ := strings.Cut(v, ":")
	e, err1 := strconv.ParseInt(es, 10, 64)
	n, err2 := strconv.ParseInt(is, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, -1, nil
	}
	return e, n, nil
}

// Unhandled returns how many recorded updates are not yet handled (nor
// dead-lettered). Errors: the server's.
func (in *Inbox) Unhandled(ctx context.Context) (int64, error) {
	n, err := in.c.Do(ctx, in.c.B().Zcard().Key(in.keys.Recorded()).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("intake: unhandled updates: %w", err)
	}
	return n, nil
}
