package worker

import (
	"sync"
	"time"
)

// ClaimState is what a worker's claims have done lately, for a health check
// (internal/health): a worker that cannot claim sends nothing, while Valkey
// may still answer a ping (a READONLY replica, OOM, a script refused).
type ClaimState struct {
	// LastOK is when the last claim that succeeded was answered (one that
	// claimed nothing counts: the store answered); zero before the first.
	LastOK time.Time
	// FailingSince is when the first of the claims failing since then was
	// answered (zero while the last claim succeeded, or before any failed).
	FailingSince time.Time
	// LastErr is the last failed claim's error, redacted ("" while
	// FailingSince is zero).
	LastErr string
}

// The whys of the worker's global pauses (PauseState.Why, and the pause's
// why every process reads with lanes.Inspector.Paused).
const (
	// WhyUnauthorized: a 401 from Telegram (the token revoked or wrong):
	// nothing can be sent until it is fixed; the pause is
	// Config.UnauthorizedPause, renewed by the next 401.
	WhyUnauthorized = "401 unauthorized"
	// WhyFlood: 429s from several chats at once, a global flood signal;
	// the pause is its retry_after.
	WhyFlood = "429 from several chats"
	// WhyProbe: a 429 while the probed global budget ran above the last
	// rate that held (lanes Store.RevertProbe): not a pause, the budget
	// goes back to that rate.
	WhyProbe = "429 while probing"
)

// PauseState is the last global pause this worker put on the store (see
// Worker.pauseAll): after a 401 Unauthorized, or a flood signal from several
// chats.
type PauseState struct {
	At  time.Time     // when it was written (zero: none)
	For time.Duration // how long it was asked for (Config.UnauthorizedPause, a retry_after)
	Why string        // "401 unauthorized", "429 from several chats"
}

// state is the worker's ClaimState and PauseState, written by the claim
// loop and the senders, read by health checks (safe for concurrent use).
type state struct {
	mu     sync.Mutex
	claims ClaimState
	pause  PauseState
}

// claimed records a claim's answer, received at now: err nil is a claim
// that succeeded, else msg is its redacted error.
func (s *state) claimed(now time.Time, err error, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.claims = ClaimState{LastOK: now}
		return
	}
	if s.claims.FailingSince.IsZero() {
		s.claims.FailingSince = now
	}
	s.claims.LastErr = msg
}

func (s *state) paused(p PauseState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pause = p
}

// Claims returns what the worker's claims have done lately (see
// ClaimState); zero before Run's first claim is answered.
func (w *Worker) Claims() ClaimState {
	w.state.mu.Lock()
	defer w.state.mu.Unlock()
	return w.state.claims
}

// LastPause returns the last global pause this worker put on the store
// (zero: none). Whether the store is still paused, by anyone, is
// lanes.Inspector.Paused's to say.
func (w *Worker) LastPause() PauseState {
	w.state.mu.Lock()
	defer w.state.mu.Unlock()
	return w.state.pause
}
