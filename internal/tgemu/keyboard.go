package tgemu

import (
	"encoding/json"
	"time"
)

// Inline keyboard rules (Telegram Bot API, InlineKeyboardButton:
// "callback_data ... 1-64 bytes"; the answers are those the Bot API gives).
const (
	// MaxCallbackData is the longest callback_data, in bytes.
	MaxCallbackData = 64
	// CallbackAnswerTimeout is how long after the tap a callback query
	// can still be answered; later, answerCallbackQuery gets the 400
	// "query is too old ...". Telegram documents no figure; clients stop
	// the button's spinner after about 15 s, and the Bot API refuses
	// answers after roughly that.
	CallbackAnswerTimeout = 15 * time.Second
)

// Telegram's answers to a bad reply_markup.
const (
	errMarkupJSON   = "can't parse reply keyboard markup JSON object"
	errTextButton   = "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
	errButtonData   = "BUTTON_DATA_INVALID"
	errButtonText   = "BUTTON_TEXT_INVALID"
	errQueryTooOld  = "query is too old and response timeout expired or query ID is invalid"
	errCantBeEdited = "message can't be edited"
)

// checkReplyMarkup validates an inline keyboard the way Telegram does:
// the JSON must parse; each button needs an action (callback_data, url,
// or another action field), callback_data is 1-64 bytes, and button text
// is not empty. A reply_markup that is not an inline keyboard (a reply
// keyboard, force_reply, remove) is accepted without checks. nil: valid.
func checkReplyMarkup(raw string) *reply {
	if raw == "" {
		return nil
	}
	var kb struct {
		InlineKeyboard [][]map[string]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &kb); err != nil {
		r := badRequest(errMarkupJSON)
		return &r
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			var text string
			if t, ok := b["text"]; !ok || json.Unmarshal(t, &text) != nil || text == "" {
				r := badRequest(errButtonText)
				return &r
			}
			actions := 0
			for k, v := range b {
				switch k {
				case "text":
				case "callback_data":
					var d string
					if json.Unmarshal(v, &d) != nil || len(d) > MaxCallbackData {
						r := badRequest(errButtonData)
						return &r
					}
					if d != "" {
						actions++
					}
				default:
					actions++
				}
			}
			if actions == 0 {
				r := badRequest(errTextButton)
				return &r
			}
		}
	}
	return nil
}
