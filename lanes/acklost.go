package lanes

import (
	"context"
	"fmt"
	"strings"
)

// LostAck says what AckLost did with a job whose work was done under a
// lease since lost.
type LostAck string

// Outcomes of AckLost.
const (
	// LostAcked: the lease was live after all; acked exactly as Ack, its
	// tally counted.
	LostAcked LostAck = "acked"
	// LostWaiting: the job was waiting again (back on its lane after its
	// lease expired or was recovered, or given back by a later claimer;
	// or in an unordered queue's delayed set): taken off and deleted as
	// the lost lease's ack would have, its tally counted now. It is never
	// sent again, and a later Cancel finds nothing of it.
	LostWaiting LostAck = "waiting"
	// LostMarked: the job is held under another lease (claimed again):
	// its holder keeps it, marked delivered. The holder's Ack (or AckAll)
	// settles it as usual, counted by that Ack's own tally (pass the same;
	// an ack riding on a Claim keeps none, and the mark's is not counted
	// then either); any other
	// end of that lease (Release, Nack, Postpone, Dead, DeadUntried:
	// Outcome Delivered; its expiry, also after RecoverDead) drops it,
	// never claimed again nor dead-lettered, counted in the tally given
	// here, never in the call's own Counting nor in a Cancel's Tally. So
	// the job is counted once, and no claim hands it out after this call;
	// the holder's send already under way is the only duplicate.
	LostMarked LostAck = "marked"
	// LostKnown: an earlier AckLost marked it (LostMarked) already:
	// nothing more.
	LostKnown LostAck = "known"
	// LostDead: a dead letter (its lease expired past MaxAttempts and it
	// was counted in its dead tally then, CountDead): left as it is.
	LostDead LostAck = "dead"
	// LostReplaced: its payload was replaced (Coalesce) since the lost
	// lease's claim: the work done was an older payload's, so nothing
	// changes and the new payload goes out.
	LostReplaced LostAck = "replaced"
)

// AckLost settles job l.ID, whose work was done (its message delivered)
// under lease l, which has since been lost: an Ack of it answered
// ErrStaleLease (its lease expired and was reclaimed, its claimer was
// found dead, another claimer holds it). A known fate is settled even so,
// counted with opts' Counting exactly once overall, in one atomic call, by
// the job's state (see LostAck): live lease, an Ack (LostAcked); waiting
// again, acked now (LostWaiting); held by another claimer, marked
// delivered (LostMarked); marked already (LostKnown); dead-lettered
// (LostDead) or replaced (LostReplaced), unchanged. Retried after a try
// that landed unseen, it finds no job (ErrNoJob) or its own mark
// (LostKnown) and counts nothing more. Call it only when the work is known
// done: a job whose outcome is unknown is left to its lease's end and sent
// again (at-least-once). Errors: ErrNoJob (no such job: settled elsewhere,
// e.g. acked by the claimer that took it or cancelled; nothing changed),
// ErrInvalid (a bad lease or tally; a tally key or field holding a
// newline), or the server's.
func (s *Store) AckLost(ctx context.Context, l Lease, opts ...SettleOption) (LostAck, error) {
	if err := s.checkLease(l); err != nil {
		return "", err
	}
	var cfg settleConfig
	for _, o := range opts {
		o(&cfg)
	}
	t := cfg.tally
	for _, v := range append([]string{t.Key, t.Once, t.Untrack}, t.Fields...) {
		if strings.Contains(v, "\n") {
			return "", fmt.Errorf("%w: ack lost %s: tally key or field %q holds a newline", ErrInvalid, l.ID, v)
		}
	}
	keys, args := s.header(l.Queue, 8)
	args = append(args, string(l.ID), l.Token, ms(l.Floor))
	keys, args, err := s.tallyArgs(keys, args, opts)
	if err != nil {
		return "", err
	}
	arr, err := s.scripts.ackLost.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return "", fmt.Errorf("lanes: ack lost %s: %w", l.ID, err)
	}
	code, err := arr[0].AsInt64()
	if err != nil {
		return "", fmt.Errorf("lanes: ack lost %s: malformed reply: %w", l.ID, err)
	}
	if code != 1 {
		return "", leaseErr("ack lost", l, code)
	}
	out, err := arr[1].ToString()
	if err != nil {
		return "", fmt.Errorf("lanes: ack lost %s: malformed reply: %w", l.ID, err)
	}
	return LostAck(out), nil
}
