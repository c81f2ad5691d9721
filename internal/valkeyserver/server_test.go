package valkeyserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// TestNoBinaryErrorNamesWhatIsMissing: without a server binary on PATH
// (nor in VALKEY_BIN_DIR),
// starting a server fails with ErrNoServer, whose text names the missing
// binary and says VALKEY_URL does not replace it, whether VALKEY_URL is
// set or not.
func TestNoBinaryErrorNamesWhatIsMissing(t *testing.T) {
	for _, url := range []string{"", "redis://127.0.0.1:6379/0"} {
		t.Run("VALKEY_URL="+url, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv(valkeyserver.BinDirEnv, t.TempDir())
			t.Setenv("VALKEY_URL", url)
			_, err := valkeyserver.Start("standalone", valkeyserver.Options{})
			require.ErrorIs(t, err, valkeyserver.ErrNoServer)
			require.Contains(t, err.Error(), "no valkey-server or redis-server in $VALKEY_BIN_DIR, on PATH")
			require.Contains(t, err.Error(), "point VALKEY_BIN_DIR at a directory holding valkey-server")
			require.Contains(t, err.Error(), "VALKEY_URL does not replace it")
			require.NotContains(t, err.Error(), "VALKEY_URL is unset")
		})
	}
}

// fakeServer writes an executable script named name into dir that prints
// version as `--version` does.
func fakeServer(t *testing.T, dir, name, version string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho '"+version+"'\n"), mode))
	return p
}

// TestBinaryPrefersValkeyOverRedis: Start runs valkey-server from
// VALKEY_BIN_DIR (the shared build beside the checkout) when it is there,
// else valkey-server on PATH, and redis-server only when neither is; a
// non-executable file is not taken.
func TestBinaryPrefersValkeyOverRedis(t *testing.T) {
	const valkeyV = "Valkey server v=8.0.1 sha=00000000:1 malloc=jemalloc-5.3.0 bits=64 build=9e890905d6264edd"
	const redisV = "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=c4a5a5e8d3a2f2e1"
	for _, tc := range []struct {
		name                          string
		binDir, pathValkey, pathRedis bool
		binDirMode                    os.FileMode
		want                          string // "bindir", "path-valkey", "path-redis", "" (ErrNoServer)
		wantVersion                   string
	}{
		{name: "shared dir beats PATH", binDir: true, pathValkey: true, pathRedis: true, binDirMode: 0o755, want: "bindir", wantVersion: "valkey-server 8.0.1"},
		{name: "valkey on PATH beats redis on PATH", pathValkey: true, pathRedis: true, want: "path-valkey", wantVersion: "valkey-server 8.0.1"},
		{name: "redis only", pathRedis: true, want: "path-redis", wantVersion: "redis-server 7.0.15"},
		{name: "non-executable in shared dir is skipped", binDir: true, pathRedis: true, binDirMode: 0o644, want: "path-redis", wantVersion: "redis-server 7.0.15"},
		{name: "none", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			binDir, valkeyDir, redisDir := t.TempDir(), t.TempDir(), t.TempDir()
			paths := map[string]string{}
			if tc.binDir {
				paths["bindir"] = fakeServer(t, binDir, "valkey-server", valkeyV, tc.binDirMode)
			}
			if tc.pathValkey {
				paths["path-valkey"] = fakeServer(t, valkeyDir, "valkey-server", valkeyV, 0o755)
			}
			if tc.pathRedis {
				paths["path-redis"] = fakeServer(t, redisDir, "redis-server", redisV, 0o755)
			}
			// redis-server's directory first on PATH: the order of names
			// decides, not the order of directories.
			t.Setenv("PATH", strings.Join([]string{redisDir, valkeyDir}, string(os.PathListSeparator)))
			t.Setenv(valkeyserver.BinDirEnv, binDir)
			got, err := valkeyserver.Binary()
			if tc.want == "" {
				require.ErrorIs(t, err, valkeyserver.ErrNoServer)
				return
			}
			require.NoError(t, err)
			require.Equal(t, paths[tc.want], got)
			desc, err := valkeyserver.Describe()
			require.NoError(t, err)
			require.Equal(t, tc.wantVersion+" ("+got+")", desc)
		})
	}
}

// TestVersionRejectsOutputWithoutVersion: a binary whose --version prints
// no v=<version> is an error naming the binary, not an empty version.
func TestVersionRejectsOutputWithoutVersion(t *testing.T) {
	bin := fakeServer(t, t.TempDir(), "valkey-server", "hello", 0o755)
	_, err := valkeyserver.Version(bin)
	require.ErrorContains(t, err, bin)
	require.ErrorContains(t, err, "no version")
}

// TestSharedBinDirIsBesideTheRepositoryTop: from any directory inside a
// checkout (.git a directory, or a file as in a git worktree) the shared
// build's folder is ../shared/valkey/bin of the checkout's top.
func TestSharedBinDirIsBesideTheRepositoryTop(t *testing.T) {
	for _, gitIsDir := range []bool{true, false} {
		t.Run(map[bool]string{true: "clone", false: "worktree"}[gitIsDir], func(t *testing.T) {
			parent := t.TempDir()
			top := filepath.Join(parent, "checkout")
			deep := filepath.Join(top, "internal", "pkg")
			require.NoError(t, os.MkdirAll(deep, 0o755))
			if gitIsDir {
				require.NoError(t, os.Mkdir(filepath.Join(top, ".git"), 0o755))
			} else {
				require.NoError(t, os.WriteFile(filepath.Join(top, ".git"), []byte("gitdir: /elsewhere\n"), 0o644))
			}
			t.Chdir(deep)
			require.Equal(t, filepath.Join(parent, "shared", "valkey", "bin"), valkeyserver.SharedBinDir())
		})
	}
}

// TestClusterNodeFlagsTellFailFromSuspectedFail: in CLUSTER NODES flags a
// node is failed only on "fail" (agreed), not on "fail?" (one node's
// suspicion, which Owner must not treat as gone).
func TestClusterNodeFlagsTellFailFromSuspectedFail(t *testing.T) {
	for _, tc := range []struct {
		flags, flag string
		want        bool
	}{
		{"myself,master", "master", true},
		{"master,fail?", "fail", false},
		{"master,fail", "fail", true},
		{"slave", "master", false},
		{"myself,slave", "slave", true},
	} {
		require.Equal(t, tc.want, valkeyserver.HasFlag(tc.flags, tc.flag), "%q has %q", tc.flags, tc.flag)
	}
}
