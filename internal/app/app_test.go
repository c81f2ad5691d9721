package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/worker"
)

// TestWorkersCapIsTheWorkersOwn: the highest WORKERS config accepts is
// the cap the worker applies to the senders app.New hands it, so a value
// config lets through is never cut silently (and the README's range is
// the worker's).
func TestWorkersCapIsTheWorkersOwn(t *testing.T) {
	require.Equal(t, worker.MaxSenders, config.MaxWorkers)
}
