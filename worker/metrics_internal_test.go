package worker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// Every Reason constant of classify.go is a dead-letter label exported at
// 0 from the start, so the alert rules' increase() sees a reason's first
// dead letter; a reason added without it fails here.
func TestEveryDeadLetterReasonIsExportedFromTheStart(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "classify.go", nil, 0)
	require.NoError(t, err)
	var consts []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if strings.HasPrefix(name.Name, "Reason") && i < len(vs.Values) {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok, "%s is a string literal", name.Name)
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				consts = append(consts, v)
			}
		}
		return true
	})
	require.NotEmpty(t, consts)

	reg := prometheus.NewRegistry()
	_, err = newMetrics(reg)
	require.NoError(t, err)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var exported []string
	for _, mf := range mfs {
		if mf.GetName() == "codemojex_worker_dead_lettered_total" {
			for _, m := range mf.GetMetric() {
				require.Zero(t, m.GetCounter().GetValue())
				exported = append(exported, m.GetLabel()[0].GetValue())
			}
		}
	}
	require.ElementsMatch(t, consts, exported)
}

// The send path's cached metric children (metrics.sentBy, editedBy,
// latencyBy) count in their vec's series, one series per label, each
// exported only once used; a second worker on the same registry counts in
// the same series.
func TestCachedMetricChildrenCountInTheirVecsSeriesOnceUsed(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	require.NoError(t, err)
	require.Zero(t, seriesOf(m.sent), "no series before a send")
	m.sentBy.get("reply").Inc()
	m.sentBy.get("reply").Inc()
	m.sentBy.get("notify").Inc()
	m.latencyBy.get("sendMessage").Observe(0.2)
	m2, err := newMetrics(reg)
	require.NoError(t, err)
	m2.sentBy.get("reply").Inc()
	m2.editedBy.get("paid").Inc()
	require.Equal(t, 2, seriesOf(m.sent), "reply and notify")
	require.Equal(t, 1, seriesOf(m.edited), "paid")
	require.Equal(t, 1, seriesOf(m.apiLatency), "sendMessage")
	for _, c := range []struct {
		vec   *prometheus.CounterVec
		label string
		want  float64
	}{
		{m.sent, "reply", 3}, {m.sent, "notify", 1}, {m.edited, "paid", 1},
	} {
		require.Equal(t, c.want, counterValue(t, c.vec.WithLabelValues(c.label)), c.label)
	}
}

// seriesOf counts the series c exports now.
func seriesOf(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 64)
	c.Collect(ch)
	close(ch)
	return len(ch)
}

// counterValue is c's value now.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}
