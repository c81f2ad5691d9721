package notifier

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// BroadcastIDPrefix brands broadcast ids: "bc_" + a 26-character ULID.
const BroadcastIDPrefix = "bc_"

func validBroadcastID(id string) bool {
	rest, ok := strings.CutPrefix(id, BroadcastIDPrefix)
	if !ok {
		return false
	}
	return lanes.JobID(lanes.JobIDPrefix+rest).Validate() == nil
}

// Broadcast enqueues msg to every chat of chatIDs on the notification queue
// (msg.Class is ignored: a broadcast is always a Notification), in batches of
// Config.BatchSize chats per EnqueueBatch. Chat ids are resolved through
// migration aliases and deduplicated (first occurrence wins); chats marked
// inactive are skipped and counted as failed "inactive". It returns the
// broadcast id, whose Progress can be read while the worker delivers.
//
// With msg.Key, a repeated Broadcast returns the first one's id and fans out
// nothing (see Message.Key); a first call cut short (a crash, a store
// error) is not resumed by the repeat.
//
// Errors: ErrInvalid / ErrEmptyText (no chat, a chat id 0, a bad message;
// nothing written); the store's errors. On a store error the id is returned
// too: batches before the failing one stay enqueued and counted.
func (n *Notifier) Broadcast(ctx context.Context, chatIDs []int64, msg Message) (string, error) {
	if len(chatIDs) == 0 {
		return "", invalid("broadcast to no chat")
	}
	msg.Class = Notification
	tmpl, err := n.jobs(chatIDs[0], msg)
	if err != nil {
		return "", err
	}
	seen := make(map[int64]bool, len(chatIDs))
	uniq := make([]int64, 0, len(chatIDs))
	for _, id := range chatIDs {
		if id == 0 {
			return "", invalid("broadcast: chat id 0")
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	targets, inactive, err := n.chats.ResolveMany(ctx, uniq)
	if err != nil {
		return "", fmt.Errorf("notifier: broadcast: %w", err)
	}
	bc := BroadcastIDPrefix + strings.TrimPrefix(string(n.minter.New()), lanes.JobIDPrefix)
	parts := len(tmpl)
	skipped := 0
	for _, in := range inactive {
		if in {
			skipped++
		}
	}
	key := n.keys.progress(bc)
	ttl := n.cfg.ProgressTTL
	fields := []string{fieldTotal, strconv.Itoa(len(targets) * parts), fieldQueued, "0", fieldSent, "0"}
	if skipped > 0 {
		fields = append(fields, fieldFailed+reasonSkip, strconv.Itoa(skipped*parts))
	}
	if msg.Key != "" {
		// Record the key and create the progress in one atomic call: a
		// broadcast repeated with the key finds the first one's id.
		args := append([]string{bc, ms(n.cfg.KeyTTL), ms(ttl)}, fields...)
		prev, err := n.startScript.Exec(ctx, n.c, []string{key, n.keys.onceBC(msg.Key)}, args).ToString()
		if err != nil {
			return "", fmt.Errorf("notifier: broadcast %s: %w", bc, err)
		}
		if prev != "" {
			return prev, nil
		}
	} else {
		init := n.c.B().Hset().Key(key).FieldValue()
		for i := 0; i < len(fields); i += 2 {
			init = init.FieldValue(fields[i], fields[i+1])
		}
		for _, r := range n.c.DoMulti(ctx, init.Build(), n.c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build()) {
			if err := r.Error(); err != nil {
				return "", fmt.Errorf("notifier: broadcast %s: %w", bc, err)
			}
		}
	}
	var items []lanes.Item
	flush := func() error {
		if len(items) == 0 {
			return nil
		}
		res, err := n.store.EnqueueBatch(ctx, tgjob.QueueNotify, items)
		items = items[:0]
		if res.Added > 0 {
			if e := n.c.Do(ctx, n.c.B().Hincrby().Key(key).Field(fieldQueued).Increment(int64(res.Added)).Build()).Error(); e != nil && err == nil {
				err = e
			}
		}
		if err != nil {
			return fmt.Errorf("notifier: broadcast %s: %w", bc, err)
		}
		return nil
	}
	chats := 0
	for i, chat := range targets {
		if inactive[i] {
			continue
		}
		for _, j := range tmpl {
			j.Chat, j.Broadcast = chat, bc
			p, err := j.Encode()
			if err != nil {
				return bc, err
			}
			items = append(items, lanes.Item{Group: tgjob.Group(chat), ID: n.minter.New(), Payload: p})
		}
		if chats++; chats%n.cfg.BatchSize == 0 {
			if err := flush(); err != nil {
				return bc, err
			}
		}
	}
	if err := flush(); err != nil {
		return bc, err
	}
	return bc, nil
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
