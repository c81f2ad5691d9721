package tgemu_test

import (
	"errors"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
)

func TestParseMarkup(t *testing.T) {
	tests := []struct {
		mode, text string
		plain      string // expected text without markup, when valid
		err        string // expected MarkupError reason, "" when valid
	}{
		// plain text: anything goes
		{mode: "", text: "<b>_*[", plain: "<b>_*["},

		// HTML
		{mode: "HTML", text: "<b>bold</b> <i>it</i> <u>u</u> <s>s</s>", plain: "bold it u s"},
		{mode: "html", text: "<strong>a</strong><em>b</em><ins>c</ins><strike>d</strike><del>e</del>", plain: "abcde"},
		{mode: "HTML", text: `<a href="https://t.me/x?a=1&amp;b=2">link</a>`, plain: "link"},
		{mode: "HTML", text: `<code>x &lt; y</code> <pre><code class="language-go">go</code></pre>`, plain: "x < y go"},
		{mode: "HTML", text: `<tg-spoiler>s</tg-spoiler><span class="tg-spoiler">t</span>`, plain: "st"},
		{mode: "HTML", text: `<blockquote expandable>q</blockquote><blockquote>r</blockquote>`, plain: "qr"},
		{mode: "HTML", text: `<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>`, plain: "👍"},
		{mode: "HTML", text: "a &gt; b &amp;&amp; c &#65;&#x42; &unknown; & d > e", plain: "a > b && c AB &unknown; & d > e"},
		{mode: "HTML", text: "<B>upper</b>", plain: "upper"},
		{mode: "HTML", text: "<b>x</>", plain: "x"},
		{mode: "HTML", text: "<b>bold", err: "Can't find end tag corresponding to start tag b"},
		{mode: "HTML", text: "<b><i>x</b></i>", err: `Unmatched end tag at byte offset 7, expected "</i>", found "</b>"`},
		{mode: "HTML", text: "x</b>", err: "Unexpected end tag at byte offset 1"},
		{mode: "HTML", text: "<div>x</div>", err: `Unsupported start tag "div" at byte offset 0`},
		{mode: "HTML", text: "1 < 2", err: `Unsupported start tag "" at byte offset 2`},
		{mode: "HTML", text: "<br/>", err: `Unsupported start tag "br/" at byte offset 0`},
		{mode: "HTML", text: "<b", err: "Unclosed start tag at byte offset 0"},
		{mode: "HTML", text: `<a href="x">y</a`, err: "Unclosed end tag at byte offset 13"},
		{mode: "HTML", text: `<span>x</span>`, err: `Tag "span" must have class "tg-spoiler"`},
		{mode: "HTML", text: `<a href>x</a>`, err: `Expected equal sign in declaration of an attribute of the tag "a" at byte offset 0`},

		// MarkdownV2
		{mode: "MarkdownV2", text: `*bold* _it_ __u__ ~s~ ||sp|| ` + "`c`", plain: "bold it u s sp c"},
		{mode: "MarkdownV2", text: `*bold _it_ __u__*`, plain: "bold it u"},
		{mode: "MarkdownV2", text: `[link](https://t.me/x\)y) and \. \! \- \#`, plain: "link and . ! - #"},
		// a pre's first newline is not part of it (TDLib's parse_markdown_v2)
		{mode: "MarkdownV2", text: "```go\nfmt.Println(1+1)\n```", plain: "fmt.Println(1+1)\n"},
		{mode: "MarkdownV2", text: "`a.b-c!`", plain: "a.b-c!"},
		{mode: "MarkdownV2", text: "> quoted\n>more\nplain", plain: " quoted\nmore\nplain"},
		{mode: "MarkdownV2", text: "**>expandable\n>quote||", plain: "expandable\nquote"},
		{mode: "MarkdownV2", text: `![👍](tg://emoji?id=5368324170671202286)`, plain: "👍"},
		{mode: "MarkdownV2", text: "Score: 1.5", err: `Character '.' is reserved and must be escaped with the preceding '\'`},
		{mode: "MarkdownV2", text: "a-b", err: `Character '-' is reserved and must be escaped with the preceding '\'`},
		{mode: "MarkdownV2", text: "(x)", err: `Character '(' is reserved and must be escaped with the preceding '\'`},
		{mode: "MarkdownV2", text: "hi!", err: `Character '!' is reserved and must be escaped with the preceding '\'`},
		{mode: "MarkdownV2", text: "a|b", err: `Character '|' is reserved and must be escaped with the preceding '\'`},
		{mode: "MarkdownV2", text: "x > y", err: `Character '>' is reserved and must be escaped with the preceding '\'`},
		{mode: "MarkdownV2", text: "*bold", err: "Can't find end of Bold entity at byte offset 0"},
		{mode: "MarkdownV2", text: "ok _it", err: "Can't find end of Italic entity at byte offset 3"},
		{mode: "MarkdownV2", text: "`code", err: "Can't find end of Code entity at byte offset 0"},
		{mode: "MarkdownV2", text: "```pre", err: "Can't find end of Pre entity at byte offset 0"},
		{mode: "MarkdownV2", text: "[x](http://a", err: "Can't find end of a URL at byte offset 4"},
		{mode: "MarkdownV2", text: "__u", err: "Can't find end of Underline entity at byte offset 0"},

		// legacy Markdown
		{mode: "Markdown", text: "*b* _i_ `c` [l](http://x) 1.5 - (ok)!", plain: "b i c l 1.5 - (ok)!"},
		{mode: "Markdown", text: "```\npre```", plain: "pre"}, // likewise (parse_markdown)
		{mode: "Markdown", text: `snake\_case`, plain: "snake_case"},
		{mode: "Markdown", text: "snake_case", err: "Can't find end of the entity starting at byte offset 5"},
		{mode: "Markdown", text: "[link", err: "Can't find end of the entity starting at byte offset 0"},
	}
	for _, tc := range tests {
		t.Run(tc.mode+"/"+tc.text, func(t *testing.T) {
			plain, err := tgemu.ParseMarkup(tc.mode, tc.text)
			if tc.err == "" {
				require.NoError(t, err)
				require.Equal(t, tc.plain, plain)
				return
			}
			var me *tgemu.MarkupError
			require.True(t, errors.As(err, &me), "got %v", err)
			require.Equal(t, tc.err, me.Reason)
			require.Equal(t, "can't parse entities: "+tc.err, err.Error())
		})
	}

	_, err := tgemu.ParseMarkup("BBCode", "x")
	require.ErrorIs(t, err, tgemu.ErrUnsupportedParseMode)
}

// ParseFormatted: the text and entities Telegram keeps, after TDLib's
// clean-up and trimming; different markup that parses the same gives the
// same FormattedText.
func TestParseFormatted(t *testing.T) {
	type ent = models.MessageEntity
	tests := []struct {
		name, mode, text string
		want             tgemu.FormattedText
	}{
		{"plain", "", "a b", tgemu.FormattedText{Text: "a b", Entities: []ent{}}},
		{"HTML bold", "HTML", "<b>a</b> b", tgemu.FormattedText{Text: "a b", Entities: []ent{{Type: "bold", Offset: 0, Length: 1}}}},
		{"HTML strong is bold", "HTML", "<strong>a</strong> b", tgemu.FormattedText{Text: "a b", Entities: []ent{{Type: "bold", Offset: 0, Length: 1}}}},
		{"MarkdownV2 bold", "MarkdownV2", "*a* b", tgemu.FormattedText{Text: "a b", Entities: []ent{{Type: "bold", Offset: 0, Length: 1}}}},
		{"Markdown bold", "Markdown", "*a* b", tgemu.FormattedText{Text: "a b", Entities: []ent{{Type: "bold", Offset: 0, Length: 1}}}},
		{"nested, sorted longer first", "HTML", "<i>x<b>y</b></i>", tgemu.FormattedText{Text: "xy",
			Entities: []ent{{Type: "italic", Offset: 0, Length: 2}, {Type: "bold", Offset: 1, Length: 1}}}},
		{"UTF-16 offsets", "HTML", "👍<u>é</u>", tgemu.FormattedText{Text: "👍é", Entities: []ent{{Type: "underline", Offset: 2, Length: 1}}}},
		{"text link", "HTML", `<a href="https://t.me/x?a=1&amp;b=2">l</a>`, tgemu.FormattedText{Text: "l",
			Entities: []ent{{Type: "text_link", Offset: 0, Length: 1, URL: "https://t.me/x?a=1&b=2"}}}},
		{"MarkdownV2 text link", "MarkdownV2", `[l](https://t.me/x\)y)`, tgemu.FormattedText{Text: "l",
			Entities: []ent{{Type: "text_link", Offset: 0, Length: 1, URL: "https://t.me/x)y"}}}},
		{"pre with language", "HTML", `<pre><code class="language-go">go</code></pre>`, tgemu.FormattedText{Text: "go",
			Entities: []ent{{Type: "pre", Offset: 0, Length: 2, Language: "go"}}}},
		{"MarkdownV2 pre with language", "MarkdownV2", "```go\nx\n```", tgemu.FormattedText{Text: "x",
			Entities: []ent{{Type: "pre", Offset: 0, Length: 1, Language: "go"}}}},
		{"spoiler both ways", "HTML", `<tg-spoiler>s</tg-spoiler><span class="tg-spoiler">t</span>`, tgemu.FormattedText{Text: "st",
			Entities: []ent{{Type: "spoiler", Offset: 0, Length: 1}, {Type: "spoiler", Offset: 1, Length: 1}}}},
		{"expandable quote", "HTML", "<blockquote expandable>q</blockquote>", tgemu.FormattedText{Text: "q",
			Entities: []ent{{Type: "expandable_blockquote", Offset: 0, Length: 1}}}},
		{"MarkdownV2 quote", "MarkdownV2", ">q1\n>q2\nplain", tgemu.FormattedText{Text: "q1\nq2\nplain",
			Entities: []ent{{Type: "blockquote", Offset: 0, Length: 5}}}},
		{"custom emoji", "MarkdownV2", `![👍](tg://emoji?id=5368324170671202286)`, tgemu.FormattedText{Text: "👍",
			Entities: []ent{{Type: "custom_emoji", Offset: 0, Length: 2, CustomEmojiID: "5368324170671202286"}}}},
		{"trailing blanks trimmed, entity cut", "HTML", "a<b>b \n</b> \n", tgemu.FormattedText{Text: "ab",
			Entities: []ent{{Type: "bold", Offset: 1, Length: 1}}}},
		{"leading blanks trimmed up to the first entity", "HTML", "\n <b> x</b>", tgemu.FormattedText{Text: " x",
			Entities: []ent{{Type: "bold", Offset: 0, Length: 2}}}},
		{"control characters: tab a space, CR and U+2028 gone", "", "a\tb\r\nc\u2028d", tgemu.FormattedText{Text: "a b\ncd", Entities: []ent{}}},
		{"empty tags dropped", "HTML", "<b></b>a", tgemu.FormattedText{Text: "a", Entities: []ent{}}},
		{"only tags: empty", "HTML", "<b></b><i> </i>", tgemu.FormattedText{}},
		{"MarkdownV2 only markers: empty", "MarkdownV2", "** ~~", tgemu.FormattedText{}},
		{"only blanks: empty", "", " \n ", tgemu.FormattedText{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tgemu.ParseFormatted(tc.mode, tc.text)
			require.NoError(t, err)
			if got.Entities == nil && tc.want.Text != "" {
				got.Entities = []ent{}
			}
			require.Equal(t, tc.want, got)
		})
	}
	_, err := tgemu.ParseFormatted("MarkdownV2", "1.5")
	var me *tgemu.MarkupError
	require.ErrorAs(t, err, &me)
}
