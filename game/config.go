package game

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/rivo/uniseg"
)

// Defaults and limits of a Config.
const (
	DefaultCodeLength  = 4
	DefaultMaxAttempts = 10

	MinPaletteSize = 2
	MaxPaletteSize = 10
	MinCodeLength  = 1
	MaxCodeLength  = 8
	MinAttempts    = 1
	MaxAttempts    = 50
)

// defaultPalette is the palette of DefaultConfig. It is copied, never handed
// out.
var defaultPalette = [...]string{"🍎", "🍌", "🍇", "🍒", "🍋", "🥝"}

// ErrInvalidConfig is wrapped by every error of Config.Validate.
var ErrInvalidConfig = errors.New("invalid game config")

// Config sets up a game. The zero value of a field means its default (see
// WithDefaults).
type Config struct {
	// Palette is the list of symbols the code is drawn from: 2..10 distinct
	// emojis, each a single grapheme cluster. Symbols that differ only by
	// variation selectors (U+FE0E/U+FE0F) count as the same symbol.
	Palette []string `json:"palette"`
	// CodeLength is the number of symbols in the secret and in a guess
	// (1..8, default 4).
	CodeLength int `json:"code_length"`
	// MaxAttempts is the number of guesses allowed (1..50, default 10).
	MaxAttempts int `json:"max_attempts"`
}

// DefaultConfig returns the standard game: palette 🍎 🍌 🍇 🍒 🍋 🥝, a code of
// 4, 10 attempts.
func DefaultConfig() Config {
	return Config{
		Palette:     defaultPalette[:],
		CodeLength:  DefaultCodeLength,
		MaxAttempts: DefaultMaxAttempts,
	}.clone()
}

// WithDefaults returns c with each zero field replaced by its default.
func (c Config) WithDefaults() Config {
	c = c.clone()
	if len(c.Palette) == 0 {
		c.Palette = DefaultConfig().Palette
	}
	if c.CodeLength == 0 {
		c.CodeLength = DefaultCodeLength
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	return c
}

func (c Config) clone() Config {
	c.Palette = append([]string(nil), c.Palette...)
	return c
}

// Validate reports whether c (as given, defaults not applied) describes a
// playable game. Errors wrap ErrInvalidConfig and say which rule is broken.
func (c Config) Validate() error {
	if n := len(c.Palette); n < MinPaletteSize || n > MaxPaletteSize {
		return fmt.Errorf("%w: palette has %d symbols, want %d..%d", ErrInvalidConfig, n, MinPaletteSize, MaxPaletteSize)
	}
	seen := make(map[string]string, len(c.Palette))
	for i, sym := range c.Palette {
		if uniseg.GraphemeClusterCount(sym) != 1 {
			return fmt.Errorf("%w: palette symbol %d %q is not a single grapheme cluster", ErrInvalidConfig, i+1, sym)
		}
		if strings.IndexFunc(sym, unicode.IsSpace) >= 0 || !isEmojiLike(sym) {
			return fmt.Errorf("%w: palette symbol %d %q is not an emoji", ErrInvalidConfig, i+1, sym)
		}
		k := normalize(sym)
		if prev, dup := seen[k]; dup {
			return fmt.Errorf("%w: palette symbols %q and %q are the same emoji", ErrInvalidConfig, prev, sym)
		}
		seen[k] = sym
	}
	if c.CodeLength < MinCodeLength || c.CodeLength > MaxCodeLength {
		return fmt.Errorf("%w: code length %d, want %d..%d", ErrInvalidConfig, c.CodeLength, MinCodeLength, MaxCodeLength)
	}
	if c.MaxAttempts < MinAttempts || c.MaxAttempts > MaxAttempts {
		return fmt.Errorf("%w: max attempts %d, want %d..%d", ErrInvalidConfig, c.MaxAttempts, MinAttempts, MaxAttempts)
	}
	return nil
}
