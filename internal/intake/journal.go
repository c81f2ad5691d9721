package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/codemojex/codemojex/game"
)

// journalTTL bounds how long a journal entry outlives a crash that left its
// update unhandled (the entry is deleted when the update is handled).
const journalTTL = 7 * 24 * time.Hour

// journal is what the handler of one update wrote before a move that
// changes state outside the inbox (a game move, a broadcast), so the update
// handled again after a crash does not apply it twice.
type journal struct {
	Exists bool
	// Pre is the fingerprint of the chat's game before the move.
	Pre string
	// Out are the replies the move produces.
	Out []outMsg
	// BC is the broadcast id, once the broadcast was enqueued; BCStarted
	// is set just before.
	BC        string
	BCStarted bool
}

// fingerprint identifies a game's state for the journal: "-" for no game,
// else "<game id>:<turns>:<status>". A game move always changes it.
func fingerprint(st game.State, exists bool) string {
	if !exists {
		return "-"
	}
	return st.ID + ":" + strconv.Itoa(len(st.Turns)) + ":" + string(st.Status)
}

func (a *App) loadJournal(ctx context.Context, id int64) (journal, error) {
	m, err := a.c.Do(ctx, a.c.B().Hgetall().Key(a.keys.journal(id)).Build()).AsStrMap()
	if err != nil {
		return journal{}, fmt.Errorf("app: journal of update %d: %w", id, err)
	}
	if len(m) == 0 {
		return journal{}, nil
	}
	j := journal{Exists: true, Pre: m["pre"], BC: m["bc"], BCStarted: m["bcs"] == "1"}
	if s := m["out"]; s != "" {
		if err := json.Unmarshal([]byte(s), &j.Out); err != nil {
			return journal{}, fmt.Errorf("app: journal of update %d: %w", id, err)
		}
	}
	return j, nil
}

// saveJournal writes fields (name, value pairs) of update id's journal.
func (a *App) saveJournal(ctx context.Context, id int64, kv ...string) error {
	cmd := a.c.B().Hset().Key(a.keys.journal(id)).FieldValue()
	for i := 0; i+1 < len(kv); i += 2 {
		cmd = cmd.FieldValue(kv[i], kv[i+1])
	}
	for _, r := range a.c.DoMulti(ctx, cmd.Build(), a.c.B().Pexpire().Key(a.keys.journal(id)).Milliseconds(journalTTL.Milliseconds()).Build()) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("app: journal of update %d: %w", id, err)
		}
	}
	return nil
}

// planMove journals a game move before it is applied: the game's
// fingerprint now and the replies the move will produce.
func (a *App) planMove(ctx context.Context, id int64, pre string, out []outMsg) error {
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("app: journal: %w", err)
	}
	return a.saveJournal(ctx, id, "pre", pre, "out", string(b))
}
