package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

// kill -9 of a worker with a send in flight (issue 28, docs/operations.md:
// a dead process costs seconds, not a lease). Each kill on a flushed server
// and a fresh emulator: worker process A claims the one message and sends
// it; the emulator holds that request (tgemu.FaultDelay, 60 s, before it
// is processed: Telegram has not taken it); process B starts, then A gets
// SIGKILL. B finds A unheard (consumer.DefaultLivenessTTL) and puts its
// job back; the figure is the time from the kill to the emulator's
// acceptance of the message. internal/failuretest's machinery (the real
// cmd/bot as processes) is test code only (the package has no non-test
// code), so this uses the bench's own worker role; the updates' side
// (handler processes) is not measured here.
const (
	killRuns = 20
	killHold = 60 * time.Second // the held send: longer than the lease
	killChat = int64(4242)
)

// killCell is one kill's figures.
type killCell struct {
	resent time.Duration // kill -> the message accepted
	sends  int           // sendMessage requests for the message (the held one included)
}

func benchKill(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	var cells []killCell
	for i := range killRuns {
		c, err := killRun(ctx, srv, i)
		if err != nil {
			return fmt.Errorf("kill %d: %w", i+1, err)
		}
		cfg.log.Info("kill", "run", i+1, "resent after", c.resent, "sends", c.sends)
		cells = append(cells, c)
	}
	d := make([]time.Duration, len(cells))
	sends := 0
	for i, c := range cells {
		d[i], sends = c.resent, sends+c.sends
	}
	slices.Sort(d)
	p50, p100 := percentile(d, 0.5), d[len(d)-1]
	t.add(fmt.Sprintf("kill -9 of a worker process whose send is held by Telegram (not yet taken), a second process running: kill -> the message accepted, p50 / p100 over %d kills (sends of the message: %d, the held ones included) vs the lease that was the wait before (`worker.Config.Lease`'s default)",
		killRuns, sends), fmt.Sprintf("%s / %s", ms(p50), ms(p100)), "limit: "+ms(30*time.Second),
		fmt.Sprintf("p100 %s; goal p100 ≤ 3 s: %s", ratio(p100.Seconds(), 30), verdict(p100 <= 3*time.Second)))
	var all []string
	for _, c := range cells {
		all = append(all, ms(c.resent))
	}
	t.note("Each kill's time to the resend, in order: " + strings.Join(all, ", ") + ".")
	return nil
}

// killRun is one kill; run numbers the tag.
func killRun(ctx context.Context, srv *valkeyserver.Server, run int) (killCell, error) {
	var cell killCell
	if err := flush(ctx, srv); err != nil {
		return cell, err
	}
	emu, err := tgemu.New(tgemu.WithLimits(tgemu.DefaultLimits()), tgemu.WithAllowAnyChat())
	if err != nil {
		return cell, err
	}
	defer emu.Close()
	emu.InjectFault(tgemu.Fault{Kind: tgemu.FaultDelay, Method: "sendMessage", ChatID: killChat, Delay: killHold})
	tag := "kill" + strconv.Itoa(run)
	p, err := newPipeline(srv, tag)
	if err != nil {
		return cell, err
	}
	defer p.Close()
	flags := []string{"-global", "30", "-chat", "1", "-senders", strconv.Itoa(worker.DefaultSenders)}
	stopA, cmdsA, err := startWorkerCmds(ctx, 1, srv, emu, tag, flags...)
	if err != nil {
		return cell, err
	}
	defer func() { _ = stopA() }()
	if err := p.backlog(ctx, tgjob.QueueNotify, []int64{killChat}, 1); err != nil {
		return cell, err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		st, err := p.store.Inspector().Stats(wctx, tgjob.QueueNotify, 0)
		if err != nil {
			return cell, fmt.Errorf("waiting for A's claim: %w", err)
		}
		if st.InFlight > 0 {
			break
		}
		sleepCtx(wctx, 5*time.Millisecond)
	}
	stopB, err := startWorkerProcs(ctx, 1, srv, emu, tag, flags...)
	if err != nil {
		return cell, err
	}
	defer func() { _ = stopB() }()
	// B up and beating (its process start), A's request long sent.
	sleepCtx(ctx, time.Second)
	if len(emu.Messages(killChat)) != 0 {
		return cell, errors.New("the message was accepted before the kill: the held send was not A's")
	}
	a := cmdsA[0]
	killed := time.Now()
	if err := a.Process.Kill(); err != nil {
		return cell, fmt.Errorf("kill -9: %w", err)
	}
	if _, err := emu.WaitForTotalMessages(wctx, 1); err != nil {
		return cell, fmt.Errorf("no resend within 10 s of the kill (liveness %v): %w", consumer.DefaultLivenessTTL, err)
	}
	msgs := emu.Messages(killChat)
	cell.resent = msgs[0].Time.Sub(killed)
	for _, r := range emu.Requests() {
		if strings.EqualFold(r.Method, "sendMessage") && r.ChatID == killChat {
			cell.sends++
		}
	}
	var ee *exec.ExitError
	if err := stopA(); err != nil && !errors.As(err, &ee) {
		return cell, fmt.Errorf("worker A: %w", err)
	}
	return cell, nil
}
