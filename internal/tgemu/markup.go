package tgemu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrUnsupportedParseMode is returned by ParseMarkup for a parse_mode other
// than HTML, MarkdownV2 or Markdown (any case); Telegram answers it 400
// "Bad Request: unsupported parse_mode".
var ErrUnsupportedParseMode = errors.New("unsupported parse_mode")

// MarkupError is a markup that Telegram refuses; it is answered 400
// "Bad Request: can't parse entities: <Reason>". Reasons follow Telegram's
// (TDLib's) wording, e.g. `Unsupported start tag "foo" at byte offset 0` or
// `Character '.' is reserved and must be escaped with the preceding '\'`.
type MarkupError struct {
	Reason string
}

func (e *MarkupError) Error() string { return "can't parse entities: " + e.Reason }

func markupErrorf(format string, args ...any) error {
	return &MarkupError{Reason: fmt.Sprintf(format, args...)}
}

// ParseMarkup checks text in the given parse_mode ("" = plain text, "HTML",
// "MarkdownV2", "Markdown"; case-insensitive, as in Telegram) and returns the
// text with the markup removed. It follows the rules of the Telegram Bot API
// "Formatting options" section and the structure of TDLib's parsers, but only
// detects malformed markup: it does not produce entities. Errors are
// *MarkupError or ErrUnsupportedParseMode.
func ParseMarkup(parseMode, text string) (string, error) {
	switch strings.ToLower(parseMode) {
	case "":
		return text, nil
	case "html":
		return parseHTML(text)
	case "markdownv2":
		return parseMarkdownV2(text)
	case "markdown":
		return parseMarkdownV1(text)
	default:
		return "", ErrUnsupportedParseMode
	}
}

// at returns s[i], or 0 past the end (TDLib relies on a NUL terminator).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// htmlTag reports whether Telegram's HTML parse mode supports tag (Bot API,
// "HTML style").
func htmlTag(tag string) bool {
	switch tag {
	case "a", "b", "strong", "i", "em", "u", "ins", "s", "strike", "del",
		"span", "tg-spoiler", "tg-emoji", "code", "pre", "blockquote":
		return true
	}
	return false
}

// decodeHTMLEntity decodes the character reference at s[i] == '&': &lt;
// &gt; &amp; &quot; and numeric ones. ok is false for anything else, which
// Telegram keeps literally.
func decodeHTMLEntity(s string, i int) (decoded string, next int, ok bool) {
	j := i + 1
	for j < len(s) && (isAlnum(s[j]) || s[j] == '#') && j-i < 12 {
		j++
	}
	if at(s, j) != ';' {
		return "", i, false
	}
	name := s[i+1 : j]
	switch name {
	case "lt":
		return "<", j + 1, true
	case "gt":
		return ">", j + 1, true
	case "amp":
		return "&", j + 1, true
	case "quot":
		return "\"", j + 1, true
	}
	if num, found := strings.CutPrefix(name, "#"); found {
		base := 10
		if h, hex := strings.CutPrefix(strings.ToLower(num), "x"); hex {
			num, base = h, 16
		}
		if n, err := strconv.ParseUint(num, base, 32); err == nil && utf8.ValidRune(rune(n)) && n != 0 {
			return string(rune(n)), j + 1, true
		}
	}
	return "", i, false
}

// parseHTML follows TDLib's parse_html: tags must be supported and properly
// nested, attribute syntax must be complete, a bare '<' is an unsupported
// start tag; '&' sequences that are not known references stay literal.
func parseHTML(text string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(text); {
		c := text[i]
		if c == '&' {
			if d, next, ok := decodeHTMLEntity(text, i); ok {
				out.WriteString(d)
				i = next
				continue
			}
		}
		if c != '<' {
			out.WriteByte(c)
			i++
			continue
		}
		begin := i
		i++
		if at(text, i) != '/' {
			for i < len(text) && !isSpace(text[i]) && text[i] != '>' {
				i++
			}
			if i >= len(text) {
				return "", markupErrorf("Unclosed start tag at byte offset %d", begin)
			}
			tag := strings.ToLower(text[begin+1 : i])
			if !htmlTag(tag) {
				return "", markupErrorf("Unsupported start tag %q at byte offset %d", tag, begin)
			}
			class := ""
			for at(text, i) != '>' {
				for i < len(text) && isSpace(text[i]) {
					i++
				}
				if at(text, i) == '>' {
					break
				}
				if i >= len(text) {
					return "", markupErrorf("Unclosed start tag at byte offset %d", begin)
				}
				nameBegin := i
				for i < len(text) && !isSpace(text[i]) && text[i] != '=' && text[i] != '>' {
					i++
				}
				attr := strings.ToLower(text[nameBegin:i])
				if attr == "" {
					return "", markupErrorf("Empty attribute name in the tag %q at byte offset %d", tag, begin)
				}
				for i < len(text) && isSpace(text[i]) {
					i++
				}
				if at(text, i) != '=' {
					if attr == "expandable" && tag == "blockquote" {
						continue // the one valueless attribute Telegram accepts
					}
					return "", markupErrorf("Expected equal sign in declaration of an attribute of the tag %q at byte offset %d", tag, begin)
				}
				i++
				for i < len(text) && isSpace(text[i]) {
					i++
				}
				if i >= len(text) {
					return "", markupErrorf("Unclosed start tag %q at byte offset %d", tag, begin)
				}
				var value string
				if q := text[i]; q == '"' || q == '\'' {
					i++
					vBegin := i
					for i < len(text) && text[i] != q {
						i++
					}
					value = text[vBegin:i]
					if i < len(text) {
						i++
					}
				} else {
					vBegin := i
					for i < len(text) && (isAlnum(text[i]) || text[i] == '.' || text[i] == '-') {
						i++
					}
					value = strings.ToLower(text[vBegin:i])
					if c := at(text, i); !isSpace(c) && c != '>' {
						return "", markupErrorf("Unexpected end of name token at byte offset %d", vBegin)
					}
				}
				if i >= len(text) {
					return "", markupErrorf("Unclosed start tag at byte offset %d", begin)
				}
				if attr == "class" {
					class = value
				}
			}
			if tag == "span" && class != "tg-spoiler" {
				return "", markupErrorf("Tag \"span\" must have class \"tg-spoiler\"")
			}
			stack = append(stack, tag)
			i++ // '>'
			continue
		}
		// end tag
		if len(stack) == 0 {
			return "", markupErrorf("Unexpected end tag at byte offset %d", begin)
		}
		i++ // '/'
		for i < len(text) && !isSpace(text[i]) && text[i] != '>' {
			i++
		}
		endTag := text[begin+2 : i]
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if at(text, i) != '>' {
			return "", markupErrorf("Unclosed end tag at byte offset %d", begin)
		}
		open := stack[len(stack)-1]
		if endTag != "" && endTag != open {
			return "", markupErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, open, endTag)
		}
		stack = stack[:len(stack)-1]
		i++
	}
	if len(stack) > 0 {
		return "", markupErrorf("Can't find end tag corresponding to start tag %s", stack[len(stack)-1])
	}
	return out.String(), nil
}

// mdV2Reserved must be escaped with '\' outside entities in MarkdownV2
// (Bot API, "MarkdownV2 style").
const mdV2Reserved = "_*[]()~`>#+-=|{}.!"

type mdEntity int

const (
	mdBold mdEntity = iota
	mdItalic
	mdUnderline
	mdStrike
	mdSpoiler
	mdCode
	mdPre
	mdTextURL
	mdCustomEmoji
)

// String is TDLib's name of the entity type, used in error messages.
func (k mdEntity) String() string {
	return [...]string{"Bold", "Italic", "Underline", "Strikethrough", "Spoiler", "Code", "Pre", "TextUrl", "CustomEmoji"}[k]
}

// parseMarkdownV2 follows TDLib's parse_markdown_v2: every reserved
// character outside an entity must be escaped, entities must be closed, a
// text URL needs its closing ')'. Blockquote markers ('>' or "**>" at a line
// start, "||" closing an expandable quote at a line end) are accepted.
func parseMarkdownV2(text string) (string, error) {
	var out strings.Builder
	type open struct {
		kind   mdEntity
		offset int
	}
	var stack []open
	expandable := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\\' && at(text, i+1) > 0 && at(text, i+1) <= 126 {
			i++
			out.WriteByte(text[i])
			continue
		}
		inCode := len(stack) > 0 && (stack[len(stack)-1].kind == mdCode || stack[len(stack)-1].kind == mdPre)
		lineStart := i == 0 || text[i-1] == '\n'
		if lineStart && !inCode {
			if c != '>' && !strings.HasPrefix(text[i:], "**>") {
				expandable = false
			}
			if strings.HasPrefix(text[i:], "**>") {
				expandable = true
				i += 2
				continue
			}
			if c == '>' {
				continue
			}
		}
		if expandable && !inCode && strings.HasPrefix(text[i:], "||") && (at(text, i+2) == '\n' || i+2 == len(text)) {
			i++
			continue
		}
		reserved := mdV2Reserved
		if inCode {
			reserved = "`"
		}
		if !strings.ContainsRune(reserved, rune(c)) {
			out.WriteByte(c)
			continue
		}
		isEnd := false
		if n := len(stack); n > 0 {
			switch stack[n-1].kind {
			case mdBold:
				isEnd = c == '*'
			case mdItalic:
				isEnd = c == '_' && at(text, i+1) != '_'
			case mdCode:
				isEnd = c == '`'
			case mdPre:
				isEnd = c == '`' && at(text, i+1) == '`' && at(text, i+2) == '`'
			case mdTextURL, mdCustomEmoji:
				isEnd = c == ']'
			case mdUnderline:
				isEnd = c == '_' && at(text, i+1) == '_'
			case mdStrike:
				isEnd = c == '~'
			case mdSpoiler:
				isEnd = c == '|' && at(text, i+1) == '|'
			}
		}
		if !isEnd {
			begin := i
			var kind mdEntity
			switch c {
			case '_':
				kind = mdItalic
				if at(text, i+1) == '_' {
					kind = mdUnderline
					i++
				}
			case '*':
				kind = mdBold
			case '~':
				kind = mdStrike
			case '|':
				if at(text, i+1) != '|' {
					return "", reservedErr(c)
				}
				kind = mdSpoiler
				i++
			case '[':
				kind = mdTextURL
			case '`':
				kind = mdCode
				if at(text, i+1) == '`' && at(text, i+2) == '`' {
					kind = mdPre
					i += 2
					// optional language up to the first space or newline
					j := i + 1
					for j < len(text) && !isSpace(text[j]) && text[j] != '`' {
						j++
					}
					if j > i+1 && j < len(text) && text[j] != '`' {
						i = j - 1
					}
				}
			case '!':
				if at(text, i+1) != '[' {
					return "", reservedErr(c)
				}
				kind = mdCustomEmoji
				i++
			default:
				return "", reservedErr(c)
			}
			stack = append(stack, open{kind: kind, offset: begin})
			continue
		}
		top := stack[len(stack)-1]
		switch top.kind {
		case mdUnderline, mdSpoiler:
			i++
		case mdPre:
			i += 2
		case mdTextURL:
			if at(text, i+1) == '(' {
				i += 2
				urlBegin := i
				for i < len(text) && text[i] != ')' {
					if text[i] == '\\' && at(text, i+1) > 0 && at(text, i+1) <= 126 {
						i++
					}
					i++
				}
				if at(text, i) != ')' {
					return "", markupErrorf("Can't find end of a URL at byte offset %d", urlBegin)
				}
			}
		case mdCustomEmoji:
			if at(text, i+1) != '(' {
				return "", markupErrorf("Custom emoji entity must contain a tg://emoji URL")
			}
			i += 2
			urlBegin := i
			for i < len(text) && text[i] != ')' {
				i++
			}
			if at(text, i) != ')' {
				return "", markupErrorf("Can't find end of a custom emoji URL at byte offset %d", urlBegin)
			}
		}
		stack = stack[:len(stack)-1]
	}
	if n := len(stack); n > 0 {
		return "", markupErrorf("Can't find end of %s entity at byte offset %d", stack[n-1].kind, stack[n-1].offset)
	}
	return out.String(), nil
}

func reservedErr(c byte) error {
	return markupErrorf("Character '%c' is reserved and must be escaped with the preceding '\\'", c)
}

// parseMarkdownV1 follows TDLib's parse_markdown (legacy "Markdown" mode):
// *bold*, _italic_, `code`, ```pre```, [text](url); an entity that is
// opened and never closed is an error; '\' escapes _ * ` [ outside
// entities.
func parseMarkdownV1(text string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\\' && strings.IndexByte("_*`[", at(text, i+1)) >= 0 && at(text, i+1) != 0 {
			i++
			out.WriteByte(text[i])
			continue
		}
		if c != '_' && c != '*' && c != '`' && c != '[' {
			out.WriteByte(c)
			continue
		}
		begin := i
		end := c
		if c == '[' {
			end = ']'
		}
		i++
		pre := false
		if c == '`' && at(text, i) == '`' && at(text, i+1) == '`' {
			i += 2
			pre = true
		}
		contentBegin := i
		for i < len(text) && (text[i] != end || (pre && !(at(text, i+1) == '`' && at(text, i+2) == '`'))) {
			i++
		}
		if i >= len(text) {
			return "", markupErrorf("Can't find end of the entity starting at byte offset %d", begin)
		}
		out.WriteString(text[contentBegin:i])
		if pre {
			i += 2
		}
		if c == '[' && at(text, i+1) == '(' {
			j := strings.IndexByte(text[i+1:], ')')
			if j >= 0 {
				i += 1 + j
			}
		}
	}
	return out.String(), nil
}
