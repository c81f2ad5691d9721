package notifier

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

// BroadcastText is a lazy broadcast's text as the chats of one language
// get it.
type BroadcastText struct {
	// Lang is the language ("" the default text: what every chat of a
	// language without a text of its own gets).
	Lang string
	// Parts is the text, one string per part (a text split in parts: more
	// than one).
	Parts []string
}

// BroadcastTexts returns the texts of lazy broadcast id as its chats get
// them, read from its record's templates: the default first (Lang ""),
// then each language's with a text of its own (Plan.Texts), in the order
// its record names them (sorted); none for an unknown or expired
// broadcast, or one whose record keeps no template (an eager broadcast).
// Read only: one HMGET, and one more for a broadcast with languages.
// Errors: the store's; a template that does not decode.
func (n *Notifier) BroadcastTexts(ctx context.Context, id string) ([]BroadcastText, error) {
	key := n.keys.progress(id)
	vs, err := n.c.Do(ctx, n.c.B().Hmget().Key(key).Field(fieldTpl, fieldLangs).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("notifier: broadcast %s: %w", id, err)
	}
	def, err := vs[0].ToString()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notifier: broadcast %s: %w", id, err)
	}
	raws, langs := []string{def}, []string{""}
	if ls, err := vs[1].ToString(); err == nil && ls != "" {
		others := strings.Split(ls, ",")
		fields := make([]string, len(others))
		for i, l := range others {
			fields[i] = tplField(l)
		}
		tvs, err := n.c.Do(ctx, n.c.B().Hmget().Key(key).Field(fields...).Build()).ToArray()
		if err != nil {
			return nil, fmt.Errorf("notifier: broadcast %s: %w", id, err)
		}
		for i, v := range tvs {
			if raw, err := v.ToString(); err == nil {
				raws, langs = append(raws, raw), append(langs, others[i])
			}
		}
	}
	out := make([]BroadcastText, len(raws))
	for i, raw := range raws {
		var tmpl []tgjob.Job
		if err := json.Unmarshal([]byte(raw), &tmpl); err != nil {
			return nil, fmt.Errorf("notifier: broadcast %s: template %q: %w", id, langs[i], err)
		}
		out[i] = BroadcastText{Lang: langs[i], Parts: make([]string, len(tmpl))}
		for j, job := range tmpl {
			out[i].Parts[j] = job.Text
		}
	}
	return out, nil
}
