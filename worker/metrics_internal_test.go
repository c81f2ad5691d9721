package worker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
