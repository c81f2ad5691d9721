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
// text with the markup removed (before Telegram's clean-up and trimming:
// see ParseFormatted). It follows the rules of the Telegram Bot API
// "Formatting options" section and the structure of TDLib's parsers. Errors
// are *MarkupError or ErrUnsupportedParseMode.
func ParseMarkup(parseMode, text string) (string, error) {
	plain, _, err := parseMarkup(parseMode, text)
	return plain, err
}

// parseMarkup is ParseMarkup with the entities the markup made.
func parseMarkup(parseMode, text string) (string, []span, error) {
	switch strings.ToLower(parseMode) {
	case "":
		return text, nil, nil
	case "html":
		return parseHTML(text)
	case "markdownv2":
		return parseMarkdownV2(text)
	case "markdown":
		return parseMarkdownV1(text)
	default:
		return "", nil, ErrUnsupportedParseMode
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

// htmlOpen is an open HTML tag: its name, where its content starts in the
// parsed text, and the attributes that make its entity.
type htmlOpen struct {
	tag                 string
	start               int
	href, class, emoji  string
	expandable, hasHref bool
}

// span is the entity of the tag closed at end (bytes of the parsed text).
func (o htmlOpen) span(end int) span {
	s := span{start: o.start, end: end}
	switch o.tag {
	case "b", "strong":
		s.typ = "bold"
	case "i", "em":
		s.typ = "italic"
	case "u", "ins":
		s.typ = "underline"
	case "s", "strike", "del":
		s.typ = "strikethrough"
	case "span", "tg-spoiler":
		s.typ = "spoiler"
	case "a":
		s.typ, s.url = "text_link", o.href
		if !o.hasHref || o.href == "" {
			s.typ, s.url = "url", ""
		}
	case "code":
		s.typ = "code"
		s.language, _ = strings.CutPrefix(o.class, "language-")
		if s.language == o.class {
			s.language = ""
		}
	case "pre":
		s.typ = "pre"
	case "blockquote":
		s.typ = "blockquote"
		if o.expandable {
			s.typ = "expandable_blockquote"
		}
	case "tg-emoji":
		s.typ, s.emojiID = "custom_emoji", o.emoji
	}
	return s
}

// decodeHTMLText decodes the character references of an attribute value.
func decodeHTMLText(v string) string {
	if !strings.Contains(v, "&") {
		return v
	}
	var out strings.Builder
	for i := 0; i < len(v); {
		if v[i] == '&' {
			if d, next, ok := decodeHTMLEntity(v, i); ok {
				out.WriteString(d)
				i = next
				continue
			}
		}
		out.WriteByte(v[i])
		i++
	}
	return out.String()
}

// parseHTMLStartTag reads the start tag at text[begin] == '<' (not "</")
// and returns it and the index after its '>'.
func parseHTMLStartTag(text string, begin int) (htmlOpen, int, error) {
	i := begin + 1
	for i < len(text) && !isSpace(text[i]) && text[i] != '>' {
		i++
	}
	if i >= len(text) {
		return htmlOpen{}, 0, markupErrorf("Unclosed start tag at byte offset %d", begin)
	}
	o := htmlOpen{tag: strings.ToLower(text[begin+1 : i])}
	if !htmlTag(o.tag) {
		return htmlOpen{}, 0, markupErrorf("Unsupported start tag %q at byte offset %d", o.tag, begin)
	}
	for at(text, i) != '>' {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if at(text, i) == '>' {
			break
		}
		if i >= len(text) {
			return htmlOpen{}, 0, markupErrorf("Unclosed start tag at byte offset %d", begin)
		}
		attr, value, next, err := parseHTMLAttr(text, i, begin, o.tag)
		if err != nil {
			return htmlOpen{}, 0, err
		}
		i = next
		switch attr {
		case "expandable":
			o.expandable = true
		case "class":
			o.class = value
		case "href":
			o.href, o.hasHref = value, true
		case "emoji-id":
			o.emoji = value
		}
	}
	if o.tag == "span" && o.class != "tg-spoiler" {
		return htmlOpen{}, 0, markupErrorf("Tag \"span\" must have class \"tg-spoiler\"")
	}
	return o, i + 1, nil
}

// parseHTMLAttr reads the attribute at text[i] of the tag opened at begin:
// its lower-case name, its value (character references decoded; an
// unquoted value lower-cased, as TDLib does) and the index after it.
// blockquote's expandable is the one attribute without a value.
func parseHTMLAttr(text string, i, begin int, tag string) (name, value string, next int, err error) {
	nameBegin := i
	for i < len(text) && !isSpace(text[i]) && text[i] != '=' && text[i] != '>' {
		i++
	}
	name = strings.ToLower(text[nameBegin:i])
	if name == "" {
		return "", "", 0, markupErrorf("Empty attribute name in the tag %q at byte offset %d", tag, begin)
	}
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	if at(text, i) != '=' {
		if name == "expandable" && tag == "blockquote" {
			return name, "", i, nil
		}
		return "", "", 0, markupErrorf("Expected equal sign in declaration of an attribute of the tag %q at byte offset %d", tag, begin)
	}
	i++
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	if i >= len(text) {
		return "", "", 0, markupErrorf("Unclosed start tag %q at byte offset %d", tag, begin)
	}
	value, i, err = parseHTMLValue(text, i)
	if err != nil {
		return "", "", 0, err
	}
	if i >= len(text) {
		return "", "", 0, markupErrorf("Unclosed start tag at byte offset %d", begin)
	}
	return name, value, i, nil
}

// parseHTMLValue reads the attribute value at text[i]: quoted, with its
// character references decoded, or unquoted (letters, digits, '.' and '-'),
// lower-cased; it returns the value and the index after it.
func parseHTMLValue(text string, i int) (string, int, error) {
	if q := text[i]; q == '"' || q == '\'' {
		i++
		vBegin := i
		for i < len(text) && text[i] != q {
			i++
		}
		value := decodeHTMLText(text[vBegin:i])
		if i < len(text) {
			i++
		}
		return value, i, nil
	}
	vBegin := i
	for i < len(text) && (isAlnum(text[i]) || text[i] == '.' || text[i] == '-') {
		i++
	}
	if c := at(text, i); !isSpace(c) && c != '>' {
		return "", 0, markupErrorf("Unexpected end of name token at byte offset %d", vBegin)
	}
	return strings.ToLower(text[vBegin:i]), i, nil
}

// parseHTML follows TDLib's parse_html: tags must be supported and properly
// nested, attribute syntax must be complete, a bare '<' is an unsupported
// start tag; '&' sequences that are not known references stay literal. It
// returns the text without markup and the entities of the tags (a tag's
// entity spans its content; empty ones are dropped later).
func parseHTML(text string) (string, []span, error) {
	var out strings.Builder
	var stack []htmlOpen
	var spans []span
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
		if at(text, i+1) != '/' {
			o, next, err := parseHTMLStartTag(text, begin)
			if err != nil {
				return "", nil, err
			}
			o.start = out.Len()
			stack = append(stack, o)
			i = next
			continue
		}
		// end tag
		if len(stack) == 0 {
			return "", nil, markupErrorf("Unexpected end tag at byte offset %d", begin)
		}
		i += 2 // "</"
		for i < len(text) && !isSpace(text[i]) && text[i] != '>' {
			i++
		}
		endTag := text[begin+2 : i]
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if at(text, i) != '>' {
			return "", nil, markupErrorf("Unclosed end tag at byte offset %d", begin)
		}
		open := stack[len(stack)-1]
		if endTag != "" && endTag != open.tag {
			return "", nil, markupErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, open.tag, endTag)
		}
		spans = append(spans, open.span(out.Len()))
		stack = stack[:len(stack)-1]
		i++
	}
	if len(stack) > 0 {
		return "", nil, markupErrorf("Can't find end tag corresponding to start tag %s", stack[len(stack)-1].tag)
	}
	return out.String(), spans, nil
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

// mdType is the Bot API entity type of a MarkdownV2 entity.
func (k mdEntity) mdType() string {
	return [...]string{"bold", "italic", "underline", "strikethrough", "spoiler", "code", "pre", "text_link", "custom_emoji"}[k]
}

// mdOpen is an open MarkdownV2 entity: its kind, its byte offset in the
// markup (for errors), where its content starts in the parsed text, and a
// pre's language.
type mdOpen struct {
	kind     mdEntity
	offset   int
	start    int
	language string
}

// mdCloses reports whether text[i] closes an open entity of kind k.
func mdCloses(k mdEntity, text string, i int) bool {
	c := text[i]
	switch k {
	case mdBold:
		return c == '*'
	case mdItalic:
		return c == '_' && at(text, i+1) != '_'
	case mdCode:
		return c == '`'
	case mdPre:
		return c == '`' && at(text, i+1) == '`' && at(text, i+2) == '`'
	case mdTextURL, mdCustomEmoji:
		return c == ']'
	case mdUnderline:
		return c == '_' && at(text, i+1) == '_'
	case mdStrike:
		return c == '~'
	case mdSpoiler:
		return c == '|' && at(text, i+1) == '|'
	}
	return false
}

// mdOpenAt opens the entity whose marker starts at text[i], a reserved
// character; it returns the entity and the index of the marker's last
// byte.
func mdOpenAt(text string, i int) (mdOpen, int, error) {
	o := mdOpen{offset: i}
	switch c := text[i]; c {
	case '_':
		o.kind = mdItalic
		if at(text, i+1) == '_' {
			o.kind = mdUnderline
			i++
		}
	case '*':
		o.kind = mdBold
	case '~':
		o.kind = mdStrike
	case '|':
		if at(text, i+1) != '|' {
			return o, i, reservedErr(c)
		}
		o.kind = mdSpoiler
		i++
	case '[':
		o.kind = mdTextURL
	case '`':
		o.kind = mdCode
		if at(text, i+1) == '`' && at(text, i+2) == '`' {
			o.kind = mdPre
			o.language, i = preStart(text, i+3)
			i--
		}
	case '!':
		if at(text, i+1) != '[' {
			return o, i, reservedErr(c)
		}
		o.kind = mdCustomEmoji
		i++
	default:
		return o, i, reservedErr(c)
	}
	return o, i, nil
}

// preStart reads the start of a pre's content at text[i], just after its
// "```": an optional language up to the first space or newline, then one
// newline that is not part of the content (TDLib's parse_markdown and
// parse_markdown_v2). It returns the language and where the content starts.
func preStart(text string, i int) (string, int) {
	language := ""
	j := i
	for j < len(text) && !isSpace(text[j]) && text[j] != '`' {
		j++
	}
	if j > i && j < len(text) && text[j] != '`' {
		language, i = text[i:j], j
	}
	if c := at(text, i); c == '\n' || c == '\r' {
		if d := at(text, i+1); (d == '\n' || d == '\r') && d != c {
			i++
		}
		i++
	}
	return language, i
}

// mdClose reads the rest of the closing marker of o at text[i] (for a
// link, its "(url)") and returns o's entity ending at end of the parsed
// text, and the index of the marker's last byte.
func mdClose(o mdOpen, text string, i, end int) (span, int, error) {
	sp := span{typ: o.kind.mdType(), start: o.start, end: end, language: o.language}
	switch o.kind {
	case mdUnderline, mdSpoiler:
		i++
	case mdPre:
		i += 2
	case mdTextURL:
		if at(text, i+1) != '(' {
			// [text] without a URL: no entity (TDLib takes the text as
			// the URL and drops an invalid one; not emulated)
			return span{}, i, nil
		}
		i += 2
		urlBegin := i
		var url strings.Builder
		for i < len(text) && text[i] != ')' {
			if text[i] == '\\' && at(text, i+1) > 0 && at(text, i+1) <= 126 {
				i++
			}
			url.WriteByte(text[i])
			i++
		}
		if at(text, i) != ')' {
			return span{}, i, markupErrorf("Can't find end of a URL at byte offset %d", urlBegin)
		}
		sp.url = url.String()
	case mdCustomEmoji:
		if at(text, i+1) != '(' {
			return span{}, i, markupErrorf("Custom emoji entity must contain a tg://emoji URL")
		}
		i += 2
		urlBegin := i
		for i < len(text) && text[i] != ')' {
			i++
		}
		if at(text, i) != ')' {
			return span{}, i, markupErrorf("Can't find end of a custom emoji URL at byte offset %d", urlBegin)
		}
		sp.emojiID = strings.TrimPrefix(text[urlBegin:i], "tg://emoji?id=")
	}
	return sp, i, nil
}

// mdQuote tracks a MarkdownV2 block quote: consecutive lines that start
// with '>' ("**>" for an expandable one, whose last line ends with "||").
type mdQuote struct {
	start      int // in the parsed text; -1 when no quote is open
	expandable bool
}

// lineStart handles the start of a line at text[i] outside code: it opens,
// continues or closes the quote (closed quotes go to spans) and returns
// how many bytes of quote marker to skip.
func (q *mdQuote) lineStart(text string, i int, out *strings.Builder, spans *[]span) int {
	marker := 0
	switch {
	case strings.HasPrefix(text[i:], "**>"):
		marker = 3
	case text[i] == '>':
		marker = 1
	}
	if marker == 0 || (marker == 3 && q.start >= 0) {
		q.close(out, spans)
	}
	if marker > 0 && q.start < 0 {
		q.start, q.expandable = out.Len(), marker == 3
	}
	return marker
}

// close ends an open quote at the end of out (a trailing newline is not
// part of it).
func (q *mdQuote) close(out *strings.Builder, spans *[]span) {
	if q.start < 0 {
		return
	}
	end := out.Len()
	if strings.HasSuffix(out.String(), "\n") {
		end--
	}
	typ := "blockquote"
	if q.expandable {
		typ = "expandable_blockquote"
	}
	*spans = append(*spans, span{typ: typ, start: q.start, end: end})
	q.start, q.expandable = -1, false
}

// parseMarkdownV2 follows TDLib's parse_markdown_v2: every reserved
// character outside an entity must be escaped, entities must be closed, a
// text URL needs its closing ')'. Blockquote markers ('>' or "**>" at a line
// start, "||" closing an expandable quote at a line end) are accepted. It
// returns the text without markup and its entities.
func parseMarkdownV2(text string) (string, []span, error) {
	var out strings.Builder
	var stack []mdOpen
	var spans []span
	quote := mdQuote{start: -1}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\\' && at(text, i+1) > 0 && at(text, i+1) <= 126 {
			i++
			out.WriteByte(text[i])
			continue
		}
		inCode := len(stack) > 0 && (stack[len(stack)-1].kind == mdCode || stack[len(stack)-1].kind == mdPre)
		if (i == 0 || text[i-1] == '\n') && !inCode {
			if skip := quote.lineStart(text, i, &out, &spans); skip > 0 {
				i += skip - 1
				continue
			}
		}
		if quote.expandable && !inCode && strings.HasPrefix(text[i:], "||") && (at(text, i+2) == '\n' || i+2 == len(text)) {
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
		if n := len(stack); n == 0 || !mdCloses(stack[n-1].kind, text, i) {
			o, next, err := mdOpenAt(text, i)
			if err != nil {
				return "", nil, err
			}
			o.start = out.Len()
			stack = append(stack, o)
			i = next
			continue
		}
		sp, next, err := mdClose(stack[len(stack)-1], text, i, out.Len())
		if err != nil {
			return "", nil, err
		}
		if sp.typ != "" {
			spans = append(spans, sp)
		}
		i = next
		stack = stack[:len(stack)-1]
	}
	if n := len(stack); n > 0 {
		return "", nil, markupErrorf("Can't find end of %s entity at byte offset %d", stack[n-1].kind, stack[n-1].offset)
	}
	quote.close(&out, &spans)
	return out.String(), spans, nil
}

func reservedErr(c byte) error {
	return markupErrorf("Character '%c' is reserved and must be escaped with the preceding '\\'", c)
}

// parseMarkdownV1 follows TDLib's parse_markdown (legacy "Markdown" mode):
// *bold*, _italic_, `code`, ```pre```, [text](url); an entity that is
// opened and never closed is an error; '\' escapes _ * ` [ outside
// entities. It returns the text without markup and its entities.
func parseMarkdownV1(text string) (string, []span, error) {
	var out strings.Builder
	var spans []span
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
		pre, language := false, ""
		if c == '`' && at(text, i) == '`' && at(text, i+1) == '`' {
			pre = true
			language, i = preStart(text, i+2)
		}
		contentBegin := i
		for i < len(text) && (text[i] != end || (pre && !(at(text, i+1) == '`' && at(text, i+2) == '`'))) {
			i++
		}
		if i >= len(text) {
			return "", nil, markupErrorf("Can't find end of the entity starting at byte offset %d", begin)
		}
		sp := span{typ: map[byte]string{'*': "bold", '_': "italic", '`': "code"}[c], start: out.Len()}
		out.WriteString(text[contentBegin:i])
		sp.end = out.Len()
		if pre {
			sp.typ, sp.language = "pre", language
			i += 2
		}
		if c == '[' && at(text, i+1) == '(' {
			if j := strings.IndexByte(text[i+1:], ')'); j >= 0 {
				sp.typ, sp.url = "text_link", text[i+2:i+1+j]
				i += 1 + j
			}
		}
		if sp.typ != "" {
			spans = append(spans, sp)
		}
	}
	return out.String(), spans, nil
}
