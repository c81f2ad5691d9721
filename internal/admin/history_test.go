package admin

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The history stream keeps one sample a period however many consoles
// write it (a second write of a period, or of an earlier one, writes
// nothing), reads back oldest first from a time on, and holds at most
// HistoryCap samples, the latest.
func TestHistoryKeepsOneSampleAPeriodAndIsCapped(t *testing.T) {
	t.Parallel()
	ad := newAdmin(t)
	ctx := context.Background()
	t0 := time.UnixMilli(time.Now().Truncate(time.Minute).UnixMilli())
	ok, err := ad.RecordSample(ctx, t0, "a")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = ad.RecordSample(ctx, t0, "b")
	require.NoError(t, err)
	require.False(t, ok, "the same period again: another console wrote it")
	ok, err = ad.RecordSample(ctx, t0.Add(-time.Minute), "c")
	require.NoError(t, err)
	require.False(t, ok, "an earlier period")
	ok, err = ad.RecordSample(ctx, t0.Add(time.Minute), "d")
	require.NoError(t, err)
	require.True(t, ok)
	got, err := ad.History(ctx, time.Time{})
	require.NoError(t, err)
	require.Equal(t, []Sample{{At: t0, P: "a"}, {At: t0.Add(time.Minute), P: "d"}}, got)
	got, err = ad.History(ctx, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, []Sample{{At: t0.Add(time.Minute), P: "d"}}, got, "from a time on")

	for i := range HistoryCap + 10 {
		_, err := ad.RecordSample(ctx, t0.Add(time.Duration(2+i)*time.Minute), strconv.Itoa(i))
		require.NoError(t, err)
	}
	got, err = ad.History(ctx, time.Time{})
	require.NoError(t, err)
	require.Len(t, got, HistoryCap)
	require.Equal(t, strconv.Itoa(HistoryCap+9), got[len(got)-1].P, "the latest kept")
	require.Equal(t, "10", got[0].P, "the oldest dropped")
}
