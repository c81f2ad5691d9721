package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/update"
)

// The fields of an update's journal (intake.Journal: the intake keeps them
// in {T}:app:j:<update_id> and drops them when the update is handled; what
// they mean is the app's). The names are those older processes wrote.
const (
	journalPre       = "pre" // the fingerprint of the chat's game before the move
	journalOut       = "out" // the move's replies, JSON of []outMsg
	journalBC        = "bc"  // the broadcast id, once the broadcast was enqueued
	journalBCStarted = "bcs" // "1", written just before the broadcast is enqueued
)

// journal is an update's intake.Journal, interpreted, with its replies
// decoded.
type journal struct {
	Exists bool
	// Pre is the fingerprint of the chat's game before the move.
	Pre string
	// Out are the replies the move produces.
	Out []update.Reply
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
	if err != nil || len(raw) == 0 {
		return journal{}, err
	}
	j := journal{Exists: true, Pre: raw[journalPre], BC: raw[journalBC], BCStarted: raw[journalBCStarted] == "1"}
	if out := raw[journalOut]; out != "" {
		if err := json.Unmarshal([]byte(out), &j.Out); err != nil {
			return journal{}, fmt.Errorf("app: journal of update %d: %w", id, err)
		}
	}
	return j, nil
}

// planMove journals a game move before it is applied: the game's
// fingerprint now and the replies the move will produce.
func (a *App) planMove(ctx context.Context, id int64, pre string, out []update.Reply) error {
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("app: journal: %w", err)
	}
	return a.inbox.SaveJournal(ctx, id, journalPre, pre, journalOut, string(b))
}
