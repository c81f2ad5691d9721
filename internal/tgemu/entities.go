package tgemu

import (
	"sort"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"
)

// span is an entity a markup parser found: a Bot API MessageEntity type and
// its range in bytes of the parsed text, with the fields some types carry.
type span struct {
	typ        string
	start, end int
	url        string // text_link
	language   string // pre (and code, until merged into its pre)
	emojiID    string // custom_emoji
}

// FormattedText is a message text the way Telegram keeps it: the text
// without markup, cleaned and trimmed (TDLib's fix_formatted_text), and its
// entities (UTF-16 offsets and lengths, sorted by offset, then the longer
// first, then by type). Two texts whose markup differs but parses to the
// same FormattedText are the same message content to Telegram (an edit
// between them is "message is not modified").
type FormattedText struct {
	Text     string
	Entities []models.MessageEntity
}

// ParseFormatted parses text in parseMode (see ParseMarkup) and applies
// TDLib's clean-up (fix_formatted_text, clean_input_string): control
// characters but '\n' become spaces, '\r' and U+2028-U+202E are removed,
// trailing spaces and newlines are cut, and leading ones up to the first
// entity; empty entities are dropped; a code entity spanning exactly a pre
// gives the pre its language. A text that is left empty has Text "" (the
// Bot API answers it 400 "text must be non-empty"). Not emulated: the
// entities Telegram finds by itself (URLs, mentions, commands), the
// splitting and merging of overlapping entities, and text_mention. Errors
// are those of ParseMarkup.
func ParseFormatted(parseMode, text string) (FormattedText, error) {
	plain, spans, err := parseMarkup(parseMode, text)
	if err != nil {
		return FormattedText{}, err
	}
	plain, spans = cleanText(plain, spans)
	plain, spans = trimText(plain, spans)
	if plain == "" {
		return FormattedText{}, nil
	}
	return FormattedText{Text: plain, Entities: messageEntities(plain, mergePreCode(spans))}, nil
}

// cleanText is TDLib's clean_input_string with the spans moved along.
func cleanText(s string, spans []span) (string, []span) {
	out := make([]byte, 0, len(s))
	newPos := make([]int, len(s)+1) // old byte offset -> new
	for i := 0; i < len(s); {
		newPos[i] = len(out)
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\r', r >= 0x2028 && r <= 0x202E, r == 0x333, r == 0x33F, r == 0x30A:
			// removed
		case r < ' ' && r != '\n':
			out = append(out, ' ')
		default:
			out = append(out, s[i:i+n]...)
		}
		for j := i + 1; j < i+n; j++ {
			newPos[j] = len(out)
		}
		i += n
	}
	newPos[len(s)] = len(out)
	var kept []span
	for _, sp := range spans {
		sp.start, sp.end = newPos[sp.start], newPos[sp.end]
		if sp.end > sp.start {
			kept = append(kept, sp)
		}
	}
	return string(out), kept
}

// trimText cuts trailing spaces and newlines, then leading ones before
// the first entity (fix_formatted_text), and drops what became empty.
func trimText(s string, spans []span) (string, []span) {
	end := len(s)
	for end > 0 && (s[end-1] == ' ' || s[end-1] == '\n') {
		end--
	}
	first := end
	for _, sp := range spans {
		first = min(first, sp.start)
	}
	begin := 0
	for begin < first && (s[begin] == ' ' || s[begin] == '\n') {
		begin++
	}
	var kept []span
	for _, sp := range spans {
		sp.start, sp.end = max(sp.start, begin)-begin, min(sp.end, end)-begin
		if sp.end > sp.start {
			kept = append(kept, sp)
		}
	}
	return s[begin:end], kept
}

// mergePreCode gives a pre the language of a code entity with exactly its
// range (HTML's <pre><code class="language-x">) and drops that code.
func mergePreCode(spans []span) []span {
	var out []span
	for i, sp := range spans {
		merged := false
		for j, o := range spans {
			if i != j && sp.typ == "code" && o.typ == "pre" && sp.start == o.start && sp.end == o.end {
				merged = true
			}
		}
		if sp.typ == "pre" {
			for _, o := range spans {
				if o.typ == "code" && o.start == sp.start && o.end == sp.end && o.language != "" {
					sp.language = o.language
				}
			}
		}
		if !merged {
			if sp.typ == "code" {
				sp.language = ""
			}
			out = append(out, sp)
		}
	}
	return out
}

// messageEntities converts spans (bytes of s) to Bot API entities (UTF-16
// code units), sorted.
func messageEntities(s string, spans []span) []models.MessageEntity {
	units := make([]int, len(s)+1) // byte offset -> UTF-16 offset
	u := 0
	for i, r := range s {
		units[i] = u
		u += len(utf16.Encode([]rune{r}))
	}
	units[len(s)] = u
	for i := range s {
		if !utf8.RuneStart(s[i]) {
			units[i] = units[i-1]
		}
	}
	out := make([]models.MessageEntity, 0, len(spans))
	for _, sp := range spans {
		out = append(out, models.MessageEntity{
			Type: models.MessageEntityType(sp.typ), Offset: units[sp.start], Length: units[sp.end] - units[sp.start],
			URL: sp.url, Language: sp.language, CustomEmojiID: sp.emojiID,
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Offset != b.Offset {
			return a.Offset < b.Offset
		}
		if a.Length != b.Length {
			return a.Length > b.Length
		}
		return a.Type < b.Type
	})
	return out
}
