package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// Kinds of fault.
const (
	faultKill     = "kill-9"         // SIGKILL of a bot process, restarted after For
	faultTerm     = "sigterm"        // SIGTERM (a graceful stop), restarted after For
	faultStop     = "sigstop"        // SIGSTOP for For (longer than the lease), then SIGCONT
	faultRestart  = "valkey-restart" // the primary restarted (SIGTERM, append-only file)
	faultFailover = "valkey-failover"
	faultCut      = "net-cut"         // the proxy stopped for For: connections dropped and refused
	faultSlow     = "net-slow"        // N ms latency (± a fifth) from Valkey to the bot for For
	fault5xx      = "tg-500"          // Telegram answers 500 (JSON) to every method for For
	fault502      = "tg-502"          // Telegram's nginx HTML 502 page to every method for For
	fault429      = "tg-429"          // N sendMessage answered 429 with retry_after 1-3 s
	faultTgSlow   = "tg-slow"         // every method answered 1 s late for For
	faultHold     = "tg-hold"         // N sendMessage delivered, then the connection held 2 s and dropped
	faultBusy     = "valkey-busy"     // a Lua script loops on the primary for For: every other command answered BUSY
	faultOOM      = "valkey-oom"      // the primary's maxmemory a tenth below its use (noeviction) for For: writes answered OOM
	faultReadonly = "valkey-readonly" // the primary a replica of a listener that never answers for For: writes answered READONLY
	// A cluster run's (forCluster: in place of valkey-restart and
	// valkey-failover).
	faultClusterKill     = "cluster-kill-9"   // SIGKILL of the slot's primary, its replica promoted by the cluster, the node restarted as a replica
	faultClusterFailover = "cluster-failover" // CLUSTER FAILOVER on the slot's primary's replica (graceful)
)

// drawnKinds are the kinds schedule draws from one stream, each equally
// likely; the Valkey server kinds added later come from streams of their
// own (serverStreams, one per change that added kinds) at the same rate
// per kind, so a seed still draws the faults it drew before each change
// (a recorded run's seed reproduces them). serverKinds are the kinds of
// serverStreams; faultKinds is every kind, in the table's order, a
// cluster run's last.
var (
	drawnKinds = []string{faultKill, faultTerm, faultStop, faultRestart, faultFailover, faultCut, faultSlow,
		fault5xx, fault502, fault429, faultTgSlow, faultHold}
	serverStreams = []serverStream{
		{id: 0x7365727665, kinds: []string{faultBusy, faultOOM}}, // "serve"
		{id: 0x726561646f6e6c79, kinds: []string{faultReadonly}}, // "readonly", added after busy and oom
	}
	serverKinds = slices.Concat(serverStreams[0].kinds, serverStreams[1].kinds)
	faultKinds  = slices.Concat(drawnKinds, serverKinds, []string{faultClusterKill, faultClusterFailover})
)

// serverStream is a random stream of a seed (PCG's second word, id) and
// the Valkey server kinds drawn from it.
type serverStream struct {
	id    uint64
	kinds []string
}

// processes are the bot processes a fault of drawnKinds may hit (stack's
// slots but the console's, whose faults come from consoleFaults).
var processes = []string{"poller", "handler-1", "handler-2", "worker-1", "worker-2"}

// consoleSlot is the stack's process serving the console; processKinds
// are the kinds of fault that hit a process.
const consoleSlot = "console"

var processKinds = []string{faultKill, faultTerm, faultStop}

// consoleStreamID is the random stream of a seed (PCG's second word) the
// console's process faults are drawn from ("console"), added after every
// other kind: a seed still draws the faults it drew before.
const consoleStreamID = 0x636f6e736f6c65

// consoleFaults draws the process faults (processKinds, each equally
// likely) of the console's slot for a run of duration d from seed, on a
// stream of their own: from 3 s on, as often as a fault of drawnKinds
// hits one of processes (exponential gaps, a mean of meanGap ×
// len(drawnKinds) × len(processes) / len(processKinds), 80 s), lasting as
// draw's do, never two at once (2 s apart at least) and over by d -
// settleMargin(d). They overlap the other faults freely. schedule leaves
// them out (TestScheduleKeepsWhatRecordedSeedsDrew compares it with
// records of runs without a console): runChaos adds them.
func consoleFaults(seed uint64, d time.Duration) []fault {
	rng := rand.New(rand.NewPCG(seed, consoleStreamID))
	end := d - settleMargin(d)
	gap := meanGap * time.Duration(len(drawnKinds)*len(processes)) / time.Duration(len(processKinds))
	var out []fault
	free := 3 * time.Second
	at := 3 * time.Second
	for {
		at += time.Duration(rng.ExpFloat64() * float64(gap))
		if at >= end {
			return out
		}
		f := fault{At: at, Kind: processKinds[rng.IntN(len(processKinds))], Target: consoleSlot}
		if f.Kind == faultStop {
			f.For = lease + between(rng, time.Second, 6*time.Second)
		} else {
			f.For = between(rng, time.Second, 4*time.Second)
		}
		if at < free || at+f.For+2*time.Second > end {
			continue
		}
		free = at + f.For + 2*time.Second
		out = append(out, f)
	}
}

// fault is one scheduled fault.
type fault struct {
	At     time.Duration // after the load started
	Kind   string
	Target string        // a process, "valkey", or the kind itself
	For    time.Duration // how long it lasts (0: instantaneous)
	N      int           // net-slow: ms; tg-429, tg-hold: requests
}

// String is the fault as the run's log shows it, its N with its unit:
// "   12.5s net-slow        for 3.2s 180 ms latency", "   40.1s tg-429          5 sendMessage".
func (f fault) String() string {
	s := fmt.Sprintf("%7.1fs %-15s", f.At.Seconds(), f.Kind)
	if f.Target != f.Kind {
		s += " " + f.Target
	}
	if f.For > 0 {
		s += fmt.Sprintf(" for %.1fs", f.For.Seconds())
	}
	switch {
	case f.N <= 0:
	case f.Kind == faultSlow:
		s += fmt.Sprintf(" %d ms latency", f.N)
	default:
		s += fmt.Sprintf(" %d sendMessage", f.N)
	}
	return s
}

// between draws a duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// meanGap is the mean gap between two faults of drawnKinds (exponential).
const meanGap = 4 * time.Second

// schedule draws the faults of a run of duration d from seed, by start
// time: from 3 s on, one of drawnKinds every meanGap on average
// (exponential gaps), overlapping, each over by d - settleMargin(d), and
// the serverKinds' (serverFaults, one stream after the other, each
// placed around the faults drawn before it); two faults never hold one
// target at once (a process, Valkey, or a kind of Telegram or network
// fault).
func schedule(seed uint64, d time.Duration) []fault {
	out := drawnFaults(seed, d)
	for _, s := range serverStreams {
		out = append(out, serverFaults(seed, s, d, out)...)
	}
	slices.SortStableFunc(out, func(a, b fault) int { return int(a.At - b.At) })
	return out
}

// serverFaults draws the faults of s.kinds (valkey-busy and valkey-oom;
// valkey-readonly) of a run of duration d from seed, on s's stream: from
// 3 s on, each kind as often as one of drawnKinds (exponential gaps),
// lasting 2-6 s, over by d - settleMargin(d), each where no fault of
// taken nor another of them holds Valkey (2 s apart at least, as schedule
// keeps its targets).
func serverFaults(seed uint64, s serverStream, d time.Duration, taken []fault) []fault {
	rng := rand.New(rand.NewPCG(seed, s.id))
	end := d - settleMargin(d)
	gap := meanGap * time.Duration(len(drawnKinds)) / time.Duration(len(s.kinds))
	var out []fault
	at := 3 * time.Second
	for {
		at += time.Duration(rng.ExpFloat64() * float64(gap))
		if at >= end {
			return out
		}
		f := fault{At: at, Kind: s.kinds[rng.IntN(len(s.kinds))], Target: "valkey", For: between(rng, 2*time.Second, 6*time.Second)}
		free := func(g fault) bool {
			return g.Target != f.Target || g.At+g.For+2*time.Second <= f.At || f.At+f.For+2*time.Second <= g.At
		}
		if at+f.For+2*time.Second > end || !all(taken, free) || !all(out, free) {
			continue
		}
		out = append(out, f)
	}
}

// all reports whether ok holds for every fault of fs.
func all(fs []fault, ok func(fault) bool) bool {
	return !slices.ContainsFunc(fs, func(f fault) bool { return !ok(f) })
}

// drawnFaults are schedule's faults of drawnKinds.
func drawnFaults(seed uint64, d time.Duration) []fault {
	rng := rand.New(rand.NewPCG(seed, 0x6368616f73))
	end := d - settleMargin(d)
	busy := map[string]time.Duration{} // target -> free from
	var out []fault
	at := 3 * time.Second
	for {
		at += time.Duration(rng.ExpFloat64() * float64(meanGap))
		if at >= end {
			return out
		}
		f := draw(rng, at)
		if f.Target == "process" {
			free := slices.DeleteFunc(slices.Clone(processes), func(p string) bool { return busy[p] > at })
			if len(free) == 0 {
				continue
			}
			f.Target = free[rng.IntN(len(free))]
		}
		// Restarted processes need a few seconds to start; Valkey's
		// faults and a kind's spells do not overlap themselves.
		hold := f.For + 2*time.Second
		if busy[f.Target] > at || at+hold > end {
			continue
		}
		busy[f.Target] = at + hold
		out = append(out, f)
	}
}

// draw is one fault of a random kind at at (Target "process" for a
// process fault, to be chosen).
func draw(rng *rand.Rand, at time.Duration) fault {
	f := fault{At: at, Kind: drawnKinds[rng.IntN(len(drawnKinds))]}
	f.Target = f.Kind
	switch f.Kind {
	case faultKill, faultTerm:
		f.Target, f.For = "process", between(rng, time.Second, 4*time.Second)
	case faultStop:
		f.Target, f.For = "process", lease+between(rng, time.Second, 6*time.Second)
	case faultRestart, faultFailover:
		f.Target = "valkey"
	case faultCut:
		f.Target, f.For = "valkey", between(rng, time.Second, 6*time.Second)
	case faultSlow:
		f.For, f.N = between(rng, 2*time.Second, 10*time.Second), 50+rng.IntN(250)
	case fault5xx, fault502, faultTgSlow:
		f.For = between(rng, 2*time.Second, 8*time.Second)
	case fault429:
		f.N = 3 + rng.IntN(8)
	case faultHold:
		f.N = 1 + rng.IntN(3)
	}
	return f
}

// settleMargin is the end of a run kept free of faults: the last ones end
// before the load does.
func settleMargin(d time.Duration) time.Duration { return max(10*time.Second, d/6) }

// applied is one fault as it happened.
type applied struct {
	fault
	Began    time.Duration // after the load started
	InFlight int           // sends under a lease when it began
	Ended    time.Duration // after the load started: undone (a process restarted, Valkey back)
	Err      string        // what went wrong applying it ("" when nothing)
}

// injector applies a schedule to a stack.
type injector struct {
	st    *stack
	start time.Time
	mu    sync.Mutex
	log   []applied
	logf  func(format string, args ...any)
}

// run applies every fault at its time (each in its own goroutine, so they
// overlap) and returns when the last one has ended and everything it did
// was undone (processes running, the proxy up and clean, no Telegram
// fault left).
func (in *injector) run(ctx context.Context, faults []fault) {
	var wg sync.WaitGroup
	for _, f := range faults {
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(in.start.Add(f.At))):
			}
			a := applied{fault: f, Began: time.Since(in.start), InFlight: in.st.inFlight(ctx)}
			in.logf("fault %s (began at %.1fs, %d sends in flight)", f, a.Began.Seconds(), a.InFlight)
			if err := in.apply(ctx, f); err != nil {
				a.Err = err.Error()
				in.logf("fault %s: %v", f, err)
			}
			a.Ended = time.Since(in.start)
			in.mu.Lock()
			in.log = append(in.log, a)
			in.mu.Unlock()
		})
	}
	wg.Wait()
	in.st.emu.ClearFaults()
}

// applied lists the faults applied so far, by start time.
func (in *injector) applied() []applied {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := slices.Clone(in.log)
	slices.SortFunc(out, func(a, b applied) int { return int(a.Began - b.Began) })
	return out
}

// apply does f and undoes it after f.For.
func (in *injector) apply(ctx context.Context, f fault) error {
	st := in.st
	until := time.Now().Add(f.For) // the emulator runs on the real clock
	switch f.Kind {
	case faultKill, faultTerm, faultStop:
		return in.process(ctx, f)
	case faultRestart:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		return st.restartPrimary()
	case faultFailover:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		_, err := st.failover(ctx)
		return err
	case faultCut:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		st.proxy.Stop()
		sleep(ctx, f.For)
		return st.proxy.Start()
	case faultClusterKill:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		lag, err := st.killSlotPrimary(ctx)
		in.logf("fault %s: the replica had %d bytes of the primary's replication stream to acknowledge at the kill (-1: unknown)", f, lag)
		return err
	case faultClusterFailover:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		return st.clusterFailover(ctx)
	case faultBusy:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		return st.busy(ctx, f.For)
	case faultOOM:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		return st.outOfMemory(ctx, f.For)
	case faultReadonly:
		st.vmu.Lock()
		defer st.vmu.Unlock()
		return st.readonly(ctx, f.For)
	case faultSlow:
		name := fmt.Sprintf("slow-%d", f.At.Milliseconds())
		if err := st.addToxic(name, "latency", fmt.Sprintf(`{"latency":%d,"jitter":%d}`, f.N, f.N/5)); err != nil {
			return err
		}
		sleep(ctx, f.For)
		return st.removeToxic(name)
	case fault5xx:
		st.emu.InjectFault(tgemu.InternalServerError().Until(until).Times(-1))
	case fault502:
		st.emu.InjectFault(tgemu.BadGateway().Until(until).Times(-1))
	case faultTgSlow:
		st.emu.InjectFault(tgemu.Delay(time.Second).Until(until).Times(-1))
	case fault429:
		st.emu.InjectFault(tgemu.TooManyRequests(1 + int(f.At.Milliseconds()%3)).For("sendMessage").Times(f.N))
	case faultHold:
		st.emu.InjectFault(tgemu.HeldResponse(2 * time.Second).For("sendMessage").Times(f.N))
	default:
		return fmt.Errorf("unknown fault %q", f.Kind)
	}
	sleep(ctx, f.For)
	return nil
}

// process kills, stops or freezes a bot process and brings it back.
func (in *injector) process(ctx context.Context, f fault) error {
	var sl *slot
	for _, s := range in.st.slots {
		if s.name == f.Target {
			sl = s
		}
	}
	if sl == nil {
		return fmt.Errorf("no process %q", f.Target)
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	in.st.revive(sl) // exited on its own since the supervisor looked
	p := sl.proc()
	switch f.Kind {
	case faultStop:
		sl.signal(syscall.SIGSTOP)
		sleep(ctx, f.For)
		sl.signal(syscall.SIGCONT)
		return nil
	case faultKill:
		p.Kill()
	case faultTerm:
		if err := p.Stop(); err != nil && !strings.Contains(err.Error(), "signal: terminated") {
			in.logf("%s: exit after SIGTERM: %v", sl.name, err)
		}
	}
	sleep(ctx, f.For)
	in.st.start(sl)
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
