package app

import "context"

// The fields of an update's journal a broadcast writes (intake.Journal:
// the intake keeps them in {T}:app:j:<update_id> and drops them when the
// update is handled; what they mean is their writer's: a game move's "pre"
// and "out" are gameui's). The names are those older processes wrote.
const (
	journalBC        = "bc"  // the broadcast id, once the broadcast was enqueued
	journalBCStarted = "bcs" // "1", written just before the broadcast is enqueued
)

// journal is a broadcast's part of an update's intake.Journal,
// interpreted.
type journal struct {
	Exists bool
	// BC is the broadcast id, once the broadcast was enqueued; BCStarted
	// is set just before.
	BC        string
	BCStarted bool
}

func (a *App) loadJournal(ctx context.Context, id int64) (journal, error) {
	raw, err := a.inbox.LoadJournal(ctx, id)
	if err != nil || len(raw) == 0 {
		return journal{}, err
	}
	return journal{Exists: true, BC: raw[journalBC], BCStarted: raw[journalBCStarted] == "1"}, nil
}
