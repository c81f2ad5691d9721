package testkit

import (
	"fmt"
	"os"
	"testing"
)

// SkipsFileEnv names the environment variable that make test sets to a file
// SkipOrFail appends each skip to, one line each ("SKIP <test>: <reason>"),
// so that make test can print them at its end: go test ./... prints nothing
// of a passing package's output without -v, skips included.
const SkipsFileEnv = "CODEMOJEX_TEST_SKIPS"

// InCI reports whether the CI environment variable is set (GitHub Actions,
// GitLab CI, Buildkite and most CI services set CI=true), and not to "false"
// or "0".
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// SkipOrFail is a skip that cannot pass unnoticed (issue 32): in CI (InCI)
// it fails t with reason, since a check CI cannot run is a failed check;
// elsewhere it writes "SKIP <test>: <reason>" to stderr (shown by go test
// in a package's own directory and with -v), appends that line to the file
// named by SkipsFileEnv when it is set, and skips t.
func SkipOrFail(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI is set, so this test may not skip: %s", reason)
	}
	line := fmt.Sprintf("SKIP %s: %s\n", t.Name(), reason)
	fmt.Fprint(os.Stderr, line)
	if path := os.Getenv(SkipsFileEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatalf("%s: %v", SkipsFileEnv, err)
		}
		_, werr := f.WriteString(line)
		if cerr := f.Close(); werr != nil || cerr != nil {
			t.Fatalf("%s %s: %v %v", SkipsFileEnv, path, werr, cerr)
		}
	}
	t.Skip(reason)
}
