package update

import (
	"strings"

	"github.com/go-telegram/bot/models"
)

// Ignored is why the bot does not act on an update: the reason label of
// the counter of updates the intake drops unrecorded
// (codemojex_updates_ignored_total); "" when a handler acts on it. See
// Mux.Ignores.
type Ignored string

// Reasons an update is ignored.
const (
	// Acts: a handler acts on the update (not a reason).
	Acts Ignored = ""
	// Chatter is a message with text the bot does not act on: in a group,
	// neither a command for the bot nor a reply to it (members talking
	// among themselves, which a bot with privacy mode off or admin rights
	// sees); a command for another bot.
	Chatter Ignored = "chatter"
	// NoText is a message without text: a service message (members
	// joined or left, a pin, a new title or photo), a photo, a sticker.
	NoText Ignored = "no_text"
	// Edited is an edit of a message (the bot answers a message once,
	// when it is sent).
	Edited Ignored = "edited"
	// ChannelPost is a channel post or its edit.
	ChannelPost Ignored = "channel_post"
	// Other is any other update no handler takes (another member's
	// change, a reaction, a poll, an inline query).
	Other Ignored = "other"
)

// IgnoredReasons lists every reason but Acts (metrics pre-create their
// series).
func IgnoredReasons() []Ignored { return []Ignored{Chatter, NoText, Edited, ChannelPost, Other} }

// KindIgnored is why no handler acts on u when none takes it: its kind's
// reason (Chatter for a message with text, NoText for one without, Edited,
// ChannelPost, Other); never Acts.
func KindIgnored(u *models.Update) Ignored {
	switch {
	case u.Message != nil && strings.TrimSpace(u.Message.Text) == "":
		return NoText
	case u.Message != nil:
		return Chatter
	case u.EditedMessage != nil:
		return Edited
	case u.ChannelPost != nil || u.EditedChannelPost != nil:
		return ChannelPost
	}
	return Other
}
