package notifier

import (
	"context"
	"fmt"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// EditLatest enqueues an edit of the message that job ref sent in chatID
// (a message kept up to date in place, such as a game board) so that only
// the latest content is sent: while an earlier EditLatest of the same
// message is still queued, this one replaces its text and markup in place
// (the lanes.Coalesce option: it keeps its place in the lane, and the burst
// costs one editMessageText), and once that one was claimed, this one is
// queued behind it. The job is an edit of kind tgjob.KindEdit with Ref =
// ref and Fresh set: the worker looks up the message id when it sends (so
// the edit may be queued before ref is sent), and when the message can no
// longer be edited (deleted, or a group message older than 48 h), it sends
// the content as a new message that later edits then target. Like Edit,
// it goes on the chat's lane of msg.Class's queue and draws on the same
// budgets. msg.Key, ReplyTo and Silent do not apply. It returns the id of
// the job that carries the content and whether it replaced a queued one.
//
// Errors: as Edit (ErrInvalid for an empty ref, a text over
// tgtext.MaxTextUnits or invalid markup; *InactiveError for a
// Notification to an inactive chat; the store's errors).
func (n *Notifier) EditLatest(ctx context.Context, chatID int64, ref lanes.JobID, msg Message) (lanes.JobID, bool, error) {
	if err := validate(chatID, msg); err != nil {
		return "", false, err
	}
	if err := ref.Validate(); err != nil {
		return "", false, invalid(fmt.Sprintf("edit of job %q: %v", ref, err))
	}
	if u := tgtext.UTF16Len(msg.Text); u > tgtext.MaxTextUnits {
		return "", false, invalid(fmt.Sprintf("edit text of %d UTF-16 units: at most %d (an edit cannot be split)", u, tgtext.MaxTextUnits))
	}
	target, err := n.chats.Resolve(ctx, chatID)
	if err != nil {
		return "", false, fmt.Errorf("notifier: edit latest chat %d: %w", chatID, err)
	}
	if msg.Class == Notification {
		in, err := n.chats.IsInactive(ctx, target)
		if err != nil {
			return "", false, fmt.Errorf("notifier: edit latest chat %d: %w", chatID, err)
		}
		if in {
			return "", false, &InactiveError{ChatID: target}
		}
	}
	j := tgjob.Job{Kind: tgjob.KindEdit, Ref: string(ref), Fresh: true, Chat: chatID, Text: msg.Text, ParseMode: msg.ParseMode, Markup: msg.Markup}
	p, err := j.Encode()
	if err != nil {
		return "", false, err
	}
	it := lanes.Item{Group: tgjob.Group(target), ID: n.minter.New(), Payload: p}
	res, err := n.store.Enqueue(ctx, msg.Class.Queue(), []lanes.Item{it}, lanes.Coalesce(n.keys.latest(ref), n.cfg.CoalesceTTL))
	if err != nil {
		return "", false, fmt.Errorf("notifier: edit latest chat %d: %w", chatID, err)
	}
	return res.IDs[0], res.Coalesced == 1, nil
}
