package admin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"
)

// HistoryCap is how many samples the history stream keeps: 24 hours at
// one a minute (XADD MAXLEN, exact).
const HistoryCap = 24 * 60

// Sample is one entry of the history stream: its period's start and its
// payload (opaque here: the console's JSON).
type Sample struct {
	At time.Time
	P  string
}

// RecordSample appends the sample of the period starting at (ms
// precision) to the history stream ({T}:app:hist), kept to HistoryCap
// samples, unless a sample of that period or a later one is there
// already (another console wrote it): then it reports false and writes
// nothing, so however many consoles run there is one sample a period.
// Errors: the server's.
func (ad *Admin) RecordSample(ctx context.Context, at time.Time, p string) (bool, error) {
	c := ad.audit.c
	id := strconv.FormatInt(at.UnixMilli(), 10) + "-0"
	err := c.Do(ctx, c.B().Xadd().Key(ad.audit.keys.History()).Maxlen().Threshold(strconv.Itoa(HistoryCap)).Id(id).
		FieldValue().FieldValue("p", p).Build()).Error()
	if err != nil && strings.Contains(err.Error(), "equal or smaller") {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("admin: history: %w", err)
	}
	return true, nil
}

// History returns the history stream's samples from since on (at most
// HistoryCap), oldest first. Errors: the server's.
func (ad *Admin) History(ctx context.Context, since time.Time) ([]Sample, error) {
	c := ad.audit.c
	es, err := c.Do(ctx, c.B().Xrevrange().Key(ad.audit.keys.History()).End("+").Start(strconv.FormatInt(max(since.UnixMilli(), 0), 10)).
		Count(HistoryCap).Build()).AsXRange()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("admin: history: %w", err)
	}
	out := make([]Sample, 0, len(es))
	for _, e := range es {
		ms, _, _ := strings.Cut(e.ID, "-")
		n, _ := strconv.ParseInt(ms, 10, 64)
		out = append(out, Sample{At: time.UnixMilli(n), P: e.FieldValues["p"]})
	}
	slices.Reverse(out)
	return out, nil
}
