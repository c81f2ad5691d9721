package notifier

import (
	"strings"

	"github.com/rivo/uniseg"

	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Split cuts text into ordered parts of at most maxUnits UTF-16 code units
// each (maxUnits < 1 means tgtext.MaxTextUnits), whose concatenation is text.
//
// Cuts fall on grapheme-cluster boundaries (Unicode UAX #29, via uniseg), so
// an emoji ZWJ sequence, a flag or a letter with combining marks is never
// torn apart. Within the room of one part the cut prefers, in order: the
// last mandatory line break (after "\n", "\r\n", ...), then the last line
// break opportunity of UAX #14 (after a space, between CJK ideographs, ...),
// then the last grapheme-cluster boundary. The separator stays at the end of
// the earlier part.
//
// Last resort: a single grapheme cluster longer than maxUnits on its own (a
// pathological input, e.g. thousands of combining marks on one letter) is
// cut at rune boundaries, so every part is still valid UTF-8 when text is;
// such a cluster is the only case where a cluster is split.
//
// Parts made only of white space are dropped (Telegram rejects them as
// "message text is empty"); that is the only case where the concatenation
// of the parts differs from text, and it differs by white space only. An
// empty result means text had nothing to send.
func Split(text string, maxUnits int) []string {
	if maxUnits < 1 {
		maxUnits = tgtext.MaxTextUnits
	}
	var parts []string
	emit := func(p string) {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	if tgtext.UTF16Len(text) <= maxUnits {
		emit(text)
		return parts
	}
	start, pos, units := 0, 0, 0
	// Byte offsets just after the break opportunities in text[start:pos].
	var mustBrk, canBrk []int
	last := func(offs []int) int {
		if len(offs) == 0 {
			return -1
		}
		return offs[len(offs)-1]
	}
	after := func(offs []int, cut int) []int {
		out := offs[:0]
		for _, o := range offs {
			if o > cut {
				out = append(out, o)
			}
		}
		return out
	}
	state := -1
	rest := text
	for len(rest) > 0 {
		cluster, next, boundaries, st := uniseg.StepString(rest, state)
		state = st
		rest = next
		cu := tgtext.UTF16Len(cluster)
		if cu > maxUnits {
			// Pathological cluster: flush, then cut it at rune boundaries.
			if pos > start {
				emit(text[start:pos])
			}
			for _, chunk := range splitRunes(cluster, maxUnits) {
				emit(chunk)
			}
			pos += len(cluster)
			start, units, mustBrk, canBrk = pos, 0, mustBrk[:0], canBrk[:0]
			continue
		}
		if units+cu > maxUnits {
			cut := pos
			if m := last(mustBrk); m > start {
				cut = m
			} else if c := last(canBrk); c > start {
				cut = c
			}
			emit(text[start:cut])
			start = cut
			units = tgtext.UTF16Len(text[start:pos])
			mustBrk, canBrk = after(mustBrk, cut), after(canBrk, cut)
		}
		units += cu
		pos += len(cluster)
		switch boundaries & uniseg.MaskLine {
		case uniseg.LineMustBreak:
			mustBrk = append(mustBrk, pos)
		case uniseg.LineCanBreak:
			canBrk = append(canBrk, pos)
		}
	}
	if pos > start {
		emit(text[start:pos])
	}
	return parts
}

// splitRunes cuts s into chunks of at most maxUnits UTF-16 units at rune
// boundaries.
func splitRunes(s string, maxUnits int) []string {
	var out []string
	start, units := 0, 0
	for i, r := range s {
		u := 1
		if r >= 0x10000 {
			u = 2
		}
		if units+u > maxUnits {
			out = append(out, s[start:i])
			start, units = i, 0
		}
		units += u
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
