package luascript_test

import (
	"embed"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/luascript"
)

//go:embed lua/*.lua
var testFS embed.FS

// An embedded script loads; a missing one panics at once, naming the file.
func TestMustLoadsOrPanicsNamingTheFile(t *testing.T) {
	require.NotNil(t, luascript.Must(testFS, "one"))
	require.PanicsWithValue(t, "luascript: missing embedded script lua/nope.lua", func() { luascript.Must(testFS, "nope") })
}
