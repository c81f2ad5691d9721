package broadcast

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Languages is what a broadcast in several languages reads of the chats'
// languages (chats.Languages): each chat's, for the copies (Of), and the
// audience's counts by language, for the preview (Census).
type Languages interface {
	// Of returns the language of each chat, in order ("" the default).
	Of(ctx context.Context, chats []int64) ([]string, error)
	// Census counts the chats of audience buckets buckets by language
	// ("" the default) and returns how many it read.
	Census(ctx context.Context, buckets []int64) (map[string]int, int, error)
}

// sectionLine is a line that starts a language's section: "[ru]",
// "[pt-BR]", "[es-419]" alone on its line (spaces around allowed).
var sectionLine = regexp.MustCompile(`^\s*\[([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})?)\]\s*$`)

// parseTexts splits a broadcast's text into the default text (what comes
// before the first section) and the texts of the languages whose sections
// follow, each section a line "[ru]" (a language the catalog has, as
// i18n.Parse reads it: "[pt]" and "[pt-BR]" are pt-BR) and that
// language's text on the lines after it. A text without sections is the
// default alone (texts nil). Errors: a language the catalog lacks, one
// given twice, a section or the default left empty, or a language's text
// split into another number of parts than the default's (every chat gets
// as many messages); the admin is told, nothing is previewed.
func parseTexts(text string) (string, map[string]string, error) {
	lines := strings.Split(text, "\n")
	var def []string
	texts := map[string]string{}
	var order []string
	var cur []string
	lang := ""
	flush := func() error {
		body := strings.TrimSpace(strings.Join(cur, "\n"))
		if lang == "" {
			def = cur
			return nil
		}
		if body == "" {
			return fmt.Errorf("the [%s] section has no text", lang)
		}
		texts[lang] = body
		return nil
	}
	for _, ln := range lines {
		m := sectionLine.FindStringSubmatch(ln)
		if m == nil {
			cur = append(cur, ln)
			continue
		}
		if err := flush(); err != nil {
			return "", nil, err
		}
		l, ok := i18n.Parse(m[1])
		if !ok {
			return "", nil, fmt.Errorf("unknown language [%s]: the bot speaks %s", m[1], strings.Join(i18n.Languages(), ", "))
		}
		if slices.Contains(order, l) {
			return "", nil, fmt.Errorf("the [%s] section is given twice", l)
		}
		order = append(order, l)
		lang, cur = l, nil
	}
	if err := flush(); err != nil {
		return "", nil, err
	}
	d := strings.TrimSpace(strings.Join(def, "\n"))
	if len(texts) == 0 {
		return d, nil, nil
	}
	if d == "" {
		return "", nil, fmt.Errorf("no default text: it comes first, before the [%s] section (the chats of the other languages get it)", order[0])
	}
	parts := len(notifier.Split(d, tgtext.MaxTextUnits))
	for _, l := range order {
		if n := len(notifier.Split(texts[l], tgtext.MaxTextUnits)); n != parts {
			return "", nil, fmt.Errorf("the [%s] text is split in %d messages, the default in %d: make them the same number (every chat gets as many)", l, n, parts)
		}
	}
	return d, texts, nil
}

// censusExact is the audience size up to which the preview counts every
// bucket's chats by language (exact); above, a sample of censusSample
// buckets, scaled (an estimate, said so).
const (
	censusExact  = 20_000
	censusSample = 64
)

// langCounts counts the audience's chats by language for a preview of
// texts (the languages with a text of their own, the rest counted as the
// default's, key ""), from Languages.Census: every bucket while the
// audience holds at most censusExact chats, else censusSample buckets
// spread over them, scaled to size (exact false). Errors: the store's.
func (s *Service) langCounts(ctx context.Context, texts map[string]string, size int) (map[string]int, bool, error) {
	step := int64(1)
	if size > censusExact {
		step = chats.Buckets / censusSample
	}
	var buckets []int64
	for b := int64(0); b < chats.Buckets; b += step {
		buckets = append(buckets, b)
	}
	raw, n, err := s.cfg.Languages.Census(ctx, buckets)
	if err != nil {
		return nil, false, err
	}
	out := map[string]int{}
	for l, c := range raw {
		if _, ok := texts[l]; !ok {
			l = ""
		}
		out[l] += c
	}
	if step > 1 && n > 0 {
		for l, c := range out {
			out[l] = c * size / n
		}
	}
	return out, step == 1, nil
}

// langLines is the preview's account of the texts per language: each
// language's text, then how many chats get which text (counts; exact or
// "about"), e.g. "🌐 [ru] 120 chats will see:\n\nПривет".
func langLines(texts map[string]string, counts map[string]int, exact bool) string {
	langs := make([]string, 0, len(texts))
	for l := range texts {
		langs = append(langs, l)
	}
	slices.SortFunc(langs, func(a, b string) int { return slices.Index(i18n.Languages(), a) - slices.Index(i18n.Languages(), b) })
	about := ""
	if !exact {
		about = "about "
	}
	var b strings.Builder
	for _, l := range langs {
		fmt.Fprintf(&b, "🌐 [%s] %s%d %s will see:\n\n%s\n\n", l, about, counts[l], chatNoun(counts[l]), texts[l])
	}
	fmt.Fprintf(&b, "🌐 The default text goes to %s%d %s (the other languages).", about, counts[""], chatNoun(counts[""]))
	if !exact {
		b.WriteString(" Estimated from a sample of the chats.")
	}
	return b.String()
}

// chatNoun is "chat" for 1, else "chats".
func chatNoun(n int) string {
	if n == 1 {
		return "chat"
	}
	return "chats"
}
