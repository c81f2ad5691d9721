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

// Every claimer's ShareFloor answers the smallest floor published by any
// claimer of the store (its own included), so a far claimer settles with
// the near one's floor; a claimer that knows no floor (0) publishes
// nothing and reads the others'; a store with another tag shares nothing.
func TestShareFloorAnswersTheSmallestFloorOfTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	other := newStore(t) // another tag
	for _, step := range []struct {
		claimer string
		floor   time.Duration
		want    time.Duration
	}{
		{"fresh", 0, 0}, // nothing published yet
		{"far", 1040 * time.Millisecond, 1040 * time.Millisecond},
		{"near", 40 * time.Millisecond, 40 * time.Millisecond},
		{"far", 1040 * time.Millisecond, 40 * time.Millisecond},
		{"fresh", 0, 40 * time.Millisecond},
		{"mid", 300 * time.Millisecond, 40 * time.Millisecond},
		{"near", 25 * time.Millisecond, 25 * time.Millisecond}, // a faster answer lowers it at once
		{"far", 1040 * time.Millisecond, 25 * time.Millisecond},
	} {
		got, err := s.ShareFloor(ctx, step.claimer, step.floor)
		require.NoError(t, err)
		require.Equal(t, step.want, got, "%s publishing %v", step.claimer, step.floor)
	}
	got, err := other.ShareFloor(ctx, "far", 1040*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 1040*time.Millisecond, got, "another tag's floors are not this store's")

	keys, err := valkeytest.Keys(ctx, s.Client(), s.Keys().Shared("floor:*"))
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	members := map[string]bool{}
	for _, k := range keys {
		for _, m := range rstrs(t, s, "ZRANGE", k, "0", "-1") {
			members[m] = true
		}
	}
	require.Equal(t, map[string]bool{"far": true, "near": true, "mid": true}, members, "a claimer with floor 0 published nothing")
}

// A claimer that stops publishing (it died) counts until its epoch's set
// expires: still for every call within one epoch of its last, never after
// two epochs; the live claimers then get their own floors back. The sets
// stay bounded: at most the current and the previous epoch's exist, each
// with a TTL of at most two epochs.
func TestSharedFloorOfAStoppedClaimerExpiresWithinTwoEpochs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const epoch = 200 * time.Millisecond
	s := newStore(t, lanes.WithFloorEpoch(epoch))
	live := sibling(t, s, lanes.WithFloorEpoch(epoch))
	_, err := live.ShareFloor(ctx, "live", 300*time.Millisecond)
	require.NoError(t, err)
	// The dead claimer's floor is written between asked and published:
	// a read that ends less than an epoch after asked is within an epoch
	// of the write (it must see it), one that starts more than two epochs
	// after published is over two epochs after it (it must not).
	asked := time.Now()
	got, err := s.ShareFloor(ctx, "dead", 40*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 40*time.Millisecond, got)
	published := time.Now()

	sawOwn := false
	for time.Since(published) < 6*epoch {
		t0 := time.Now()
		got, err := live.ShareFloor(ctx, "live", 300*time.Millisecond)
		require.NoError(t, err)
		since := t0.Sub(published)
		switch {
		case time.Since(asked) < epoch:
			require.Equal(t, 40*time.Millisecond, got, "%v after the dead claimer's last call", since)
		case since > 2*epoch+50*time.Millisecond: // 50 ms: the host clock against the server's
			require.Equal(t, 300*time.Millisecond, got, "%v after the dead claimer's last call", since)
			sawOwn = true
		}
		keys, err := valkeytest.Keys(ctx, s.Client(), s.Keys().Shared("floor:*"))
		require.NoError(t, err)
		require.LessOrEqual(t, len(keys), 3, "epoch sets %v", keys) // the current, the previous, one about to expire
		for _, k := range keys {
			require.True(t, strings.HasPrefix(k, s.Keys().Tag()+":s:floor:"))
			ttl, err := rdo(t, s, "PTTL", k).AsInt64()
			require.NoError(t, err)
			require.LessOrEqual(t, ttl, (2 * epoch).Milliseconds(), "%s", k)
			require.GreaterOrEqual(t, ttl, int64(-2), "%s has no expiry", k) // -2: expired between the two calls
			require.NotEqual(t, int64(-1), ttl, "%s has no expiry", k)
		}
		time.Sleep(epoch / 8)
	}
	require.True(t, sawOwn)
}

// ShareFloor refuses an empty or too long claimer and a floor outside
// 0..MaxFloor with ErrInvalid, writing nothing; WithFloorEpoch refuses
// epochs outside 100ms..1h.
func TestShareFloorRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	for name, tc := range map[string]struct {
		claimer string
		floor   time.Duration
	}{
		"empty claimer":    {"", time.Millisecond},
		"claimer too long": {strings.Repeat("c", lanes.MaxClaimerBytes+1), time.Millisecond},
		"negative floor":   {"c", -time.Millisecond},
		"floor over max":   {"c", lanes.MaxFloor + time.Millisecond},
	} {
		_, err := s.ShareFloor(ctx, tc.claimer, tc.floor)
		require.ErrorIs(t, err, lanes.ErrInvalid, name)
	}
	keys, err := valkeytest.Keys(ctx, s.Client(), s.Keys().Pattern())
	require.NoError(t, err)
	require.Empty(t, keys)
	for _, d := range []time.Duration{0, 99 * time.Millisecond, time.Hour + time.Millisecond} {
		_, err := lanes.New(s.Client(), lanes.WithFloorEpoch(d))
		require.ErrorIs(t, err, lanes.ErrInvalid, "epoch %v", d)
	}
}
