package demo

import (
	"context"
	"fmt"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// laneInfo is one chat's lane as the bot's lanes store has it.
type laneInfo struct {
	queued int // pending + in flight, both queues
	weight int // 0 when the lane is empty (lanes.Stats lists pending lanes)
}

// queueReader reads the bot's lanes (read-only: lanes.Inspector.Stats).
type queueReader struct {
	lanes *lanes.Inspector
}

func newQueueReader(c valkey.Client, tag string) (*queueReader, error) {
	in, err := lanes.NewInspector(c, lanes.WithTag(tag))
	if err != nil {
		return nil, fmt.Errorf("demo: lanes inspector: %w", err)
	}
	return &queueReader{lanes: in}, nil
}

// read returns the lanes with work, by chat id.
func (q *queueReader) read(ctx context.Context) (map[int64]laneInfo, error) {
	out := make(map[int64]laneInfo)
	for _, name := range tgjob.Queues() {
		st, err := q.lanes.Stats(ctx, name, 1000)
		if err != nil {
			return nil, fmt.Errorf("demo: queue %s: %w", name, err)
		}
		for _, l := range st.Top {
			id, err := tgjob.ChatID(l.Group)
			if err != nil {
				continue
			}
			li := out[id]
			li.queued += l.Depth + l.InFlight
			li.weight = max(li.weight, l.Weight)
			out[id] = li
		}
	}
	return out, nil
}
