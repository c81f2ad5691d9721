package deploytest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/joho/godotenv"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/app"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/testkit"
)

// worstCaseStop is the longest graceful stop of a bot process with the
// default options, Valkey up: its services are stopped one at a time in
// the reverse start order (internal/app's Services, internal/lifecycle),
// each bounded: the console's server 2 s, the poller's lease release 2 s,
// the handlers' drain (app.DefaultDrainTimeout), the workers' shutdown
// grace (the same) + 2 s to settle (worker.Config.ShutdownGrace), the
// HTTP server's shutdown 2 s, the flood toasts' answer budget 5 s.
const worstCaseStop = 2*time.Second + 2*time.Second + app.DefaultDrainTimeout + app.DefaultDrainTimeout + 2*time.Second +
	2*time.Second + 5*time.Second

// exactTag is an image pinned to an exact version (valkey/valkey:8.1.1,
// golang:1.26.8-bookworm, prom/prometheus:v3.13.0: a v may lead), with or
// without a digest, or to a digest alone.
var exactTag = regexp.MustCompile(`^[a-z0-9./-]+(:v?\d+\.\d+\.\d+(-[a-z0-9.]+)?(@sha256:[0-9a-f]{64})?|@sha256:[0-9a-f]{64})$`)

// TestComposeBotOutlastsItsDrain: docker compose stop/restart waits
// longer than the bot's worst-case graceful stop before it kills the
// bot (Docker's default, 10 s, cut the drain), and the bot's healthcheck
// gives it the first long poll before counting failures.
func TestComposeBotOutlastsItsDrain(t *testing.T) {
	bot, err := loadCompose(t).GetService("bot")
	require.NoError(t, err)
	require.NotNil(t, bot.StopGracePeriod, "the bot has a stop_grace_period")
	require.Greater(t, time.Duration(*bot.StopGracePeriod), worstCaseStop+5*time.Second,
		"stop_grace_period above the worst-case stop (%v) with a margin", worstCaseStop)
	require.NotNil(t, bot.HealthCheck)
	require.NotNil(t, bot.HealthCheck.StartPeriod)
	require.Greater(t, time.Duration(*bot.HealthCheck.StartPeriod), app.DefaultPollTimeout,
		"/healthz may be 503 until the first long poll returns")
}

// TestComposeServicesAreBoundedCheckedPinnedAndRotated holds every
// service of docker-compose.yml, in every profile (a service added later
// included), to what an operator needs: a memory limit, a healthcheck,
// an image pinned to an exact version or a digest (or built from the
// Dockerfile, held to the same by TestDockerfilePinsItsBaseAndProbesItself),
// and its logs rotated by Docker (json-file with max-size and max-file).
func TestComposeServicesAreBoundedCheckedPinnedAndRotated(t *testing.T) {
	p := loadCompose(t)
	require.GreaterOrEqual(t, len(p.Services), 3, "valkey, bot, proxy at least")
	for name, s := range p.Services {
		limit := s.MemLimit
		if s.Deploy != nil && s.Deploy.Resources.Limits != nil {
			limit = max(limit, s.Deploy.Resources.Limits.MemoryBytes)
		}
		require.Positive(t, int64(limit), "%s has a memory limit", name)
		require.NotNil(t, s.HealthCheck, "%s has a healthcheck", name)
		require.False(t, s.HealthCheck.Disable, name)
		require.NotEmpty(t, s.HealthCheck.Test, "%s's healthcheck has a test", name)
		require.NotEqual(t, "NONE", s.HealthCheck.Test[0], name)
		if s.Build == nil {
			require.Regexp(t, exactTag, s.Image, "%s's image is pinned (scripts/pin-images.sh adds digests)", name)
		}
		require.NotNil(t, s.Logging, "%s has a logging section", name)
		require.Equal(t, "json-file", s.Logging.Driver, name)
		require.NotEmpty(t, s.Logging.Options["max-size"], "%s's logs rotate", name)
		n, err := strconv.Atoi(s.Logging.Options["max-file"])
		require.NoError(t, err, "%s's max-file", name)
		require.GreaterOrEqual(t, n, 2, name)
	}
}

// TestValkeyRefusesWritesBeforeItsContainerIsKilled: Valkey has a
// maxmemory under noeviction, at most half its container's memory limit
// (an AOF rewrite's fork copies the pages written meanwhile), so a full
// Valkey refuses writes (the bot's /healthz says so) instead of the kernel
// killing it.
func TestValkeyRefusesWritesBeforeItsContainerIsKilled(t *testing.T) {
	valkey, err := loadCompose(t).GetService("valkey")
	require.NoError(t, err)
	flags := map[string]string{}
	for i := 0; i+1 < len(valkey.Command); i++ {
		if strings.HasPrefix(valkey.Command[i], "--") {
			flags[valkey.Command[i]] = valkey.Command[i+1]
		}
	}
	require.Equal(t, "noeviction", flags["--maxmemory-policy"])
	m := regexp.MustCompile(`^(\d+)(mb|gb)$`).FindStringSubmatch(strings.ToLower(flags["--maxmemory"]))
	require.NotNil(t, m, "--maxmemory <n>mb or <n>gb, got %q", flags["--maxmemory"])
	n, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	maxmemory := n << 20
	if m[2] == "gb" {
		maxmemory = n << 30
	}
	require.Positive(t, maxmemory)
	require.LessOrEqual(t, 2*maxmemory, int64(valkey.MemLimit), "maxmemory at most half of mem_limit")
}

// TestBotHealthcheckIsTheBinarysOwnProbe: the bot's healthcheck runs the
// binary's healthcheck subcommand (the image has no shell nor curl) at the
// path the Dockerfile puts it, within a timeout longer than the
// subcommand's own (3 s), so a slow answer is reported by the probe.
func TestBotHealthcheckIsTheBinarysOwnProbe(t *testing.T) {
	bot, err := loadCompose(t).GetService("bot")
	require.NoError(t, err)
	require.Equal(t, types.HealthCheckTest{"CMD", "/codemojex", "healthcheck"}, bot.HealthCheck.Test)
	require.NotNil(t, bot.HealthCheck.Timeout)
	require.Greater(t, time.Duration(*bot.HealthCheck.Timeout), 3*time.Second)
	df, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "Dockerfile"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^COPY --from=\S+ \S+ /codemojex$`, string(df))
	require.Regexp(t, `(?m)^ENTRYPOINT \["/codemojex"\]$`, string(df))
}

// TestWebhookDomainHasNoDefault: the webhook proxy gets WEBHOOK_DOMAIN
// only from the operator (it used to default to localhost, a site Telegram
// never reaches); without it the proxy's entrypoint stops at once saying
// what to set, with it the entrypoint goes on to start Caddy. The
// entrypoint's shell runs here for real (Caddy is not installed here, so
// getting past the check ends in "not found", 127).
func TestWebhookDomainHasNoDefault(t *testing.T) {
	proxy, err := loadCompose(t).GetService("proxy")
	require.NoError(t, err)
	domain, ok := proxy.Environment["WEBHOOK_DOMAIN"]
	require.True(t, ok)
	require.NotNil(t, domain)
	require.Empty(t, *domain, "no default for WEBHOOK_DOMAIN")
	require.Equal(t, "/bin/sh", proxy.Entrypoint[0])
	require.Len(t, proxy.Entrypoint, 3)
	for _, tc := range []struct {
		domain string
		code   int
		out    string
	}{
		{"", 1, "proxy: WEBHOOK_DOMAIN is not set: set it in .env"},
		{"bot.example.com", 127, "caddy"},
	} {
		cmd := exec.Command("/bin/sh", proxy.Entrypoint[1:]...)
		cmd.Env = []string{"PATH=" + t.TempDir(), "WEBHOOK_DOMAIN=" + tc.domain}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%q: %s", tc.domain, out)
		require.Equal(t, tc.code, ee.ExitCode(), "%q: %s", tc.domain, out)
		require.Contains(t, string(out), tc.out)
	}
}

// TestDockerfilePinsItsBaseAndProbesItself: every image the Dockerfile
// builds from is pinned to an exact version or a digest (the final one is
// scratch), with no floating syntax frontend; it stamps the version into
// the variable internal/version reads and declares the binary's own
// healthcheck.
func TestDockerfilePinsItsBaseAndProbesItself(t *testing.T) {
	root := testkit.ModuleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	require.NoError(t, err)
	src := string(b)
	require.NotRegexp(t, `(?mi)^#\s*syntax=`, src, "no syntax frontend image (it floats)")
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(src, -1)
	require.NotEmpty(t, froms)
	for _, f := range froms {
		if f[1] != "scratch" {
			require.Regexp(t, exactTag, f[1], "a pinned base image")
		}
	}
	require.Equal(t, "scratch", froms[len(froms)-1][1], "the final image holds the binary alone")
	require.Contains(t, src, "-X github.com/codemojex/codemojex/internal/version.stamped=${VERSION}")
	v, err := os.ReadFile(filepath.Join(root, "internal", "version", "version.go"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^var stamped string$`, string(v), "the variable the Dockerfile stamps")
	require.Regexp(t, `(?m)^HEALTHCHECK .*CMD \["/codemojex", "healthcheck"\]$`, src)
	require.Regexp(t, `(?m)^USER 65532:65532$`, src, "an unprivileged user")
	require.Contains(t, src, "/etc/ssl/certs/ca-certificates.crt", "the CA certificates for api.telegram.org")
}

// TestPinImagesScriptPinsEveryImage runs scripts/pin-images.sh on copies
// of docker-compose.yml and the Dockerfile, with a resolver standing in
// for the registry (none is reachable from the tests): --check fails
// before, every image then carries its tag and that tag's digest, --check
// passes, the compose file still loads with its images pinned, and a
// second run changes nothing.
func TestPinImagesScriptPinsEveryImage(t *testing.T) {
	root := testkit.ModuleRoot(t)
	dir := t.TempDir()
	for _, f := range []string{"docker-compose.yml", "Dockerfile"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	resolver := filepath.Join(dir, "resolve")
	// The digest of a reference: the SHA-256 of its text.
	require.NoError(t, os.WriteFile(resolver, []byte("#!/bin/sh\nprintf 'sha256:%s\\n' \"$(printf %s \"$1\" | sha256sum | cut -c1-64)\"\n"), 0o755))
	script := filepath.Join(root, "scripts", "pin-images.sh")
	run := func(args ...string) (int, string) {
		cmd := exec.Command(script, args...)
		cmd.Env = append(os.Environ(), "PIN_IMAGES_ROOT="+dir, "PIN_IMAGES_RESOLVE="+resolver)
		out, err := cmd.CombinedOutput()
		if err != nil {
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			return ee.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	code, out := run("--check")
	require.Equal(t, 1, code, "images without digests: %s", out)
	code, out = run()
	require.Zero(t, code, out)
	code, out = run("--check")
	require.Zero(t, code, out)

	digestOf := func(ref string) string {
		cmd := exec.Command(resolver, ref)
		b, err := cmd.Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	before, after := loadCompose(t), loadComposeFile(t, filepath.Join(dir, "docker-compose.yml"))
	for name, s := range before.Services {
		if s.Build != nil {
			continue
		}
		require.Equal(t, s.Image+"@"+digestOf(s.Image), after.Services[name].Image, name)
	}
	df, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	require.NoError(t, err)
	for _, f := range regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(string(df), -1) {
		if f[1] != "scratch" {
			tag, _, _ := strings.Cut(f[1], "@")
			require.Equal(t, tag+"@"+digestOf(tag), f[1])
		}
	}
	compose1, err := os.ReadFile(filepath.Join(dir, "docker-compose.yml"))
	require.NoError(t, err)
	code, out = run()
	require.Zero(t, code, out)
	compose2, err := os.ReadFile(filepath.Join(dir, "docker-compose.yml"))
	require.NoError(t, err)
	require.Equal(t, string(compose1), string(compose2), "a second run with the same digests changes nothing")
}

// TestEnvExampleAndReadmeAgreeWithTheDefaults: every variable
// .env.example sets, and every default the README's configuration table
// states, is the default internal/config applies (the configuration read
// with it set equals the one read without it: .env.example once said
// WORKERS=512 while the default was 1536); every variable either names is
// one internal/config reads, or (WEBHOOK_DOMAIN) one docker-compose.yml
// reads.
func TestEnvExampleAndReadmeAgreeWithTheDefaults(t *testing.T) {
	root := testkit.ModuleRoot(t)
	const token = "123456789:AAHfakeTokenForTests_abcdefghijkl"
	base, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token})
	require.NoError(t, err)
	known := map[string]bool{}
	for _, v := range configVars(t, root) {
		known[v[1]] = true
	}
	compose, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	require.NoError(t, err)
	composeOnly := map[string]bool{"WEBHOOK_DOMAIN": true}

	example, err := godotenv.Read(filepath.Join(root, ".env.example"))
	require.NoError(t, err)
	readme := readmeDefaults(t, root)
	require.Len(t, readme, len(known), "a README row per variable")
	for _, src := range []struct {
		name string
		vars map[string]string
	}{{".env.example", example}, {"README", readme}} {
		for k, v := range src.vars {
			if composeOnly[k] {
				require.Contains(t, string(compose), "${"+k, "%s: %s is docker-compose.yml's", src.name, k)
				continue
			}
			require.True(t, known[k], "%s: %s is not a variable internal/config reads", src.name, k)
			if k == "TELEGRAM_BOT_TOKEN" {
				require.Empty(t, v, "%s: the token has no default", src.name)
				continue
			}
			got, err := config.FromEnv([]string{"TELEGRAM_BOT_TOKEN=" + token, k + "=" + v})
			require.NoError(t, err, "%s: %s=%s", src.name, k, v)
			require.True(t, reflect.DeepEqual(base, got), "%s: %s=%q is not the default", src.name, k, v)
		}
	}
	for k, v := range example {
		if !composeOnly[k] {
			require.Equal(t, readme[k], v, ".env.example and the README on %s", k)
		}
	}
}

// readmeDefaults reads the README's configuration table: variable -> its
// default as the table states it (the first `value` of the default
// column; "" for "(required)", "empty", "(empty: ...)").
func readmeDefaults(t *testing.T, root string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(b), "| variable | default | meaning |")
	require.True(t, ok, "README.md has the configuration table")
	row := regexp.MustCompile("^\\| `([A-Z_]+)` \\| ([^|]*) \\|")
	value := regexp.MustCompile("^`([^`]*)`")
	out := map[string]string{}
	for _, line := range strings.Split(table, "\n")[2:] {
		m := row.FindStringSubmatch(line)
		if m == nil {
			break
		}
		cell := strings.TrimSpace(m[2])
		if v := value.FindStringSubmatch(cell); v != nil {
			out[m[1]] = v[1]
			continue
		}
		require.Regexp(t, `^(\(required|empty|\(empty)`, cell, "README: %s's default %q is neither a `value` nor empty", m[1], cell)
		out[m[1]] = ""
	}
	return out
}
