// Package tgtext holds Telegram's text-length rules, shared by the notifier
// (which splits long texts), the app (which clips a callback answer) and
// the Bot API emulator (which rejects what is too long), and the count
// phrase (Plural) of the admins' English texts.
package tgtext

import (
	"strconv"
	"unicode/utf16"
)

// Plural is "1 <one>" for n = 1, "<n> <many>" otherwise ("1 copy", "0
// copies", "30 copies"): the count phrase of the admins' texts, which are
// English only.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// MaxTextUnits is the longest text of one Telegram message, in UTF-16 code
// units (Telegram Bot API, sendMessage: "Text of the message to be sent,
// 1-4096 characters after entities parsing"; Telegram counts characters as
// UTF-16 code units, so a character above U+FFFF, like most emoji, counts 2).
const MaxTextUnits = 4096

// MaxCallbackAnswerUnits is the longest answerCallbackQuery text (a
// toast), in UTF-16 code units (Telegram Bot API, answerCallbackQuery:
// "0-200 characters", counted as message texts are); longer is refused
// with 400 MESSAGE_TOO_LONG and the button keeps spinning.
const MaxCallbackAnswerUnits = 200

// UTF16Len is the length of s in UTF-16 code units, Telegram's unit for
// text lengths and entity offsets: 1 per BMP character, 2 per character
// above U+FFFF; an invalid byte counts 1 (it reads as U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Clip is s cut to at most max UTF-16 code units (UTF16Len), ending in "…"
// (1 unit) when cut; a character is never split, so an emoji (2 units)
// that would straddle the cut goes whole. s of at most max units is
// returned as it is. max must be >= 1.
func Clip(s string, max int) string {
	if UTF16Len(s) <= max {
		return s
	}
	units := 0
	for i, r := range s {
		if units+utf16.RuneLen(r) > max-1 { // 1 for the "…"
			return s[:i] + "…"
		}
		units += utf16.RuneLen(r)
	}
	return s
}
