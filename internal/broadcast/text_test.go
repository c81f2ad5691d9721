package broadcast

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
)

// A paid broadcast's mode line says "so far" only while copies remain:
// once done, what it cost; halted, why; moved to free, how many.
func TestModeTextSaysSoFarOnlyWhileCopiesRemain(t *testing.T) {
	tests := []struct {
		name string
		p    notifier.Progress
		want string
	}{
		{"running", notifier.Progress{Paid: true, Total: 50, Sent: 30, PaidSent: 30, Remaining: 20}, "💫 Paid: 30 copies, 3.0 Stars so far"},
		{"done", notifier.Progress{Paid: true, Total: 50, Sent: 50, PaidSent: 50}, "💫 Paid: 50 copies, 5.0 Stars"},
		{"halted", notifier.Progress{Paid: true, Halted: true, Total: 50, Sent: 10, PaidSent: 10, Remaining: 40},
			"💫 Paid, halted (the bot cannot pay): 10 copies paid, 1.0 Stars so far"},
		{"halted, then stopped", notifier.Progress{Paid: true, Halted: true, Stopped: true, Total: 50, Sent: 10, PaidSent: 10, Cancelled: 40},
			"💫 Paid: 10 copies, 1.0 Stars"},
		{"then free", notifier.Progress{Paid: true, Free: true, Total: 50, Sent: 50, PaidSent: 10, Moved: 40},
			"💫 Paid, then free: 10 copies paid (1.0 Stars), 40 moved to free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, modeText(tt.p))
		})
	}
}

// The paid preview's balance line offers "the first N paid" only when the
// balance covers at least one copy.
func TestBalanceTextOffersThePaidPartOnlyWhenItCoversACopy(t *testing.T) {
	require.Equal(t, "The bot's Stars balance: 0.0 Stars, not enough for one paid copy of the 3, so Send paid is not offered; "+
		"add Stars and send /broadcast again, or send it free.", BalanceText(0, 3))
	require.Equal(t, "The bot's Stars balance: 0.2 Stars, not enough: it pays for 2 of the 3 copies, so Send paid is not offered; "+
		"send the first 2 paid and the rest free, add Stars and send /broadcast again, or send it free.", BalanceText(2, 3))
	require.Equal(t, "The bot's Stars balance: 0.3 Stars, enough for it.", BalanceText(3, 3))
}

// TestAStoppedPaidBroadcastsProgressSaysWhatItCost: the progress message
// of a paid broadcast that was stopped (halted first, or not) ends with
// its paid line, the copies sent paid and their Stars, as a done one's
// does; a stopped free broadcast's has none. (Its last edit is the text
// the admin keeps: chaos seed 28 showed only an older "650 copies" line.)
func TestAStoppedPaidBroadcastsProgressSaysWhatItCost(t *testing.T) {
	tests := []struct {
		name string
		p    notifier.Progress
		want string
	}{
		{"halted, then stopped", notifier.Progress{ID: "bc_x", Paid: true, Halted: true, Stopped: true, StopFinished: true, StopCounted: true, StopSent: 2497, Total: 5071, Sent: 2497, PaidSent: 2497, Cancelled: 2574},
			"🛑 Broadcast stopped: 2497 sent before the stop, 0 failed, 2574 cancelled of 5071\n💫 Paid: 2497 copies, 249.7 Stars"},
		{"stopped while paid", notifier.Progress{ID: "bc_x", Paid: true, Stopped: true, StopFinished: true, StopCounted: true, StopSent: 30, Total: 50, Sent: 30, PaidSent: 30, Cancelled: 20},
			"🛑 Broadcast stopped: 30 sent before the stop, 0 failed, 20 cancelled of 50\n💫 Paid: 30 copies, 3.0 Stars"},
		{"stopped free", notifier.Progress{ID: "bc_x", Stopped: true, StopFinished: true, StopCounted: true, StopSent: 30, Total: 50, Sent: 30, Cancelled: 20},
			"🛑 Broadcast stopped: 30 sent before the stop, 0 failed, 20 cancelled of 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, progressText(tt.p))
		})
	}
}
