package intake

import (
	"encoding/json"
	"strconv"
)

// LaneOf returns the update queue lane of an update (its JSON as Telegram
// sent it): the chat it belongs to, as a decimal chat id, so one chat's
// updates are handled one at a time, in update_id order, and its weight
// (lanes' per-group weight, shared with its outbound lanes) applies. A
// callback query goes by the chat of its message, else by the user who
// pressed the button; updates without a chat (inline queries, poll
// answers, payments) go by their user id, which is also that user's
// private chat id. An update with neither (a poll's state) goes to lane
// "0". It never fails: a body that does not decode goes to lane "0" and
// fails later, in the handler, where it is dead-lettered with its reason.
func LaneOf(raw []byte) string {
	type chat struct {
		ID int64 `json:"id"`
	}
	type user struct {
		ID int64 `json:"id"`
	}
	type msg struct {
		Chat *chat `json:"chat"`
	}
	type withChat struct {
		Chat *chat `json:"chat"`
		From *user `json:"from"`
	}
	var u struct {
		Message           *msg      `json:"message"`
		EditedMessage     *msg      `json:"edited_message"`
		ChannelPost       *msg      `json:"channel_post"`
		EditedChannelPost *msg      `json:"edited_channel_post"`
		BusinessMessage   *msg      `json:"business_message"`
		MessageReaction   *withChat `json:"message_reaction"`
		MyChatMember      *withChat `json:"my_chat_member"`
		ChatMember        *withChat `json:"chat_member"`
		ChatJoinRequest   *withChat `json:"chat_join_request"`
		ChatBoost         *withChat `json:"chat_boost"`
		CallbackQuery     *struct {
			Message *msg  `json:"message"`
			From    *user `json:"from"`
		} `json:"callback_query"`
		InlineQuery        *withChat `json:"inline_query"`
		ChosenInlineResult *withChat `json:"chosen_inline_result"`
		ShippingQuery      *withChat `json:"shipping_query"`
		PreCheckoutQuery   *withChat `json:"pre_checkout_query"`
		PollAnswer         *struct {
			User      *user `json:"user"`
			VoterChat *chat `json:"voter_chat"`
		} `json:"poll_answer"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return "0"
	}
	id := func(c *chat) string { return strconv.FormatInt(c.ID, 10) }
	for _, m := range []*msg{u.Message, u.EditedMessage, u.ChannelPost, u.EditedChannelPost, u.BusinessMessage} {
		if m != nil && m.Chat != nil {
			return id(m.Chat)
		}
	}
	if cq := u.CallbackQuery; cq != nil {
		if cq.Message != nil && cq.Message.Chat != nil {
			return id(cq.Message.Chat)
		}
		if cq.From != nil {
			return strconv.FormatInt(cq.From.ID, 10)
		}
	}
	for _, w := range []*withChat{u.MessageReaction, u.MyChatMember, u.ChatMember, u.ChatJoinRequest, u.ChatBoost,
		u.InlineQuery, u.ChosenInlineResult, u.ShippingQuery, u.PreCheckoutQuery} {
		switch {
		case w == nil:
		case w.Chat != nil:
			return id(w.Chat)
		case w.From != nil:
			return strconv.FormatInt(w.From.ID, 10)
		}
	}
	if pa := u.PollAnswer; pa != nil {
		if pa.VoterChat != nil {
			return id(pa.VoterChat)
		}
		if pa.User != nil {
			return strconv.FormatInt(pa.User.ID, 10)
		}
	}
	return "0"
}
