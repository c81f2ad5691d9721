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

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	root := testkit.ModuleRoot(t)
	details, err := loader.LoadConfigFiles(context.Background(), []string{filepath.Join(root, "docker-compose.yml")}, root)
	require.NoError(t, err)
	details.Environment = map[string]string{}
	p, err := loader.LoadWithContext(context.Background(), *details, func(o *loader.Options) {
		o.SetProjectName("codemojex", true)
		o.SkipResolveEnvironment = true
	}, loader.WithDiscardEnvFiles)
	require.NoError(t, err)
	return p
}

func TestComposeFile(t *testing.T) {
	p := loadCompose(t)

	valkey, err := p.GetService("valkey")
	require.NoError(t, err)
	require.Equal(t, "valkey/valkey:8", valkey.Image)
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
	cfg, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "internal", "config", "config.go"))
	require.NoError(t, err)
	vars := regexp.MustCompile(`env:"([A-Z_]+)"`).FindAllStringSubmatch(string(cfg), -1)
	require.NotEmpty(t, vars)
	for _, v := range vars {
		require.Regexp(t, `(?m)^`+v[1]+`=`, string(b), "%s is documented in .env.example", v[1])
	}
}
