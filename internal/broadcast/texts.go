package broadcast

import (
	"context"
	"slices"

	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/notifier"
)

// Texts returns broadcast id's texts as its chats get them
// (notifier.Notifier.BroadcastTexts): the default first (Lang ""), then
// each language's with a text of its own, in the catalog's order
// (i18n.Languages: the preview's); each in its parts. None for an unknown
// or expired broadcast. Read only. Errors: the store's.
func (s *Service) Texts(ctx context.Context, id string) ([]notifier.BroadcastText, error) {
	ts, err := s.notifier.BroadcastTexts(ctx, id)
	if err != nil {
		return nil, err
	}
	order := func(l string) int {
		if l == "" {
			return -1
		}
		return slices.Index(i18n.Languages(), l)
	}
	slices.SortStableFunc(ts, func(a, b notifier.BroadcastText) int { return order(a.Lang) - order(b.Lang) })
	return ts, nil
}
