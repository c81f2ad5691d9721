package lanes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// Bad options fail New with ErrInvalid.
func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	cases := map[string]lanes.Option{
		"tag with {":            lanes.WithTag("a{b"),
		"tag with }":            lanes.WithTag("a}b"),
		"tag with :":            lanes.WithTag("a:b"),
		"empty tag":             lanes.WithTag(""),
		"tag over 64":           lanes.WithTag(strings.Repeat("t", 65)),
		"tag non-ASCII":         lanes.WithTag("é"),
		"max payload 0":         lanes.WithMaxPayload(0),
		"max payload negative":  lanes.WithMaxPayload(-1),
		"queue empty name":      lanes.WithQueue("", lanes.QueueConfig{}),
		"queue name with :":     lanes.WithQueue("a:b", lanes.QueueConfig{}),
		"queue name over 64":    lanes.WithQueue(strings.Repeat("q", 65), lanes.QueueConfig{}),
		"queue lane limit < 0":  lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: -1}),
		"queue attempts < 0":    lanes.WithQueue("q", lanes.QueueConfig{MaxAttempts: -1}),
		"global rate < 0":       lanes.WithGlobalRate(-1, time.Second),
		"global window 0":       lanes.WithGlobalRate(30, 0),
		"global window < 1ms":   lanes.WithGlobalRate(30, time.Microsecond),
		"pace limit < 0":        lanes.WithLanePace(lanes.Pace{Limit: -1, Period: time.Second}),
		"pace period 0":         lanes.WithLanePace(lanes.Pace{Limit: 1}),
		"pace rule bad":         lanes.WithLanePace(lanes.Pace{}, lanes.PaceRule{Prefix: "-", Pace: lanes.Pace{Limit: 1, Period: -time.Second}}),
		"global window < 0":     lanes.WithGlobalRate(0, -time.Second),
		"pace period < 0":       lanes.WithLanePace(lanes.Pace{Period: -time.Second}),
		"maintenance budget 0":  lanes.WithBudgets(0, 1),
		"visit budget 0":        lanes.WithBudgets(1, 0),
		"visit budget negative": lanes.WithBudgets(1, -5),
	}
	for name, opt := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := lanes.New(c, opt)
			require.ErrorIs(t, err, lanes.ErrInvalid)
			require.Nil(t, s)
		})
	}
}

// The default payload limit is 64 KiB.
func TestDefaultPayloadLimitIs64KiB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: m.New(), Payload: make([]byte, lanes.DefaultMaxPayload+1)}})
	require.ErrorIs(t, err, lanes.ErrInvalid)
	require.Empty(t, tagKeys(t, s))
	res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: m.New(), Payload: make([]byte, lanes.DefaultMaxPayload)}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added)
}

// A tag (as a queue name) is 1-64 of [A-Za-z0-9._-] and nothing else: no
// braces, spaces, colons or non-ASCII bytes.
func TestValidTagIsOneToSixtyFourNameBytes(t *testing.T) {
	for tag, ok := range map[string]bool{
		"codemojex": true, "A.b_c-9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a b": false, "{x}": false, "a:b": false, "ü": false, "a/b": false, "a\x00": false,
	} {
		require.Equal(t, ok, lanes.ValidTag(tag), "%q", tag)
	}
}
