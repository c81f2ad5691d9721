package tgemu_test

import (
	"errors"
	"testing"

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
		{mode: "MarkdownV2", text: "```go\nfmt.Println(1+1)\n```", plain: "\nfmt.Println(1+1)\n"},
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
		{mode: "Markdown", text: "```\npre```", plain: "\npre"},
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
