package broadcast

import "context"

// The fields of an update's journal (intake.Journal: the intake keeps them
// in {T}:app:j:<update_id> and drops them when the update is handled) that
// the Send tap writes. The names are those older processes wrote.
// (Processes before lazy broadcasts also wrote "bcs" just before the
// fan-out; a lazy broadcast resumes from its cursor, so none reads it.)
const journalID = "bc" // the broadcast id, once the broadcast was started

// journal is the Send tap's part of an update's journal.
type journal struct {
	// ID is the broadcast id, once the broadcast was started.
	ID string
}

// loadJournal reads update id's journal. Errors: the store's.
func (s *Service) loadJournal(ctx context.Context, id int64) (journal, error) {
	raw, err := s.journal.LoadJournal(ctx, id)
	if err != nil {
		return journal{}, err
	}
	return journal{ID: raw[journalID]}, nil
}
