package deploytest_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/testkit"
)

// loadCompose loads the repository's docker-compose.yml with every profile
// (the webhook proxy included) and an empty environment, as
// `docker compose --profile '*' config` would on a host without .env.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	return loadComposeFile(t, filepath.Join(testkit.ModuleRoot(t), "docker-compose.yml"))
}

func loadComposeFile(t *testing.T, file string) *types.Project {
	t.Helper()
	details, err := loader.LoadConfigFiles(context.Background(), []string{file}, filepath.Dir(file))
	require.NoError(t, err)
	details.Environment = map[string]string{}
	p, err := loader.LoadWithContext(context.Background(), *details, func(o *loader.Options) {
		o.SetProjectName("codemojex", true)
		o.SkipResolveEnvironment = true
		o.Profiles = []string{"*"}
	}, loader.WithDiscardEnvFiles)
	require.NoError(t, err)
	return p
}

func TestComposeFile(t *testing.T) {
	p := loadCompose(t)

	valkey, err := p.GetService("valkey")
	require.NoError(t, err)
	require.Regexp(t, `^valkey/valkey:8\.`, valkey.Image, "Valkey 8")
	require.Contains(t, strings.Join(valkey.Command, " "), "--appendonly yes", "append-only file on")
	require.Contains(t, strings.Join(valkey.Command, " "), "--appendfsync always", "recorded updates survive a host crash")
	require.NotNil(t, valkey.HealthCheck, "valkey has a healthcheck")
	require.NotEmpty(t, valkey.HealthCheck.Test)
	require.Equal(t, "unless-stopped", valkey.Restart)
	var named bool
	for _, v := range valkey.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Target == "/data" {
			_, ok := p.Volumes[v.Source]
			named = ok
		}
	}
	require.True(t, named, "valkey keeps /data on a named volume")

	bot, err := p.GetService("bot")
	require.NoError(t, err)
	require.NotNil(t, bot.Build, "bot is built from the project")
	require.Equal(t, "Dockerfile", filepath.Base(bot.Build.Dockerfile))
	require.Equal(t, "unless-stopped", bot.Restart)
	dep, ok := bot.DependsOn["valkey"]
	require.True(t, ok, "bot depends on valkey")
	require.Equal(t, types.ServiceConditionHealthy, dep.Condition)
	require.Len(t, bot.EnvFiles, 1)
	require.Equal(t, ".env", filepath.Base(bot.EnvFiles[0].Path))
	require.NotNil(t, bot.Environment["VALKEY_URL"])
	require.Equal(t, "redis://valkey:6379/0", *bot.Environment["VALKEY_URL"])
	// /healthz and /metrics stay private: the bot's HTTP port is published
	// on the loopback interface only (a TLS proxy reaches the webhook path).
	require.NotEmpty(t, bot.Ports)
	for _, port := range bot.Ports {
		require.Equal(t, "127.0.0.1", port.HostIP, "port %d published on every interface", port.Target)
	}
}

func TestDockerfileIsMultiStageAndStatic(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "Dockerfile"))
	require.NoError(t, err)
	src := string(b)
	froms := regexp.MustCompile(`(?m)^FROM\s`).FindAllString(src, -1)
	require.GreaterOrEqual(t, len(froms), 2, "multi-stage build")
	require.Contains(t, src, "CGO_ENABLED=0", "static binary")
	require.Contains(t, src, "./cmd/bot")
	require.Regexp(t, `(?m)^USER\s+\S+`, src, "does not run as root")
}

// TestEnvExampleDocumentsEveryVariable checks .env.example names every
// variable the program reads (internal/config).
func TestEnvExampleDocumentsEveryVariable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), ".env.example"))
	require.NoError(t, err)
	vars := configVars(t, testkit.ModuleRoot(t))
	require.NotEmpty(t, vars)
	for _, v := range vars {
		require.Regexp(t, `(?m)^`+v[1]+`=`, string(b), "%s is documented in .env.example", v[1])
	}
}

// TestReadmeStaysShortAndLinksEveryDocsPage holds the README to what
// issue 19 made of it: at most 250 lines, a configuration table row for
// every variable of internal/config, a link to every page of docs/, and
// no relative link (README or docs/) to a file that does not exist.
func TestReadmeStaysShortAndLinksEveryDocsPage(t *testing.T) {
	root := testkit.ModuleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	require.LessOrEqual(t, strings.Count(string(readme), "\n"), 250, "README.md at most 250 lines: details go to a docs/ page")
	vars := configVars(t, root)
	require.NotEmpty(t, vars)
	for _, v := range vars {
		require.True(t, strings.Contains(string(readme), "| `"+v[1]+"` |"), "%s has a row in the README's configuration table", v[1])
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, p := range pages {
		require.True(t, strings.Contains(string(readme), "](docs/"+filepath.Base(p)+")"), "README links docs/%s", filepath.Base(p))
	}
	link := regexp.MustCompile(`\]\(([^)#:\s]+)(#[^)]*)?\)`)
	for _, f := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			_, err := os.Stat(filepath.Join(filepath.Dir(f), m[1]))
			require.NoError(t, err, "%s links %s, which does not exist", filepath.Base(f), m[1])
		}
	}
}

// configVars returns the env tags (match, variable) of internal/config's
// sources: each component's section declares its own variables.
func configVars(t *testing.T, root string) [][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "internal", "config", "*.go"))
	require.NoError(t, err)
	var vars [][]string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		vars = append(vars, regexp.MustCompile(`env:"([A-Z_]+)"`).FindAllStringSubmatch(string(src), -1)...)
	}
	return vars
}
