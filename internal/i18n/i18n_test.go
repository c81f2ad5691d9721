package i18n

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"testing"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/stretchr/testify/require"
)

// placeholder matches a template field, {{.Name}}.
var placeholder = regexp.MustCompile(`{{\s*\.(\w+)\s*}}`)

// forms are a message's texts by CLDR plural form ("" for a plain
// message's only text).
func forms(m *goi18n.Message) map[string]string {
	out := map[string]string{}
	for f, s := range map[string]string{"zero": m.Zero, "one": m.One, "two": m.Two, "few": m.Few, "many": m.Many, "other": m.Other} {
		if s != "" {
			out[f] = s
		}
	}
	return out
}

// fields is the set of placeholders of every form of m.
func fields(m *goi18n.Message) []string {
	set := map[string]bool{}
	for _, s := range forms(m) {
		for _, g := range placeholder.FindAllStringSubmatch(s, -1) {
			set[g[1]] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func byID(f *goi18n.MessageFile) map[string]*goi18n.Message {
	out := map[string]*goi18n.Message{}
	for _, m := range f.Messages {
		out[m.ID] = m
	}
	return out
}

// plurals are English's plural messages: those with a form other than
// "other" (a plain message has only Other).
func plurals(en map[string]*goi18n.Message) []string {
	var ids []string
	for id, m := range en {
		if m.One != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func TestEveryLanguageHasEnglishsMessagesWithItsPlaceholders(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	en := byID(c.files[Default])
	require.Greater(t, len(en), 50, "the English catalog is the reference")
	for _, l := range Languages() {
		t.Run(l, func(t *testing.T) {
			got := byID(c.files[l])
			require.ElementsMatch(t, slices.Collect(maps.Keys(en)), slices.Collect(maps.Keys(got)), "message ids of %s", l)
			for id, m := range en {
				require.Equal(t, fields(m), fields(got[id]), "placeholders of %s in %s", id, l)
				require.Equal(t, m.One != "", len(forms(got[id])) > 1 || got[id].One != "", "%s is plural in English: it must be in %s", id, l)
			}
		})
	}
}

// Every plural message has, in every language, the form its CLDR rules
// pick for any count: go-i18n fails a count whose form is missing.
func TestEveryPluralHasEveryFormItsLanguageNeeds(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	data := map[string]any{"N": 4, "Palette": "🍎", "Max": 10, "First": 100, "Left": 3, "Attempt": 3, "Points": 80, "Got": 3, "Chosen": 2, "Symbol": "🐶"}
	for _, l := range Languages() {
		for _, id := range plurals(byID(c.files[Default])) {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 11, 21, 22, 25, 100, 101, 1_000_000} {
				_, err := c.locs[l].Localize(&goi18n.LocalizeConfig{MessageID: id, PluralCount: n, TemplateData: data})
				require.NoError(t, err, "%s in %s for %d", id, l, n)
			}
		}
	}
}

func TestPluralsFollowEachLanguagesRules(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	for _, tc := range []struct {
		lang string
		n    int
		want string
	}{
		{"en", 1, "1 of 22 attempts left."},
		{"en", 2, "2 of 22 attempts left."},
		{"ru", 1, "Осталась 1 попытка из 22."},
		{"ru", 2, "Осталось 2 попытки из 22."},
		{"ru", 5, "Осталось 5 попыток из 22."},
		{"ru", 21, "Осталась 21 попытка из 22."},
		{"ru", 11, "Осталось 11 попыток из 22."},
		{"es", 1, "Queda 1 intento de 22."},
		{"es", 21, "Quedan 21 intentos de 22."},
		{"pt-BR", 1, "Resta 1 tentativa de 22."},
		{"pt-BR", 0, "Resta 0 tentativa de 22."},
		{"pt-BR", 5, "Restam 5 tentativas de 22."},
		{"fa", 1, "۱ فرصت از ۲۲ فرصت باقی مانده است."},
		{"fa", 21, "۲۱ فرصت از ۲۲ فرصت باقی مانده است."},
	} {
		require.Equal(t, tc.want, c.Plural(tc.lang, "attempts_left", tc.n, map[string]any{"Left": tc.n, "Max": 22}), "%s %d", tc.lang, tc.n)
	}
	require.Equal(t, "🎉 Код разгадан за 21 попытку из 22! +20 очков.", c.For("ru").N("win", 21, map[string]any{"Attempt": 21, "Max": 22, "Points": 20}))
}

// Persian writes numbers in its CLDR numbering system's digits (arabext,
// ۰-۹), the placeholders' and Texts.Num's alike, without grouping; the
// other languages in Latin digits; a text value is left as it is, and the
// caller's data is not changed.
func TestPersianWritesNumbersInPersianDigits(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	data := map[string]any{"Attempt": 1234, "Max": int64(22), "Points": 1_000_000}
	require.Equal(t, "🎉 کد در ۱۲۳۴ فرصت از ۲۲ رمزگشایی شد! +۱۰۰۰۰۰۰ امتیاز.", c.For("fa").N("win", 1234, data))
	require.Equal(t, map[string]any{"Attempt": 1234, "Max": int64(22), "Points": 1_000_000}, data, "the caller's data is unchanged")
	require.Equal(t, "🎉 Code cracked in 1234/22 attempts! +1000000 points.", c.For("en").N("win", 1234, data))
	require.Equal(t, "بازیکن 42a", c.Text("fa", "top_no_name", map[string]any{"ID": "42a"}), "a string is not a number")
	for lang, want := range map[string]string{"fa": "۰۱۲۳۴۵۶۷۸۹", "en": "0123456789", "ru": "0123456789", "es": "0123456789", "pt-BR": "0123456789"} {
		require.Equal(t, want, numAll(c.For(lang)), lang)
	}
	require.Equal(t, "۱۲۳۴", c.For("fa").Num(1234))
}

// numAll is the digits 0 to 9 as t writes them.
func numAll(t Texts) string {
	s := ""
	for i := range 10 {
		s += t.Num(i)
	}
	return s
}

func TestNormalizeMapsTelegramLanguageCodesToTheCatalogs(t *testing.T) {
	for in, want := range map[string]string{
		"": "en", "en": "en", "en-US": "en", "ru": "ru", "ru-RU": "ru", "RU": "ru", "es": "es", "es-419": "es",
		"pt": "pt-BR", "pt-br": "pt-BR", "pt-PT": "pt-BR", "pt_BR": "pt-BR", "fa": "fa", "fa-IR": "fa", "de": "en", "zh-hans": "en", "x": "en",
	} {
		require.Equal(t, want, Normalize(in), in)
	}
	_, ok := Parse("de")
	require.False(t, ok)
	l, ok := Parse(" Pt-Br ")
	require.True(t, ok)
	require.Equal(t, "pt-BR", l)
}

func TestAnUnknownLanguageReadsEnglish(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	require.Equal(t, c.Text("en", "no_game", nil), c.Text("de", "no_game", nil))
	require.Equal(t, "en", c.For("de").Lang)
	require.Equal(t, "Русский", c.Name("ru"))
	require.Equal(t, "فارسی", c.Name("fa"))
	require.Equal(t, "missing_id", c.Text("ru", "missing_id", nil))
}

// Memo renders a key's text once and keeps it (per language: Texts.Memo
// keys it by its language too), and keeps at most MaxMemo texts: past that
// every call renders (nothing grows).
func TestMemoRendersAKeysTextOnceAndKeepsAtMostMaxMemo(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	calls := 0
	render := func(s string) func() string { return func() string { calls++; return s } }
	require.Equal(t, "a", c.For("en").Memo("k", render("a")))
	require.Equal(t, "a", c.For("en").Memo("k", render("changed")), "kept")
	require.Equal(t, "б", c.For("ru").Memo("k", render("б")), "each language its own")
	require.Equal(t, 2, calls)
	for i := range MaxMemo {
		c.Memo("fill"+strconv.Itoa(i), render("x"))
	}
	calls = 0
	require.Equal(t, "y", c.Memo("past the bound", render("y")))
	require.Equal(t, "z", c.Memo("past the bound", render("z")), "not kept past MaxMemo")
	require.Equal(t, 2, calls)
	require.Equal(t, "a", c.For("en").Memo("k", render("changed")), "what was kept stays")
}
