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
	jobs, err := in.WaitingJobs(ctx, queue, ids)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ids))
	for i, j := range jobs {
		out[i] = j.Group
	}
	return out, nil
}

// WaitingJobs is Waiting with the jobs' payloads: for each of ids, the
// job as an Item (its group, id and payload) when it is waiting on its lane
// of queue, and an Item with only the id when it is not (see Waiting). A
// caller that moves jobs to another queue enqueues those Items there as
// they are. Errors: as Waiting.
func (in *Inspector) WaitingJobs(ctx context.Context, queue string, ids []JobID) ([]Item, error) {
	if err := validQueueAndIDs(queue, ids); err != nil {
		return nil, err
	}
	out := make([]Item, len(ids))
	for i, id := range ids {
		out[i].ID = id
	}
	for start := 0; start < len(ids); start += waitingChunk {
		part := ids[start:min(start+waitingChunk, len(ids))]
		cmds := make([]valkey.Completed, len(part))
		for i, id := range part {
			cmds[i] = in.c.B().Hmget().Key(in.keys.job(queue, id)).Field("g", "p").Build()
		}
		groups := make([]string, len(part))
		payloads := make([]string, len(part))
		var check []int
		for i, r := range in.c.DoMulti(ctx, cmds...) {
			v, err := r.ToArray()
			if err != nil {
				return nil, fmt.Errorf("lanes: waiting: %w", err)
			}
			g, err := v[0].ToString()
			if isNil(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("lanes: waiting: %w", err)
			}
			groups[i] = g
			payloads[i], _ = v[1].ToString()
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
			out[start+check[k]].Group = groups[check[k]]
			out[start+check[k]].Payload = []byte(payloads[check[k]])
		}
	}
	return out, nil
}
