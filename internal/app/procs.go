package app

import (
	"time"

	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/version"
)

// processFigures are the counters of this process a heartbeat carries
// (internal/procs): figure name -> metric family, summed over its labels.
var processFigures = [...]struct{ name, family string }{
	{"updates received", "codemojex_updates_received_total"},
	{"updates handled", "codemojex_updates_handled_total"},
	{"messages sent", "codemojex_worker_sent_total"},
	{"429s", "codemojex_worker_too_many_requests_total"},
	{"dead letters", "codemojex_worker_dead_lettered_total"},
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
		sum := 0.0
		if i, ok := byName[pf.family]; ok {
			for _, m := range fams[i].GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
		out[pf.name] = sum
	}
	return out
}
