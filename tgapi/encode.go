package tgapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// encodeParams is params (not nil) as its JSON body: json.Marshal's bytes.
// A *bot.SendMessageParams of the worker's shapes is written without
// reflection (appendSendMessage), everything else by json.Marshal.
func encodeParams(params any) ([]byte, error) {
	if p, ok := params.(*bot.SendMessageParams); ok && p != nil {
		if b, ok := appendSendMessage(make([]byte, 0, len(p.Text)+192), p); ok {
			return b, nil
		}
	}
	return json.Marshal(params)
}

// appendSendMessage appends p to dst as json.Marshal writes it, when p has
// only the fields a worker's send sets: ChatID an int64 or an int, Text,
// ParseMode, DisableNotification, ProtectContent, AllowPaidBroadcast,
// ReplyParameters with MessageID and AllowSendingWithoutReply alone, and
// ReplyMarkup nil or a non-empty json.RawMessage. ok is false for any other
// p (dst then holds a part of it), which encodeParams gives to
// json.Marshal. The same bytes as json.Marshal where it takes p:
// FuzzSendMessageIsJSONMarshals. json.Marshal's reflection was about 2% of
// the worker process's CPU in a paid broadcast at 1,000/s.
func appendSendMessage(dst []byte, p *bot.SendMessageParams) (_ []byte, ok bool) {
	if p.BusinessConnectionID != "" || p.MessageThreadID != 0 || p.DirectMessagesTopicID != 0 || len(p.Entities) != 0 ||
		p.LinkPreviewOptions != nil || p.MessageEffectID != "" || p.SuggestedPostParameters != nil {
		return dst, false
	}
	var chat int64
	switch c := p.ChatID.(type) {
	case int64:
		chat = c
	case int:
		chat = int64(c)
	default:
		return dst, false
	}
	dst = append(dst, `{"chat_id":`...)
	dst = strconv.AppendInt(dst, chat, 10)
	dst = append(dst, `,"text":`...)
	dst = appendJSONString(dst, p.Text)
	if p.ParseMode != "" {
		dst = append(dst, `,"parse_mode":`...)
		dst = appendJSONString(dst, string(p.ParseMode))
	}
	if p.DisableNotification {
		dst = append(dst, `,"disable_notification":true`...)
	}
	if p.ProtectContent {
		dst = append(dst, `,"protect_content":true`...)
	}
	if p.AllowPaidBroadcast {
		dst = append(dst, `,"allow_paid_broadcast":true`...)
	}
	if dst, ok = appendReplyParameters(dst, p.ReplyParameters); !ok {
		return dst, false
	}
	if dst, ok = appendReplyMarkup(dst, p.ReplyMarkup); !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

// appendReplyParameters appends r as appendSendMessage's reply_parameters
// (nothing for nil); ok is false for an r with more than MessageID and
// AllowSendingWithoutReply.
func appendReplyParameters(dst []byte, r *models.ReplyParameters) (_ []byte, ok bool) {
	if r == nil {
		return dst, true
	}
	if r.ChatID != nil || r.Quote != "" || r.QuoteParseMode != "" || len(r.QuoteEntities) != 0 || r.QuotePosition != 0 ||
		r.ChecklistTaskID != 0 {
		return dst, false
	}
	dst = append(dst, `,"reply_parameters":{"message_id":`...)
	dst = strconv.AppendInt(dst, int64(r.MessageID), 10)
	if r.AllowSendingWithoutReply {
		dst = append(dst, `,"allow_sending_without_reply":true`...)
	}
	return append(dst, '}'), true
}

// appendReplyMarkup appends m as appendSendMessage's reply_markup (nothing
// for nil); ok is false for anything but a valid non-empty
// json.RawMessage.
func appendReplyMarkup(dst []byte, m models.ReplyMarkup) (_ []byte, ok bool) {
	switch m := m.(type) {
	case nil:
		return dst, true
	case json.RawMessage:
		// json.Marshal compacts a RawMessage and escapes <, >, & and
		// U+2028, U+2029 in it; an empty or invalid one is its error.
		var compact bytes.Buffer
		if len(m) == 0 || json.Compact(&compact, m) != nil {
			return dst, false
		}
		dst = append(dst, `,"reply_markup":`...)
		out := bytes.NewBuffer(dst)
		json.HTMLEscape(out, compact.Bytes())
		return out.Bytes(), true
	default:
		return dst, false
	}
}

// appendJSONString appends s as encoding/json writes a string (its
// appendString with HTML escaping, Go 1.26): '"' and '\\' escaped, control
// characters as \b, \f, \n, \r, \t or \u00XX, '<', '>' and '&' as \u003c,
// \u003e and \u0026, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
