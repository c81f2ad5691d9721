package demo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The -bot flag of cmd/demo and cmd/play is resolved against the working
// directory where it is read: the bot runs in a temporary directory, where
// `make demo DEMO_FLAGS="-bot bin/codemojex"` failed with "fork/exec
// bin/codemojex: no such file or directory". A path that names no
// executable file is refused at once, the error naming the flag and the
// path as given.
func TestTheBotFlagIsResolvedAgainstTheWorkingDirectoryAndMustBeExecutable(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin", "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "codemojex"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "notes.txt"), []byte("x"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(dir, "bin", "notes.txt"), 0o644)) // whatever the umask
	for _, tc := range []struct {
		name, flag, want, err string
	}{
		{"not set: build ./cmd/bot", "", "", ""},
		{"relative", "bin/codemojex", filepath.Join(dir, "bin", "codemojex"), ""},
		{"relative with dots", "./bin/sub/../codemojex", filepath.Join(dir, "bin", "codemojex"), ""},
		{"absolute", filepath.Join(dir, "bin", "codemojex"), filepath.Join(dir, "bin", "codemojex"), ""},
		{"missing", "bin/codemojx", "", "-bot bin/codemojx: no such file (" + filepath.Join(dir, "bin", "codemojx") + "); run make build, or leave out -bot to build ./cmd/bot"},
		{"a directory", "bin", "", "-bot bin: a directory, not the bot's binary (" + filepath.Join(dir, "bin") + ")"},
		{"not executable", "bin/notes.txt", "", "-bot bin/notes.txt: not an executable file (" + filepath.Join(dir, "bin", "notes.txt") + ", mode -rw-r--r--)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BotFlag(tc.flag)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
