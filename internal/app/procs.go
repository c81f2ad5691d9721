package app

import (
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/version"
)

// processFigures are the counters of this process a heartbeat carries
// (internal/procs): figure name -> metric family, summed over its series
// (only those whose label only.name is only.value, when set); with split,
// one figure more per value of that label (name + value).
var processFigures = [...]struct {
	name, family string
	only         [2]string
	split        string
}{
	{name: procs.FigureReceived, family: "codemojex_updates_received_total"},
	{name: procs.FigureHandled, family: "codemojex_updates_handled_total", only: [2]string{"result", "ok"}},
	{name: procs.FigureSent, family: "codemojex_worker_sent_total"},
	{name: procs.Figure429, family: "codemojex_worker_too_many_requests_total"},
	{name: procs.FigureDead, family: "codemojex_worker_dead_lettered_total"},
	{name: procs.FigureDropped, family: "codemojex_flood_dropped_total"},
	{name: procs.FigureQueue, family: "codemojex_worker_sent_total", split: "queue"},
	{name: procs.FigureQueue, family: "codemojex_worker_edited_total", split: "queue"},
}

// heartbeat is the service writing this process's heartbeat
// (procs.Beater: its roles, version and figures every 5 s), so every
// console of the deployment lists it; removed when the process stops.
func (a *App) heartbeat() *procs.Beater {
	id, started := procs.NewID(), time.Now()
	roles := []string{a.cfg.Role}
	if a.cfg.Role == config.RoleAll {
		roles = []string{config.RolePoller, config.RoleHandler, config.RoleWorker}
	}
	return &procs.Beater{Registry: a.procs, Log: a.log, Self: func() procs.Process {
		p := procs.Process{ID: id, Roles: roles, Version: version.String(), Started: started, Figures: a.figures()}
		if a.leader.Load() {
			p.Roles = append(append([]string(nil), roles...), "poller lease")
		}
		return p
	}}
}

// figures reads processFigures from the process's registry (0 for a
// family with no series yet, or none in this role).
func (a *App) figures() map[string]float64 {
	out := map[string]float64{}
	fams, err := a.reg.Gather()
	if err != nil {
		a.log.Debug("procs: metrics", "err", err)
	}
	byName := map[string]int{}
	for i, f := range fams {
		byName[f.GetName()] = i
	}
	for _, pf := range processFigures {
		i, ok := byName[pf.family]
		if pf.split == "" {
			out[pf.name] += 0 // listed, 0 until the family has a series
		}
		if !ok {
			continue
		}
		for _, m := range fams[i].GetMetric() {
			if pf.only[0] != "" && labelOf(m, pf.only[0]) != pf.only[1] {
				continue
			}
			name := pf.name
			if pf.split != "" {
				name += labelOf(m, pf.split)
			}
			out[name] += m.GetCounter().GetValue()
		}
	}
	return out
}

// labelOf is m's value of label name ("" when it has none).
func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
