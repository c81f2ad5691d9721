package lanes

import (
	"context"
	"fmt"

	"github.com/valkey-io/valkey-go"
)

// waitingChunk is how many ids one Waiting round trip reads.
const waitingChunk = 1000

// Waiting reports, for each of ids, the group (lane) of the job when it is
// waiting on its lane of queue, and "" when it is not: in flight (under a
// lease), in the delayed set of an unordered queue, a dead letter, or no
// such job (acked, cancelled, never enqueued). A caller that moves jobs to
// another queue (enqueue the copies there, then Cancel them here) reads
// with it which ones are still to move. It reads only (two pipelined round
// trips per 1,000 ids: the jobs' groups, then their lane membership) and is
// not atomic: a job claimed between the two reads is reported waiting.
// Errors: ErrInvalid for a bad queue or a malformed id; the server's error.
func (in *Inspector) Waiting(ctx context.Context, queue string, ids []JobID) ([]string, error) {
	if err := validQueueAndIDs(queue, ids); err != nil {
		return nil, err
	}
	out := make([]string, len(ids))
	for start := 0; start < len(ids); start += waitingChunk {
		part := ids[start:min(start+waitingChunk, len(ids))]
		cmds := make([]valkey.Completed, len(part))
		for i, id := range part {
			cmds[i] = in.c.B().Hget().Key(in.keys.job(queue, id)).Field("g").Build()
		}
		groups := make([]string, len(part))
		var check []int
		for i, r := range in.c.DoMulti(ctx, cmds...) {
			g, err := r.ToString()
			if isNil(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("lanes: waiting: %w", err)
			}
			groups[i] = g
			check = append(check, i)
		}
		if len(check) == 0 {
			continue
		}
		cmds = cmds[:0]
		for _, i := range check {
			cmds = append(cmds, in.c.B().Zscore().Key(in.keys.lane(queue, groups[i])).Member(string(part[i])).Build())
		}
		for k, r := range in.c.DoMulti(ctx, cmds...) {
			_, err := r.AsFloat64()
			if isNil(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("lanes: waiting: %w", err)
			}
			out[start+check[k]] = groups[check[k]]
		}
	}
	return out, nil
}
