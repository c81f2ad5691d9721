// Package tgtext holds Telegram's text-length rules, shared by the notifier
// (which splits long texts) and the Bot API emulator (which rejects them).
package tgtext

import "unicode/utf16"

// MaxTextUnits is the longest text of one Telegram message, in UTF-16 code
// units (Telegram Bot API, sendMessage: "Text of the message to be sent,
// 1-4096 characters after entities parsing"; Telegram counts characters as
// UTF-16 code units, so a character above U+FFFF, like most emoji, counts 2).
const MaxTextUnits = 4096

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
