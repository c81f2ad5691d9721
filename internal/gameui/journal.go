package gameui

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/update"
)

// The fields of an update's journal a game move writes (intake.Journal:
// the intake keeps them in {T}:app:j:<update_id> and drops them when the
// update is handled). The names are those older processes wrote.
const (
	journalPre = "pre" // the fingerprint of the chat's game before the move
	journalOut = "out" // the move's replies, JSON of []update.Reply
)

// moveJournal is a game move's part of an update's journal, decoded.
type moveJournal struct {
	Exists bool
	// Pre is the fingerprint of the chat's game before the move.
	Pre string
	// Out are the replies the move produces.
	Out []update.Reply
}

// Fingerprint identifies a game's state for the journal: "-" for no game,
// else "<game id>:<turns>:<status>". A game move always changes it.
func Fingerprint(st game.State, exists bool) string {
	if !exists {
		return "-"
	}
	return st.ID + ":" + strconv.Itoa(len(st.Turns)) + ":" + string(st.Status)
}

// loadJournal reads update id's journal (Exists false: none).
func (u *UI) loadJournal(ctx context.Context, id int64) (moveJournal, error) {
	raw, err := u.journal.LoadJournal(ctx, id)
	if err != nil || len(raw) == 0 {
		return moveJournal{}, err
	}
	j := moveJournal{Exists: true, Pre: raw[journalPre]}
	if out := raw[journalOut]; out != "" {
		if err := json.Unmarshal([]byte(out), &j.Out); err != nil {
			return moveJournal{}, fmt.Errorf("gameui: journal of update %d: %w", id, err)
		}
	}
	return j, nil
}

// PlanMove journals a game move of update id before it is applied: pre,
// the game's Fingerprint now, and out, the replies the move will produce.
// Errors: Valkey's, wrapped.
func (u *UI) PlanMove(ctx context.Context, id int64, pre string, out []update.Reply) error {
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("gameui: journal: %w", err)
	}
	return u.journal.SaveJournal(ctx, id, journalPre, pre, journalOut, string(b))
}
