package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionFromBuildInfo: without a stamped version, the main module's
// version when go build knew one (a pseudo-version from git), else the
// commit (12 hex digits, -dirty when modified), else "devel".
func TestVersionFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"a module version", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261205120000-1a1ec40aa2b3+dirty"}, Settings: vcs("1a1ec40aa2b3c4d5", "true")},
			"v0.0.0-20261205120000-1a1ec40aa2b3+dirty"},
		{"devel with a clean commit", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("1a1ec40aa2b3c4d5e6f7", "false")}, "1a1ec40aa2b3"},
		{"devel with a modified commit", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("1a1ec40aa2b3c4d5e6f7", "true")}, "1a1ec40aa2b3-dirty"},
		{"a short revision", debug.BuildInfo{Settings: vcs("abc", "false")}, "abc"},
		{"nothing known", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	} {
		require.Equal(t, tc.want, fromBuildInfo(&tc.bi), tc.name)
	}
}
