package game

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
)

// idBytes is the number of random bytes of a game ID (hex-encoded, so an ID
// is 16 characters).
const idBytes = 8

// source returns rng, or crypto/rand.Reader when rng is nil.
func source(rng io.Reader) io.Reader {
	if rng == nil {
		return rand.Reader
	}
	return rng
}

// randIndex returns a uniform integer in [0, n), 1 ≤ n ≤ 256, reading bytes
// from rng and rejecting those at or above the largest multiple of n (so
// there is no modulo bias).
func randIndex(rng io.Reader, n int) (int, error) {
	limit := 256 - 256%n
	var b [1]byte
	for {
		if _, err := io.ReadFull(rng, b[:]); err != nil {
			return 0, fmt.Errorf("read randomness: %w", err)
		}
		if int(b[0]) < limit {
			return int(b[0]) % n, nil
		}
	}
}

// randomID returns a fresh game ID: idBytes bytes of rng, hex-encoded.
func randomID(rng io.Reader) (string, error) {
	var b [idBytes]byte
	if _, err := io.ReadFull(rng, b[:]); err != nil {
		return "", fmt.Errorf("read randomness: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
