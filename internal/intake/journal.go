package intake

import (
	"context"
	"fmt"
	"time"
)

// journalTTL bounds how long a journal entry outlives a crash that left its
// update unhandled (the entry is deleted when the update is handled).
const journalTTL = 7 * 24 * time.Hour

// Journal is what the handler of one update wrote before a move that
// changes state outside the inbox (a game move, a broadcast), so the update
// handled again after a crash does not apply it twice.
type Journal struct {
	Exists bool
	// Pre is the fingerprint of the chat's game before the move.
	Pre string
	// Out is the replies the move produces, as the handler encoded them
	// (JSON; "" when none).
	Out string
	// BC is the broadcast id, once the broadcast was enqueued; BCStarted
	// is set just before.
	BC        string
	BCStarted bool
}

// LoadJournal reads update id's journal (Exists false when none).
func (in *Inbox) LoadJournal(ctx context.Context, id int64) (Journal, error) {
	m, err := in.c.Do(ctx, in.c.B().Hgetall().Key(in.keys.Journal(id)).Build()).AsStrMap()
	if err != nil {
		return Journal{}, fmt.Errorf("intake: journal of update %d: %w", id, err)
	}
	if len(m) == 0 {
		return Journal{}, nil
	}
	return Journal{Exists: true, Pre: m["pre"], Out: m["out"], BC: m["bc"], BCStarted: m["bcs"] == "1"}, nil
}

// SaveJournal writes fields (name, value pairs: pre, out, bc, bcs) of update
// id's journal, which expires after journalTTL unless the update is handled
// first (Finish deletes it).
func (in *Inbox) SaveJournal(ctx context.Context, id int64, kv ...string) error {
	cmd := in.c.B().Hset().Key(in.keys.Journal(id)).FieldValue()
	for i := 0; i+1 < len(kv); i += 2 {
		cmd = cmd.FieldValue(kv[i], kv[i+1])
	}
	for _, r := range in.c.DoMulti(ctx, cmd.Build(), in.c.B().Pexpire().Key(in.keys.Journal(id)).Milliseconds(journalTTL.Milliseconds()).Build()) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("intake: journal of update %d: %w", id, err)
		}
	}
	return nil
}
