package app

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

// With VALKEY_WAIT_REPLICAS=1 every record of updates waits for the
// replica (intake.ReplicaWait): the bot answers as usual while the replica
// keeps up, none falling short; with the replica frozen each record waits
// VALKEY_WAIT_TIMEOUT, is confirmed anyway and counted in
// codemojex_intake_replica_wait_short_total, logged at WARN, and the bot
// keeps answering (an update is handled once it is on the queue: only its
// confirmation to Telegram waits).
func TestUpdatesWaitForTheReplicaAndGoOnWithoutIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	primary, replica := valkeytest.StartReplicated(t)
	h.onServer(primary)
	r := h.start([]string{"VALKEY_WAIT_REPLICAS=1", "VALKEY_WAIT_TIMEOUT=200ms"})
	from := models.User{ID: 5001, FirstName: "Ada", LanguageCode: "en"}
	require.NotEmpty(t, h.ask(0, from, "/help"))
	require.Equal(t, "0", h.metric(r, "codemojex_intake_replica_wait_short_total"), "the replica kept up")

	require.NoError(t, replica.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = replica.Signal(syscall.SIGCONT) })
	require.NotEmpty(t, h.ask(0, from, "/help"), "answered without the replica")
	// (Handled as soon as it is on the queue: only its confirmation to
	// Telegram waits, the wait's 200 ms.)
	require.Eventually(t, func() bool { return h.metric(r, "codemojex_intake_replica_wait_short_total") != "0" }, wait, 20*time.Millisecond)
	require.Contains(t, h.logs.String(), "updates confirmed to Telegram before enough Valkey replicas acknowledged them")
}

// A start with VALKEY_WAIT_REPLICAS above the replicas that acknowledge a
// write (2, with one replica) is warned of at once, naming both counts:
// every record of updates would wait its whole timeout.
func TestAStartWaitingForMoreReplicasThanThereAreIsWarned(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	primary, _ := valkeytest.StartReplicated(t)
	h.onServer(primary)
	h.start([]string{"VALKEY_WAIT_REPLICAS=2", "VALKEY_WAIT_TIMEOUT=200ms"})
	require.Eventually(t, func() bool {
		return strings.Contains(h.logs.String(), "VALKEY_WAIT_REPLICAS names more replicas than acknowledged a write at start")
	}, wait, 20*time.Millisecond)
	// (acked=1 on a quiet host; 0 when the one replica took longer than
	// the 200 ms on a busy one: either is fewer than it names.)
	require.Regexp(t, `wait_replicas=2 acked=[01] `, h.logs.String())
}
