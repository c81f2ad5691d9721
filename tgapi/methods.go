package tgapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// The typed methods: one per Bot API call the bot makes, each through call
// and decode, each failure an *Error. Parameters are go-telegram/bot's
// *Params types (JSON field names as the Bot API's), results its models.

// GetMe returns the bot's user (https://core.telegram.org/bots/api#getme).
func (c *Client) GetMe(ctx context.Context) (*models.User, error) {
	var u models.User
	if _, err := c.call(ctx, "getMe", nil, &u, c.timeout); err != nil {
		return nil, err
	}
	return &u, nil
}

// MaxUpdates is the most updates one getUpdates hands out (its limit:
// Telegram allows 1..100).
const MaxUpdates = 100

// Update is one update as getUpdates hands it out: its update_id and its
// JSON as received (kept raw: the intake stores it so).
type Update struct {
	ID   int64
	JSON json.RawMessage
}

// GetUpdatesParams are getUpdates' parameters
// (https://core.telegram.org/bots/api#getupdates).
type GetUpdatesParams struct {
	// Offset is the first update_id wanted (0: omitted, the server's
	// oldest unconfirmed update); it confirms every update below it.
	Offset int64 `json:"offset,omitempty"`
	// Limit is the most updates handed out, 1..MaxUpdates (0: Telegram's
	// default, 100).
	Limit int `json:"limit,omitempty"`
	// Timeout is the long poll, whole seconds (0: a short poll).
	Timeout int `json:"timeout"`
	// AllowedUpdates are the update types wanted (nil: unchanged).
	AllowedUpdates []string `json:"allowed_updates,omitempty"`
}

// GetUpdates long-polls for up to timeout (whole seconds, at least 0) with
// offset (0: none) and limit MaxUpdates, and returns the updates the
// server handed out, in order. The call is bounded by timeout +
// PollMargin. Errors: *Error, also for an update that is not an object
// with a numeric update_id.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	timeout = max(timeout, 0).Truncate(time.Second)
	p := GetUpdatesParams{Offset: offset, Limit: MaxUpdates, Timeout: int(timeout / time.Second)}
	var raws []json.RawMessage
	status, err := c.call(ctx, "getUpdates", &p, &raws, timeout+PollMargin)
	if err != nil {
		return nil, err
	}
	out := make([]Update, 0, len(raws))
	for _, raw := range raws {
		var id struct {
			UpdateID int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, &Error{Method: "getUpdates", Status: status, Err: c.red.Error(fmt.Errorf("update without update_id: %w", err))}
		}
		out = append(out, Update{ID: id.UpdateID, JSON: raw})
	}
	return out, nil
}

// SetWebhook sets the bot's webhook
// (https://core.telegram.org/bots/api#setwebhook). Telegram refuses a URL
// it cannot use with a 400 ("Bad Request: bad webhook: An HTTPS URL must
// be provided for webhook").
func (c *Client) SetWebhook(ctx context.Context, p *bot.SetWebhookParams) error {
	_, err := c.call(ctx, "setWebhook", p, nil, c.timeout)
	return err
}

// DeleteWebhook removes the webhook
// (https://core.telegram.org/bots/api#deletewebhook); p.DropPendingUpdates
// also drops the updates queued for it.
func (c *Client) DeleteWebhook(ctx context.Context, p *bot.DeleteWebhookParams) error {
	_, err := c.call(ctx, "deleteWebhook", p, nil, c.timeout)
	return err
}

// GetWebhookInfo returns the webhook's state; URL "" when none is set
// (https://core.telegram.org/bots/api#getwebhookinfo).
func (c *Client) GetWebhookInfo(ctx context.Context) (*models.WebhookInfo, error) {
	var info models.WebhookInfo
	if _, err := c.call(ctx, "getWebhookInfo", nil, &info, c.timeout); err != nil {
		return nil, err
	}
	return &info, nil
}

// SendMessage sends a text message and returns it as sent
// (https://core.telegram.org/bots/api#sendmessage).
func (c *Client) SendMessage(ctx context.Context, p *bot.SendMessageParams) (*models.Message, error) {
	var m models.Message
	if _, err := c.call(ctx, "sendMessage", p, &m, c.timeout); err != nil {
		return nil, err
	}
	return &m, nil
}

// EditMessageText edits a message's text (and keyboard) and returns it as
// edited (https://core.telegram.org/bots/api#editmessagetext; a message
// sent by the bot, not an inline one).
func (c *Client) EditMessageText(ctx context.Context, p *bot.EditMessageTextParams) (*models.Message, error) {
	var m models.Message
	if _, err := c.call(ctx, "editMessageText", p, &m, c.timeout); err != nil {
		return nil, err
	}
	return &m, nil
}

// AnswerCallbackQuery answers a button tap
// (https://core.telegram.org/bots/api#answercallbackquery).
func (c *Client) AnswerCallbackQuery(ctx context.Context, p *bot.AnswerCallbackQueryParams) error {
	_, err := c.call(ctx, "answerCallbackQuery", p, nil, c.timeout)
	return err
}

// SetMyCommands sets the bot's command menu
// (https://core.telegram.org/bots/api#setmycommands).
func (c *Client) SetMyCommands(ctx context.Context, p *bot.SetMyCommandsParams) error {
	_, err := c.call(ctx, "setMyCommands", p, nil, c.timeout)
	return err
}

// SetMyDescription sets the bot's description (the empty chat's "What
// can this bot do?") for users of p.LanguageCode ("": everyone without a
// dedicated one) (https://core.telegram.org/bots/api#setmydescription).
func (c *Client) SetMyDescription(ctx context.Context, p *bot.SetMyDescriptionParams) error {
	_, err := c.call(ctx, "setMyDescription", p, nil, c.timeout)
	return err
}

// SetMyShortDescription sets the bot's short description (its profile
// page and share text) for users of p.LanguageCode
// (https://core.telegram.org/bots/api#setmyshortdescription).
func (c *Client) SetMyShortDescription(ctx context.Context, p *bot.SetMyShortDescriptionParams) error {
	_, err := c.call(ctx, "setMyShortDescription", p, nil, c.timeout)
	return err
}

// ChatMemberStatus returns the status of user userID in chat chatID
// ("creator", "administrator", "member", "restricted", "left",
// "kicked": https://core.telegram.org/bots/api#getchatmember).
func (c *Client) ChatMemberStatus(ctx context.Context, chatID, userID int64) (string, error) {
	var m struct {
		Status string `json:"status"`
	}
	if _, err := c.call(ctx, "getChatMember", &bot.GetChatMemberParams{ChatID: chatID, UserID: userID}, &m, c.timeout); err != nil {
		return "", err
	}
	return m.Status, nil
}

// GetMyStarBalance returns the bot's Telegram Stars balance
// (https://core.telegram.org/bots/api#getmystarbalance): Amount whole
// Stars and NanostarAmount billionths of a Star (models.StarAmount).
func (c *Client) GetMyStarBalance(ctx context.Context) (*models.StarAmount, error) {
	var s models.StarAmount
	if _, err := c.call(ctx, "getMyStarBalance", nil, &s, c.timeout); err != nil {
		return nil, err
	}
	return &s, nil
}

// messageID is the one field of a Message the send path reads.
type messageID struct {
	ID int `json:"message_id"`
}

// SendMessageID is SendMessage for a caller that needs only the sent
// message's message_id: it decodes nothing else (a models.Message is a
// struct of some 3 KB, decoded once per send otherwise; BenchmarkDecode).
func (c *Client) SendMessageID(ctx context.Context, p *bot.SendMessageParams) (int, error) {
	var m messageID
	_, err := c.call(ctx, "sendMessage", p, &m, c.timeout)
	return m.ID, err
}

// EditMessageTextID is EditMessageText for a caller that needs only the
// edited message's message_id (see SendMessageID).
func (c *Client) EditMessageTextID(ctx context.Context, p *bot.EditMessageTextParams) (int, error) {
	var m messageID
	_, err := c.call(ctx, "editMessageText", p, &m, c.timeout)
	return m.ID, err
}
