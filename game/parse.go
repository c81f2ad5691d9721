package game

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Variation selectors: text (VS15) and emoji (VS16) presentation.
const (
	vs15 = '\uFE0E'
	vs16 = '\uFE0F'
)

// normalize returns the matching key of a grapheme cluster: the cluster with
// every variation selector removed, so "❤️" and "❤" are the same symbol.
func normalize(cluster string) string {
	if !strings.ContainsRune(cluster, vs16) && !strings.ContainsRune(cluster, vs15) {
		return cluster
	}
	return strings.Map(func(r rune) rune {
		if r == vs15 || r == vs16 {
			return -1
		}
		return r
	}, cluster)
}

// isEmojiLike reports whether a grapheme cluster looks like an emoji rather
// than text: it holds a symbol (category So, which covers pictographs and
// regional indicators), a skin-tone modifier, a keycap (U+20E3) or any rune
// of the Supplementary Multilingual Plane's emoji blocks (U+1F000..U+1FAFF).
// Invalid UTF-8 (decoded as U+FFFD) is text.
func isEmojiLike(cluster string) bool {
	for _, r := range cluster {
		switch {
		case r == utf8.RuneError: // invalid UTF-8 (or U+FFFD itself)
			return false
		case unicode.Is(unicode.So, r),
			r == '\u20E3',
			r >= 0x1F000 && r <= 0x1FAFF:
			return true
		}
	}
	return false
}

// isSpace reports whether a grapheme cluster is whitespace only (a
// separator between symbols; "\r\n" is one cluster).
func isSpace(cluster string) bool {
	for _, r := range cluster {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// ParseGuess splits text into the symbols of palette, by grapheme cluster
// (UAX #29, via github.com/rivo/uniseg), and returns them in the palette's
// own spelling.
//
// Any Unicode whitespace between symbols is ignored, as are variation
// selectors (U+FE0E/U+FE0F) anywhere in a cluster, and a lone selector. A
// skin-toned or ZWJ emoji is one symbol, and so is rejected whole unless the
// palette has it.
//
// The result has exactly codeLength symbols, or the error is a *GuessError:
// Text for the first cluster that is not an emoji, else NotInPalette for the
// first emoji not in the palette, else WrongCount.
func ParseGuess(text string, palette []string, codeLength int) ([]string, error) {
	byKey := make(map[string]string, len(palette))
	for _, p := range palette {
		byKey[normalize(p)] = p
	}
	fail := func(kind GuessErrorKind, got int, sym string) error {
		return &GuessError{Kind: kind, Got: got, Need: codeLength, Symbol: sym, Palette: append([]string(nil), palette...)}
	}
	var (
		out        []string
		firstAlien string
		alienAt    int
		count      int
	)
	state := -1
	rest := text
	for len(rest) > 0 {
		var cluster string
		cluster, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		key := normalize(cluster)
		if isSpace(key) { // whitespace, or lone variation selector(s)
			continue
		}
		count++
		if sym, ok := byKey[key]; ok {
			if len(out) < codeLength {
				out = append(out, sym)
			}
			continue
		}
		if !isEmojiLike(key) {
			return nil, fail(Text, count, cluster)
		}
		if firstAlien == "" {
			firstAlien, alienAt = cluster, count
		}
	}
	if firstAlien != "" {
		return nil, fail(NotInPalette, alienAt, firstAlien)
	}
	if count != codeLength {
		return nil, fail(WrongCount, count, "")
	}
	return out, nil
}
