package deploytest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// monitoringPath is a path under deploy/monitoring.
func monitoringPath(t *testing.T, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{testkit.ModuleRoot(t), "deploy", "monitoring"}, elem...)...)
}

// alertRules is deploy/monitoring/prometheus/alerts.yml as Prometheus reads it.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// ruleTests is alerts.test.yml as promtool reads it (what these tests use).
type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			EvalTime  string           `yaml:"eval_time"`
			Alertname string           `yaml:"alertname"`
			ExpAlerts []map[string]any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, v), path)
}

// loadAlerts reads alerts.yml.
func loadAlerts(t *testing.T) alertRules {
	t.Helper()
	var r alertRules
	readYAML(t, monitoringPath(t, "prometheus", "alerts.yml"), &r)
	require.NotEmpty(t, r.Groups)
	return r
}

// promtool finds promtool ($PROMTOOL, else on PATH): make test installs
// Debian's prometheus package for it (scripts/ensure-promtool.sh), so in
// CI it is never missing.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		testkit.SkipOrFail(t, "promtool not found on PATH (nor $PROMTOOL): run scripts/ensure-promtool.sh, or install Debian's prometheus package")
	}
	return p
}

// The rule file and the scrape configuration pass promtool's checks, and
// every alert's unit tests pass (promtool test rules).
func TestAlertRulesPassPromtoolChecksAndUnitTests(t *testing.T) {
	bin := promtool(t)
	dir := monitoringPath(t, "prometheus")
	for _, args := range [][]string{
		{"check", "rules", "alerts.yml"},
		{"check", "config", "prometheus.yml"},
		{"test", "rules", "alerts.test.yml"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
		require.Contains(t, string(out), "SUCCESS", "promtool %s", strings.Join(args, " "))
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// githubAnchors returns the anchors of a Markdown file's headings as
// GitHub makes them: lower case, punctuation dropped, spaces as hyphens.
func githubAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	anchors := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			anchors[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
		}
	}
	return anchors
}

// Every alert has a unit test where it fires and one where it does not, a
// severity, and a runbook: a section of docs/operations.md named after it;
// every unit test names an alert that exists.
func TestEveryAlertHasFiringAndQuietUnitTestsAndARunbook(t *testing.T) {
	rules := loadAlerts(t)
	var tests ruleTests
	readYAML(t, monitoringPath(t, "prometheus", "alerts.test.yml"), &tests)
	require.Equal(t, []string{"alerts.yml"}, tests.RuleFiles)
	fires, quiet := map[string]int{}, map[string]int{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname]++
			} else {
				quiet[a.Alertname]++
			}
		}
	}
	anchors := githubAnchors(t, filepath.Join(testkit.ModuleRoot(t), "docs", "operations.md"))
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts[r.Alert] = true
			require.Positive(t, fires[r.Alert], "%s: no unit test where it fires", r.Alert)
			require.Positive(t, quiet[r.Alert], "%s: no unit test where it stays quiet", r.Alert)
			require.Contains(t, []string{"warning", "critical"}, r.Labels["severity"], "%s: severity", r.Alert)
			anchor := strings.ToLower(r.Alert)
			require.Equal(t, "docs/operations.md#"+anchor, r.Annotations["runbook_url"], "%s: runbook_url", r.Alert)
			require.True(t, anchors[anchor], "%s: docs/operations.md has no heading %q", r.Alert, r.Alert)
			require.NotEmpty(t, r.Annotations["summary"], "%s: summary", r.Alert)
		}
	}
	require.Len(t, alerts, 7, "the seven alerts of issue 30")
	for name := range fires {
		require.True(t, alerts[name], "unit test of an alert that does not exist: %s", name)
	}
	for name := range quiet {
		require.True(t, alerts[name], "unit test of an alert that does not exist: %s", name)
	}
}

// grafanaVars replaces the dashboard's variables with what Prometheus
// would be sent: every job, a 5 m rate window.
func grafanaVars(expr string) string {
	return strings.NewReplacer("$__rate_interval", "5m", "${job}", ".*", "$job", ".*").Replace(expr)
}

// monitoringQueries returns every PromQL expression of the dashboard
// (panel targets; the job variable's label_values as its metric) and of
// the alert rules, keyed by where it is.
func monitoringQueries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile(monitoringPath(t, "grafana", "dashboards", "codemojex.json"))
	require.NoError(t, err)
	var dash struct {
		Panels     []dashPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				require.NotEmpty(t, tg.Expr, "panel %q target %s", p.Title, tg.RefID)
				out[fmt.Sprintf("dashboard panel %q target %s", p.Title, tg.RefID)] = grafanaVars(tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	labelValues := regexp.MustCompile(`^label_values\((\w+),\s*(\w+)\)$`)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, ok := v.Query.(map[string]any)
		require.True(t, ok, "variable %s: query object", v.Name)
		m := labelValues.FindStringSubmatch(fmt.Sprint(q["query"]))
		require.NotNil(t, m, "variable %s: label_values(metric, label)", v.Name)
		out["dashboard variable "+v.Name] = fmt.Sprintf("count by (%s) (%s)", m[2], m[1])
	}
	for _, g := range loadAlerts(t).Groups {
		for _, r := range g.Rules {
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

type dashPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

// exported is what one /metrics page holds: each metric family's label
// names and the values seen of each.
type exported map[string]map[string]map[string]bool

// family is the family a series name belongs to (a histogram's _bucket,
// _sum and _count are its family's).
func (e exported) family(name string) (string, bool) {
	if _, ok := e[name]; ok {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if _, ok := e[base]; ok {
				return base, true
			}
		}
	}
	return "", false
}

// scrapeLabels reads the families of a /metrics page.
func scrapeLabels(mfs map[string]*dto.MetricFamily) exported {
	e := exported{}
	for name, mf := range mfs {
		names := map[string]map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if names[lp.GetName()] == nil {
					names[lp.GetName()] = map[string]bool{}
				}
				names[lp.GetName()][lp.GetValue()] = true
			}
		}
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			names["le"] = map[string]bool{anyValue: true}
		}
		e[name] = names
	}
	// Prometheus adds up{job, instance} for every target, and job and
	// instance to every series.
	e["up"] = map[string]map[string]bool{}
	return e
}

// anyValue marks a label whose values are not listed (a histogram's le).
const anyValue = "\x00any"

// targetLabel reports whether name is a label Prometheus adds to every
// scraped series (job, instance).
func targetLabel(name string) bool { return name == "job" || name == "instance" }

// literalAlternatives returns the alternatives of a regexp that is only
// literals joined by |, or false.
func literalAlternatives(re string) ([]string, bool) {
	alts := strings.Split(re, "|")
	for _, a := range alts {
		if a == "" || regexp.QuoteMeta(a) != a {
			return nil, false
		}
	}
	return alts, true
}

// checkQuery returns what is wrong with expr against one /metrics page: a
// metric the bot does not export, a label a metric does not have, a label
// value (= or literal alternatives in =~, !~) never seen, grouping by a
// label none of the aggregated metrics has; it adds the families named to
// seen.
func checkQuery(expr string, e exported, seen map[string]bool) []string {
	ast, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	parser.Inspect(ast, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			problems = append(problems, checkSelector(n, e, seen)...)
		case *parser.AggregateExpr:
			if !n.Without {
				problems = append(problems, checkGrouping(n, e)...)
			}
		}
		return nil
	})
	return problems
}

// checkSelector is checkQuery of one vector selector.
func checkSelector(n *parser.VectorSelector, e exported, seen map[string]bool) []string {
	fam, ok := e.family(n.Name)
	if !ok {
		return []string{fmt.Sprintf("metric %s is not on the bot's /metrics", n.Name)}
	}
	seen[fam] = true
	var problems []string
	for _, m := range n.LabelMatchers {
		if m.Name == model.MetricNameLabel || targetLabel(m.Name) {
			continue
		}
		values, ok := e[fam][m.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no label %s", n.Name, m.Name))
			continue
		}
		want := []string{m.Value}
		if m.Type == labels.MatchRegexp || m.Type == labels.MatchNotRegexp {
			if want, ok = literalAlternatives(m.Value); !ok {
				continue
			}
		}
		for _, v := range want {
			if !values[v] && !values[anyValue] {
				problems = append(problems, fmt.Sprintf("%s has no series with %s=%q (seen: %v)", n.Name, m.Name, v, slices.Sorted(maps.Keys(values))))
			}
		}
	}
	return problems
}

// checkGrouping is checkQuery of one aggregation's by (...).
func checkGrouping(n *parser.AggregateExpr, e exported) []string {
	var problems []string
	for _, g := range n.Grouping {
		if targetLabel(g) {
			continue
		}
		found := false
		parser.Inspect(n.Expr, func(inner parser.Node, _ []parser.Node) error {
			if vs, ok := inner.(*parser.VectorSelector); ok {
				if fam, ok := e.family(vs.Name); ok {
					_, has := e[fam][g]
					found = found || has
				}
			}
			return nil
		})
		if !found {
			problems = append(problems, fmt.Sprintf("by (%s): no metric aggregated in %s has label %s", g, n.Expr, g))
		}
	}
	return problems
}

// Every metric the dashboard's queries and the alert rules name exists,
// with every label they match on or group by (and the label values they
// match), in a real bot's /metrics: the binary against the Bot API
// emulator and a real Valkey, after one /start answered (so the labelled
// series of a handled update and a sent reply exist).
func TestMonitoringQueriesNameOnlyMetricsAndLabelsTheBotExports(t *testing.T) {
	queries := monitoringQueries(t)
	require.Greater(t, len(queries), 30, "the dashboard's and the rules' queries")

	bin := testkit.BuildBot(t)
	srv := valkeytest.Start(t, valkeytest.Options{})
	emu := testkit.NewEmulator(t)
	addr := testkit.FreeAddr(t)
	testkit.StartBot(t, bin, "bot", []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(),
		"VALKEY_URL=" + srv.URL, "HTTP_ADDR=" + addr, "LOG_LEVEL=info"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const chat = 4242
	_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: chat, Text: "/start"})
	require.NoError(t, err)
	_, err = emu.WaitForMessages(ctx, chat, 1)
	require.NoError(t, err, "the bot answers /start")

	// The reply's ack (codemojex_worker_sent_total{queue="reply"}) is
	// counted just after the emulator received it.
	var mfs map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		mfs = scrape(t, "http://"+addr+"/metrics")
		return mfs["codemojex_worker_sent_total"] != nil && mfs["codemojex_updates_handled_total"] != nil
	}, 20*time.Second, 50*time.Millisecond, "the reply counted on /metrics")
	e := scrapeLabels(mfs)

	seen := map[string]bool{}
	for where, expr := range queries {
		require.Empty(t, checkQuery(expr, e, seen), "%s: %s", where, expr)
	}
	t.Logf("%d queries name %d metrics, all on the bot's /metrics", len(queries), len(seen))
	require.Greater(t, len(seen), 25, "metrics named by the dashboard and the rules")
}

// scrape GETs a /metrics page and parses it.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return mfs
}

// A query naming a metric, a label or a label value the bot does not
// export, or grouping by a label no aggregated metric has, is refused by
// checkQuery: the check above can fail.
func TestCheckQueryRefusesWhatTheBotDoesNotExport(t *testing.T) {
	e := exported{
		"codemojex_worker_sent_total":         {"queue": {"reply": true, "notify": true}},
		"codemojex_update_oldest_age_seconds": {},
		"codemojex_handler_duration_seconds":  {"le": {anyValue: true}},
	}
	tests := []struct {
		name, expr string
		ok         bool
	}{
		{"a metric and its label", `sum by (queue) (rate(codemojex_worker_sent_total{queue="reply"}[5m]))`, true},
		{"a histogram's buckets", `histogram_quantile(0.9, sum by (le) (rate(codemojex_handler_duration_seconds_bucket[5m])))`, true},
		{"literal alternatives seen", `codemojex_worker_sent_total{queue!~"reply|notify"}`, true},
		{"a regexp", `codemojex_worker_sent_total{queue=~"re.*"}`, true},
		{"target labels", `max by (instance) (codemojex_update_oldest_age_seconds{job=~".*"})`, true},
		{"not PromQL", `sum by (queue) (`, false},
		{"an unknown metric", `codemojex_worker_sent`, false},
		{"an unknown label", `codemojex_worker_sent_total{reason="x"}`, false},
		{"an unknown value", `codemojex_worker_sent_total{queue="paid"}`, false},
		{"an unknown alternative", `codemojex_worker_sent_total{queue=~"reply|paid"}`, false},
		{"grouping by an unknown label", `sum by (budget) (codemojex_worker_sent_total)`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := checkQuery(tt.expr, e, map[string]bool{})
			if tt.ok {
				require.Empty(t, problems)
			} else {
				require.NotEmpty(t, problems)
			}
		})
	}
}

// loadComposeWith loads docker-compose.yml with profiles enabled.
func loadComposeWith(t *testing.T, profiles ...string) *types.Project {
	t.Helper()
	root := testkit.ModuleRoot(t)
	details, err := loader.LoadConfigFiles(context.Background(), []string{filepath.Join(root, "docker-compose.yml")}, root)
	require.NoError(t, err)
	details.Environment = map[string]string{}
	p, err := loader.LoadWithContext(context.Background(), *details, func(o *loader.Options) {
		o.SetProjectName("codemojex", true)
		o.SkipResolveEnvironment = true
		o.Profiles = profiles
	}, loader.WithDiscardEnvFiles)
	require.NoError(t, err)
	return p
}

// bindMount returns the source (absolute) of service s's bind mount at
// target, failing t when there is none.
func bindMount(t *testing.T, s types.ServiceConfig, target string) string {
	t.Helper()
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Target == target {
			require.True(t, v.ReadOnly, "%s: %s mounted read-only", s.Name, target)
			return v.Source
		}
	}
	require.Failf(t, "no bind mount", "%s: nothing mounted at %s", s.Name, target)
	return ""
}

// The monitoring profile starts Prometheus and Grafana on pinned versions,
// on the host's loopback only, each with a health check; Prometheus loads
// deploy/monitoring/prometheus (its prometheus.yml scrapes the bot
// service's HTTP port and loads alerts.yml); Grafana's provisioning points
// its datasource at the prometheus service's port and its dashboard
// provider at where the dashboards are mounted. Without the profile
// neither starts.
func TestMonitoringProfileStartsPrometheusAndGrafanaProvisioned(t *testing.T) {
	for _, name := range []string{"prometheus", "grafana"} {
		_, err := loadComposeWith(t).GetService(name)
		require.Error(t, err, "%s starts only with --profile monitoring", name)
	}
	p := loadComposeWith(t, "monitoring")
	root := testkit.ModuleRoot(t)
	pinned := map[string]*regexp.Regexp{
		"prometheus": regexp.MustCompile(`^prom/prometheus:v\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?$`),
		"grafana":    regexp.MustCompile(`^grafana/grafana:\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?$`),
	}
	svc := map[string]types.ServiceConfig{}
	for name, re := range pinned {
		s, err := p.GetService(name)
		require.NoError(t, err)
		svc[name] = s
		require.Equal(t, []string{"monitoring"}, s.Profiles, name)
		require.Regexp(t, re, s.Image, "%s: image pinned to a release", name)
		require.NotEmpty(t, s.Ports, name)
		for _, port := range s.Ports {
			require.Equal(t, "127.0.0.1", port.HostIP, "%s: port %d published on the loopback only", name, port.Target)
		}
		require.NotNil(t, s.HealthCheck, "%s: health check", name)
		require.NotEmpty(t, s.HealthCheck.Test, name)
	}

	// Prometheus: its configuration from the repository, scraping the bot.
	prom := svc["prometheus"]
	promDir := bindMount(t, prom, "/etc/prometheus")
	require.Equal(t, filepath.Join(root, "deploy", "monitoring", "prometheus"), promDir)
	require.Contains(t, prom.Command, "--config.file=/etc/prometheus/prometheus.yml")
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName      string `yaml:"job_name"`
			DNSSDConfigs []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, filepath.Join(promDir, "prometheus.yml"), &cfg)
	require.Equal(t, []string{"alerts.yml"}, cfg.RuleFiles)
	require.Len(t, cfg.ScrapeConfigs, 1)
	require.Equal(t, "codemojex", cfg.ScrapeConfigs[0].JobName)
	require.Len(t, cfg.ScrapeConfigs[0].DNSSDConfigs, 1)
	sd := cfg.ScrapeConfigs[0].DNSSDConfigs[0]
	require.Equal(t, []string{"bot"}, sd.Names, "scrapes the bot service's containers")
	bot, err := p.GetService("bot")
	require.NoError(t, err)
	require.NotNil(t, bot.Environment["HTTP_ADDR"])
	require.Equal(t, fmt.Sprintf(":%d", sd.Port), *bot.Environment["HTTP_ADDR"], "scrapes the bot's HTTP_ADDR")

	// Grafana: the datasource is the prometheus service, the dashboards
	// where the provider reads them.
	graf := svc["grafana"]
	prov := bindMount(t, graf, "/etc/grafana/provisioning")
	require.Equal(t, filepath.Join(root, "deploy", "monitoring", "grafana", "provisioning"), prov)
	var ds struct {
		Datasources []struct {
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(prov, "datasources", "prometheus.yml"), &ds)
	require.Len(t, ds.Datasources, 1)
	require.Equal(t, "prometheus", ds.Datasources[0].Type)
	require.Equal(t, "http://prometheus:9090", ds.Datasources[0].URL)
	require.Equal(t, uint32(9090), prom.Ports[0].Target, "Prometheus listens on 9090 (its default)")
	var providers struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(prov, "dashboards", "codemojex.yml"), &providers)
	require.Len(t, providers.Providers, 1)
	require.Equal(t, "file", providers.Providers[0].Type)
	dashDir := bindMount(t, graf, providers.Providers[0].Options.Path)
	require.Equal(t, filepath.Join(root, "deploy", "monitoring", "grafana", "dashboards"), dashDir)
	b, err := os.ReadFile(filepath.Join(dashDir, "codemojex.json"))
	require.NoError(t, err)
	var dash struct {
		UID    string      `json:"uid"`
		Panels []dashPanel `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	require.Equal(t, "codemojex", dash.UID)
	require.NotEmpty(t, dash.Panels)
}
