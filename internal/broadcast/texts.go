package broadcast

import "context"

// Texts returns broadcast id's text as its chats get it, one string per
// part (notifier.Notifier.BroadcastTexts); none for an unknown or expired
// broadcast. Read only. Errors: the store's.
func (s *Service) Texts(ctx context.Context, id string) ([]string, error) {
	return s.notifier.BroadcastTexts(ctx, id)
}
