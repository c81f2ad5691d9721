package deploytest_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
)

const module = "github.com/codemojex/codemojex/"

// importedBy reads the module's import graph with `go list` (production
// imports only: a package's tests are not in .Imports) and returns, per
// package path relative to the module, the module's packages importing it.
func importedBy(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	by := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				by[dep] = append(by[dep], pkg)
			}
		}
	}
	require.NoError(t, sc.Err())
	return by
}

// importTable reads docs/architecture.md's "imported by" table: package ->
// the packages the row lists.
func importTable(t *testing.T, root string) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "| imported by ")
	require.True(t, ok, "docs/architecture.md has the \"imported by\" table")
	row := regexp.MustCompile("^\\| `([^`]+)`\\s*\\|(.*)\\|$")
	name := regexp.MustCompile("`([^`]+)`")
	table := map[string][]string{}
	for _, line := range strings.Split(rest, "\n")[2:] {
		m := row.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			break
		}
		for _, n := range name.FindAllStringSubmatch(m[2], -1) {
			table[m[1]] = append(table[m[1]], n[1])
		}
	}
	require.NotEmpty(t, table)
	return table
}

// TestArchitectureImportTableIsTheImportGraph holds docs/architecture.md's
// "imported by" table to `go list`: each row names exactly the packages that
// import it (test-only importers included), and every imported package has a
// row (the test-only packages aside, which the page lists apart).
func TestArchitectureImportTableIsTheImportGraph(t *testing.T) {
	root := testkit.ModuleRoot(t)
	by, table := importedBy(t, root), importTable(t, root)
	testOnly := func(p string) bool {
		return slices.Contains([]string{"internal/valkeytest", "internal/testkit", "internal/failuretest", "internal/deploytest"}, p)
	}
	for pkg, importers := range by {
		if testOnly(pkg) {
			continue
		}
		prod := slices.Clone(importers)
		listed, ok := table[pkg]
		if !assert.Truef(t, ok, "docs/architecture.md: no row for %s (imported by %v)", pkg, prod) {
			continue
		}
		slices.Sort(prod)
		listed = slices.Clone(listed)
		slices.Sort(listed)
		assert.Equalf(t, prod, listed, "docs/architecture.md: the row of %s", pkg)
	}
	for pkg := range table {
		assert.Containsf(t, by, pkg, "docs/architecture.md lists %s, which no package imports", pkg)
	}
}

// TestPublicPackagesNeverImportInternal holds the import rule: a package
// outside internal/ and cmd/ imports no internal/ package.
func TestPublicPackagesNeverImportInternal(t *testing.T) {
	root := testkit.ModuleRoot(t)
	for dep, importers := range importedBy(t, root) {
		if !strings.HasPrefix(dep, "internal/") {
			continue
		}
		for _, i := range importers {
			require.Truef(t, strings.HasPrefix(i, "internal/") || strings.HasPrefix(i, "cmd/"),
				"public package %s imports %s", i, dep)
		}
	}
}

// TestReadmeLayoutNamesEveryPackage holds the README's Layout section to the
// tree: every top-level directory holding Go packages is a line of it, and
// every package under internal/ is named in it.
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	root := testkit.ModuleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	_, layout, ok := strings.Cut(string(readme), "## Layout")
	require.True(t, ok, "README.md has a Layout section")
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z][a-z0-9_/]*`).FindAllString(layout, -1) {
		words[strings.TrimSuffix(w, "/")] = true
	}
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(p, module)
		top, sub, _ := strings.Cut(rel, "/")
		switch top {
		case "internal":
			name, _, _ := strings.Cut(sub, "/")
			assert.Truef(t, words[name], "README Layout does not name internal/%s", name)
		case "cmd":
			assert.Truef(t, words[rel], "README Layout has no line for %s/", rel)
		default:
			assert.Truef(t, words[top], "README Layout has no line for %s/", top)
		}
	}
}
