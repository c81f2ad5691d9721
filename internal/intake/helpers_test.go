package intake_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// newInbox returns an inbox (its update queue on a store of the intake's
// options) and a lease of this process on the shared server, in a
// namespace of the test's own.
func newInbox(t *testing.T) (*intake.Inbox, *intake.Lease) {
	t.Helper()
	c := valkeyClient(t)
	tag := valkeytest.Namespace(t)
	store, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(tag))...)
	require.NoError(t, err)
	return intake.NewInbox(c, store, tag), intake.NewLease(c, tag, 3*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// valkeyClient is a client of the shared server.
func valkeyClient(t *testing.T) valkey.Client {
	t.Helper()
	return valkeytest.Shared(t).Client(t)
}

// update is an update as getUpdates returns it (no chat: lane "0").
func update(id int64) intake.Update {
	return intake.Update{ID: id, JSON: json.RawMessage(`{"update_id":` + strconv.FormatInt(id, 10) + `}`)}
}

// lanesNewest asks for the n newest dead letters.
func lanesNewest(n int) lanes.DeadQuery { return lanes.DeadQuery{Newest: n} }
