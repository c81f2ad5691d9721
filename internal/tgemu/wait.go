package tgemu

import (
	"context"
	"fmt"
	"strings"
)

// broadcastLocked wakes everything waiting for a state change (wait
// helpers, long polls) by closing the current change channel.
func (e *Emulator) broadcastLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// WaitUntil blocks until cond returns true, ctx ends or the emulator closes.
// cond is evaluated now and after every state change (a message sent or
// edited, an update queued, a request recorded, ...), never by polling on a
// timer; it runs without the emulator's lock and may call its getters.
func (e *Emulator) WaitUntil(ctx context.Context, cond func() bool) error {
	return e.wait(ctx, cond, e.closed)
}

// wait is WaitUntil, giving up with ErrClosed when closed is closed (nil:
// never).
func (e *Emulator) wait(ctx context.Context, cond func() bool, closed <-chan struct{}) error {
	for {
		e.mu.Lock()
		changed := e.changed
		e.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("tgemu: wait: %w", ctx.Err())
		case <-closed:
			return ErrClosed
		}
	}
}

// WaitForMessages blocks until the bot has sent at least n messages to
// chatID (or ctx ends, or the emulator closes) and returns the chat's
// messages at that moment. On failure it returns what had arrived with an
// error wrapping ctx.Err() or ErrClosed.
func (e *Emulator) WaitForMessages(ctx context.Context, chatID int64, n int) ([]Message, error) {
	var got []Message
	err := e.WaitUntil(ctx, func() bool {
		got = e.Messages(chatID)
		return len(got) >= n
	})
	if err != nil {
		return got, fmt.Errorf("tgemu: chat %d got %d of %d messages: %w", chatID, len(got), n, err)
	}
	return got, nil
}

// WaitForTotalMessages blocks until the bot has sent at least n messages
// over all chats and returns them ordered by time.
func (e *Emulator) WaitForTotalMessages(ctx context.Context, n int) ([]Message, error) {
	var got []Message
	err := e.WaitUntil(ctx, func() bool {
		got = e.AllMessages()
		return len(got) >= n
	})
	if err != nil {
		return got, fmt.Errorf("tgemu: got %d of %d messages: %w", len(got), n, err)
	}
	return got, nil
}

// WaitForEdits blocks until message messageID in chatID has at least n
// edits and returns the message.
func (e *Emulator) WaitForEdits(ctx context.Context, chatID int64, messageID, n int) (Message, error) {
	var got Message
	err := e.WaitUntil(ctx, func() bool {
		for _, m := range e.Messages(chatID) {
			if m.ID == messageID {
				got = m
				return len(m.Edits) >= n
			}
		}
		return false
	})
	if err != nil {
		return got, fmt.Errorf("tgemu: message %d in chat %d got %d of %d edits: %w", messageID, chatID, len(got.Edits), n, err)
	}
	return got, nil
}

// WaitForRequests blocks until at least n requests of method (any case;
// "" for all) were recorded and returns them.
func (e *Emulator) WaitForRequests(ctx context.Context, method string, n int) ([]Request, error) {
	var got []Request
	err := e.WaitUntil(ctx, func() bool {
		got = e.requestsFor(strings.ToLower(method))
		return len(got) >= n
	})
	if err != nil {
		return got, fmt.Errorf("tgemu: got %d of %d %q requests: %w", len(got), n, method, err)
	}
	return got, nil
}
