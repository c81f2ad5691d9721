package notifier_test

import (
	"fmt"

	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Split cuts a text into parts of at most maxUnits UTF-16 code units
// (Telegram's unit), preferring line breaks, then spaces, and never cutting
// a grapheme cluster (an emoji counts 2 units).
func ExampleSplit() {
	for _, p := range notifier.Split("🍎🍌🍒🍇 guess\nthe code", 12) {
		fmt.Printf("%q (%d units)\n", p, tgtext.UTF16Len(p))
	}
	// Output:
	// "🍎🍌🍒🍇 " (9 units)
	// "guess\n" (6 units)
	// "the code" (8 units)
}
