package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/codemojex/codemojex/game"
)

// journal is an update's intake.Journal with its replies decoded.
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
	raw, err := a.inbox.LoadJournal(ctx, id)
	if err != nil || !raw.Exists {
		return journal{}, err
	}
	j := journal{Exists: true, Pre: raw.Pre, BC: raw.BC, BCStarted: raw.BCStarted}
	if raw.Out != "" {
		if err := json.Unmarshal([]byte(raw.Out), &j.Out); err != nil {
			return journal{}, fmt.Errorf("app: journal of update %d: %w", id, err)
		}
	}
	return j, nil
}

// planMove journals a game move before it is applied: the game's
// fingerprint now and the replies the move will produce.
func (a *App) planMove(ctx context.Context, id int64, pre string, out []outMsg) error {
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("app: journal: %w", err)
	}
	return a.inbox.SaveJournal(ctx, id, "pre", pre, "out", string(b))
}
