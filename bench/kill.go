package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

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
// code), so this uses the bench's own worker role. The updates' side
// (killUpdateRun) runs the real bot (cmd/bot) as a poller and two handler
// processes.
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
	return benchKillUpdates(ctx, cfg, srv, t)
}

// benchKillUpdates is the updates' row: killRuns kills of a handler
// process with an update in flight (killUpdateRun).
func benchKillUpdates(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	dir, err := os.MkdirTemp("", "codemojex-kill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := buildBot(ctx, cfg.repo, dir)
	if err != nil {
		return err
	}
	d := make([]time.Duration, 0, killRuns)
	answers := 0
	for i := range killRuns {
		c, err := killUpdateRun(ctx, srv, bin, dir, i)
		if err != nil {
			return fmt.Errorf("handler kill %d: %w", i+1, err)
		}
		cfg.log.Info("kill handler", "run", i+1, "handled again after", c.resent, "answers", c.sends)
		d, answers = append(d, c.resent), answers+c.sends
	}
	all := make([]string, len(d))
	for i, x := range d {
		all[i] = ms(x)
	}
	slices.Sort(d)
	p50, p100 := percentile(d, 0.5), d[len(d)-1]
	t.add(fmt.Sprintf("kill -9 of a handler process (the real bot, `BOT_ROLE=handler`) whose update is in flight (its tap's answerCallbackQuery held by Telegram), a second handler running: kill -> the update handled again (the tap answered), p50 / p100 over %d kills (answerCallbackQuery requests: %d, the held ones included) vs `HANDLER_LEASE`'s default",
		killRuns, answers), fmt.Sprintf("%s / %s", ms(p50), ms(p100)), "limit: "+ms(30*time.Second),
		fmt.Sprintf("p100 %s; goal p100 ≤ 3 s: %s", ratio(p100.Seconds(), 30), verdict(p100 <= 3*time.Second)))
	t.note("Each handler kill's time to the update handled again, in order: " + strings.Join(all, ", ") + ".")
	return nil
}

// killUpdateChat is the chat whose tap the handler kill holds.
const killUpdateChat = int64(4343)

// killUpdateRun is one handler kill (run numbers the tag): the real bot as
// a poller and handler A, on a flushed server and a fresh emulator that
// holds the first answerCallbackQuery 60 s (Telegram has not taken it: A's
// handling of the tap is in flight); a tap is injected, handler B starts
// once A's answer is held, and 1 s later A gets SIGKILL. Figure: the kill
// to the emulator's processing of an answer to that tap (B's).
func killUpdateRun(ctx context.Context, srv *valkeyserver.Server, bin, dir string, run int) (killCell, error) {
	var cell killCell
	emu, err := killEmulator(ctx, srv, tgemu.Fault{Kind: tgemu.FaultDelay, Method: "answerCallbackQuery", Delay: killHold})
	if err != nil {
		return cell, err
	}
	defer emu.Close()
	tag := "killu" + strconv.Itoa(run)
	var procs []*botProc
	defer func() {
		for _, p := range procs {
			_ = p.stop()
		}
	}()
	start := func(name, role string) (*botProc, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p, err := startBotProc(bin, dir, name, []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(),
			"VALKEY_URL=" + srv.URL, "VALKEY_KEY_TAG=" + tag, "BOT_ROLE=" + role, "LOG_LEVEL=warn", "HTTP_ADDR=" + addr})
		if err == nil {
			procs = append(procs, p)
		}
		return p, err
	}
	if _, err := start("poller", "poller"); err != nil {
		return cell, err
	}
	a, err := start("handler A", "handler")
	if err != nil {
		return cell, err
	}
	u := emu.InjectUpdate(models.Update{CallbackQuery: &models.CallbackQuery{ID: "tap" + strconv.Itoa(run),
		From: models.User{ID: killUpdateChat, FirstName: "Tapper"}, ChatInstance: "1", Data: "noop",
		Message: models.MaybeInaccessibleMessage{Type: models.MaybeInaccessibleMessageTypeInaccessibleMessage,
			InaccessibleMessage: &models.InaccessibleMessage{Chat: models.Chat{ID: killUpdateChat, Type: models.ChatTypePrivate}, MessageID: 1}}}})
	answers := func() (held, done int, at time.Time) {
		for _, r := range emu.Requests() {
			if !strings.EqualFold(r.Method, "answerCallbackQuery") {
				continue
			}
			held++
			if !r.Canceled && r.HTTPStatus == 200 && done == 0 {
				done, at = 1, r.Time
			}
		}
		return held, done, at
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// A's answer is held once it took the fault: the emulator has it,
	// unprocessed (A's handler waits on it, at most callbackAnswerBudget,
	// 5 s, in internal/app).
	for emu.PendingFaults() > 0 {
		if err := errors.Join(wctx.Err(), a.failure()); err != nil {
			return cell, fmt.Errorf("waiting for A to answer tap %d: %w", u.ID, err)
		}
		sleepCtx(wctx, 5*time.Millisecond)
	}
	if _, err := start("handler B", "handler"); err != nil {
		return cell, err
	}
	sleepCtx(ctx, time.Second) // B up and beating
	killed := time.Now()
	if err := a.cmd.Process.Kill(); err != nil {
		return cell, fmt.Errorf("kill -9: %w", err)
	}
	for {
		held, done, at := answers()
		if done > 0 {
			cell.resent, cell.sends = at.Sub(killed), held
			return cell, nil
		}
		if wctx.Err() != nil {
			return cell, fmt.Errorf("the tap was not answered again within 20 s (liveness %v; answers %d)", consumer.DefaultLivenessTTL, held)
		}
		sleepCtx(wctx, 5*time.Millisecond)
	}
}

// killEmulator flushes srv and returns a fresh emulator at Telegram's
// limits with hold injected (the request a kill leaves in flight). The
// caller closes it. Errors: the flush's, the emulator's.
func killEmulator(ctx context.Context, srv *valkeyserver.Server, hold tgemu.Fault) (*tgemu.Emulator, error) {
	if err := flush(ctx, srv); err != nil {
		return nil, err
	}
	emu, err := tgemu.New(tgemu.WithLimits(tgemu.DefaultLimits()), tgemu.WithAllowAnyChat())
	if err != nil {
		return nil, err
	}
	emu.InjectFault(hold)
	return emu, nil
}

// killRun is one kill; run numbers the tag.
func killRun(ctx context.Context, srv *valkeyserver.Server, run int) (killCell, error) {
	var cell killCell
	emu, err := killEmulator(ctx, srv, tgemu.Fault{Kind: tgemu.FaultDelay, Method: "sendMessage", ChatID: killChat, Delay: killHold})
	if err != nil {
		return cell, err
	}
	defer emu.Close()
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
