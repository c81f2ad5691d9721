package notifier

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

// BroadcastTexts returns the text of lazy broadcast id as its chats get
// it, one string per part (a text split in parts: more than one), read
// from its record's template; none for an unknown or expired broadcast,
// or one whose record keeps no template (an eager broadcast). Read only.
// Errors: the store's; a template that does not decode.
func (n *Notifier) BroadcastTexts(ctx context.Context, id string) ([]string, error) {
	raw, err := n.c.Do(ctx, n.c.B().Hget().Key(n.keys.progress(id)).Field(fieldTpl).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notifier: broadcast %s: %w", id, err)
	}
	var tmpl []tgjob.Job
	if err := json.Unmarshal([]byte(raw), &tmpl); err != nil {
		return nil, fmt.Errorf("notifier: broadcast %s: template: %w", id, err)
	}
	out := make([]string, len(tmpl))
	for i, j := range tmpl {
		out[i] = j.Text
	}
	return out, nil
}
