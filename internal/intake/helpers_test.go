package intake_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// newInbox returns an inbox and a lease of this process on the shared
// server, in a namespace of the test's own.
func newInbox(t *testing.T) (*intake.Inbox, *intake.Lease) {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	tag := valkeytest.Namespace(t)
	return intake.NewInbox(c, tag), intake.NewLease(c, tag, 3*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// update is an update as getUpdates returns it.
func update(id int64) intake.Update {
	return intake.Update{ID: id, JSON: json.RawMessage(`{"update_id":` + strconv.FormatInt(id, 10) + `}`)}
}
