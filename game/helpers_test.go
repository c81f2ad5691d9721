package game

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rngFor returns a reader that makes New draw the secret with the given
// palette indices (each < 252, so no byte is rejected), then a zero ID.
func rngFor(indices ...int) io.Reader {
	b := make([]byte, 0, len(indices)+idBytes)
	for _, i := range indices {
		b = append(b, byte(i))
	}
	return bytes.NewReader(append(b, make([]byte, idBytes)...))
}

// newGame starts a default game whose secret is the given 4 default-palette
// emojis (written without spaces).
func newGame(t *testing.T, secret string) State {
	t.Helper()
	cfg := DefaultConfig()
	code, err := ParseGuess(secret, cfg.Palette, cfg.CodeLength)
	require.NoError(t, err)
	idx := make([]int, len(code))
	for i, c := range code {
		idx[i] = indexOf(cfg.Palette, c)
	}
	st, err := New(cfg, rngFor(idx...))
	require.NoError(t, err)
	require.Equal(t, code, st.Secret)
	return st
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func split(s string) []string { return strings.Fields(s) }

// play plays each guess, requiring it to be accepted, and returns the final
// state and last result.
func play(t *testing.T, st State, guesses ...string) (State, Result) {
	t.Helper()
	var res Result
	for _, g := range guesses {
		var err error
		st, res, err = st.Guess(g)
		require.NoError(t, err, "guess %q", g)
	}
	return st, res
}
