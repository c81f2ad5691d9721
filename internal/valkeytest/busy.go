package valkeytest

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BusyScript is a read-only Lua loop that ends by itself after ARGV[1] ms
// (TIME in microseconds), if SCRIPT KILL has not ended it before: what
// Busy runs, and what a test that makes a server of its own busy (the
// chaos run's BUSY fault) runs with EVAL, 0 keys.
const BusyScript = `local t = redis.call('TIME')
local stop = tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[1]) * 1000
while true do
  t = redis.call('TIME')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) >= stop then return 0 end
end`

// busyBound is how long Busy's script runs at most when its end is never
// called.
const busyBound = time.Minute

// Busy makes s (a standalone server the test owns: Start) busy as a
// long-running script makes it: a read-only Lua loop runs on it, from a
// client of its own, with busy-reply-threshold set to threshold (ms
// precision), so for threshold every other command waits, then is answered
// "BUSY Valkey is busy running a script ...". It returns once a PING no
// longer gets an answer within 100 ms (BUSY, or no answer yet); end stops
// the script (SCRIPT KILL, which waits out the threshold), restores
// busy-reply-threshold and returns once a PING is answered again (a
// script that ended by itself before is an error of the test). end
// runs when the test ends if the test has not called it; the script ends
// by itself after a minute anyway.
func Busy(tb testing.TB, s *Server, threshold time.Duration) (end func()) {
	tb.Helper()
	ctx := context.Background()
	c, runner, killer := s.Client(tb), s.Client(tb), s.Client(tb) // killer: connected before the server is busy
	prev, err := c.Do(ctx, c.B().ConfigGet().Parameter("busy-reply-threshold").Build()).AsStrMap()
	if err != nil {
		tb.Fatalf("valkeytest: Busy: CONFIG GET busy-reply-threshold: %v", err)
	}
	set := func(v string) error {
		return c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("busy-reply-threshold", v).Build()).Error()
	}
	if err := set(strconv.FormatInt(threshold.Milliseconds(), 10)); err != nil {
		tb.Fatalf("valkeytest: Busy: CONFIG SET busy-reply-threshold: %v", err)
	}
	ended := make(chan error, 1)
	go func() {
		ms := strconv.FormatInt(busyBound.Milliseconds(), 10)
		ended <- runner.Do(ctx, runner.B().Eval().Script(BusyScript).Numkeys(0).Arg(ms).Build()).Error()
	}()
	answered := func() bool {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		return c.Do(pctx, c.B().Ping().Build()).Error() == nil
	}
	deadline := time.Now().Add(busyBound / 2)
	for answered() {
		if time.Now().After(deadline) {
			tb.Fatalf("valkeytest: Busy: the server still answers PING %v after the script was sent", busyBound/2)
		}
		time.Sleep(10 * time.Millisecond)
	}
	done := false
	end = func() {
		tb.Helper()
		if done {
			return
		}
		done = true
		// SCRIPT KILL until the script ends: a call on a connection whose
		// probe PING timed out may fail, and SCRIPT KILL before the
		// threshold waits it out.
		var kill error
	wait:
		for deadline := time.Now().Add(busyBound); time.Now().Before(deadline); {
			kill = killer.Do(ctx, killer.B().ScriptKill().Build()).Error()
			select {
			case err := <-ended:
				if err == nil {
					tb.Errorf("valkeytest: Busy: the script ended by itself (SCRIPT KILL: %v)", kill)
				}
				break wait
			case <-time.After(50 * time.Millisecond):
			}
		}
		if err := killer.Do(ctx, killer.B().ConfigSet().ParameterValue().ParameterValue("busy-reply-threshold", prev["busy-reply-threshold"]).Build()).Error(); err != nil {
			tb.Errorf("valkeytest: Busy: end: restore busy-reply-threshold: %v (SCRIPT KILL: %v)", err, kill)
		}
		for !answered() {
			time.Sleep(10 * time.Millisecond)
		}
	}
	tb.Cleanup(end)
	return end
}
