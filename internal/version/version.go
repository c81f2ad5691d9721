// Package version names the build of the running codemojex binary, for
// `codemojex --version` and the start-up log line.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// stamped is the version given at link time:
//
//	go build -ldflags "-X github.com/codemojex/codemojex/internal/version.stamped=v1.2.3" ./cmd/bot
//
// (the Dockerfile passes its VERSION build argument so). It is never
// assigned at run time.
var stamped string

// LinkFlag is the go build -ldflags value that stamps v as the version
// ("-X github.com/codemojex/codemojex/internal/version.stamped=v"), as
// make build and the Dockerfile pass it.
func LinkFlag(v string) string {
	return "-X github.com/codemojex/codemojex/internal/version.stamped=" + v
}

// String is the binary's version: the one stamped at link time when there
// is one; else the main module's version from the build information (a
// pseudo-version with the commit, e.g. v0.0.0-20261205120000-1a1ec40aa2b3,
// or v0.0.0-...+dirty, when go build ran in a git checkout); else the
// commit (vcs.revision, its first 12 hex digits, "-dirty" when modified);
// else "devel" (a plain go build under GOFLAGS=-buildvcs=false, or in a
// git worktree, where go build finds no VCS information: make build, the
// Dockerfile and the bot the demo and the playground build stamp it at
// link time instead, LinkFlag).
func String() string {
	if stamped != "" {
		return stamped
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo is String's reading of bi.
func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	rev = rev[:min(len(rev), 12)]
	if modified == "true" {
		rev += "-dirty"
	}
	return rev
}

// Line is what `codemojex --version` prints: "codemojex <String()>
// (<Go version>, <GOOS>/<GOARCH>)".
func Line() string {
	return "codemojex " + String() + " (" + strings.TrimSpace(runtime.Version()) + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}
