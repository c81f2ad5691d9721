package broadcast

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A /broadcast text is the default text, then a section per language: a
// line "[ru]" (any code the catalog has, normalized) and that language's
// text; a code the catalog lacks, a section given twice or left empty, no
// default, or a language's text in another number of parts than the
// default's are refused with a reason.
func TestBroadcastTextsPerLanguageParseOrAreRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("я", 4097)
	for _, tc := range []struct {
		name, in, def string
		texts         map[string]string
		err           string
	}{
		{name: "one text", in: "Big news\n[not a section] here", def: "Big news\n[not a section] here"},
		{name: "sections", in: "Big news\n\n[ru]\nБольшие новости\n[es-419]\n¡Noticias!\n[pt]\nNovidades\n [fa] \nخبر",
			def: "Big news", texts: map[string]string{"ru": "Большие новости", "es": "¡Noticias!", "pt-BR": "Novidades", "fa": "خبر"}},
		{name: "unknown code", in: "Hi\n[de]\nHallo", err: "unknown language [de]"},
		{name: "twice", in: "Hi\n[ru]\nПривет\n[ru-RU]\nЗдравствуйте", err: "the [ru] section is given twice"},
		{name: "empty section", in: "Hi\n[ru]\n\n[es]\nHola", err: "the [ru] section has no text"},
		{name: "no default", in: "[ru]\nПривет", err: "no default text"},
		{name: "parts differ", in: "Hi\n[ru]\n" + long, err: "the [ru] text is split in 2 messages, the default in 1"},
	} {
		def, texts, err := parseTexts(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.def, def, tc.name)
		require.Equal(t, tc.texts, texts, tc.name)
	}
}
