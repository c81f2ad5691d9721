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
// handled again after a crash does not apply it twice: field name -> value,
// as the handler wrote them with SaveJournal. The intake keeps the fields
// and deletes them when the update is handled; what they mean is the
// handler's (internal/app's journal.go). Empty when the update has none.
type Journal map[string]string

// LoadJournal reads update id's journal (empty when none).
func (in *Inbox) LoadJournal(ctx context.Context, id int64) (Journal, error) {
	m, err := in.c.Do(ctx, in.c.B().Hgetall().Key(in.keys.Journal(id)).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("intake: journal of update %d: %w", id, err)
	}
	return Journal(m), nil
}

// SaveJournal writes fields (name, value pairs, the handler's own) of
// update id's journal (one hash, Keys.Journal), which expires after
// journalTTL unless the update is handled first (Finish deletes it).
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
