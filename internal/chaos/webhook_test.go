package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// hookFigures are a webhook run's deliveries (tgemu WebhookDeliveries),
// all 0 in a polling run and in runs recorded before webhook runs.
type hookFigures struct {
	// Deliveries is every POST of an update; Failed those not answered
	// 2xx (refused, timed out, or another status: Telegram sends the
	// update again), by Failures' kind ("refused", "timed out", "HTTP 500").
	Deliveries int            `json:"webhook_deliveries,omitempty"`
	Failed     int            `json:"webhook_failed,omitempty"`
	Failures   map[string]int `json:"webhook_failures,omitempty"`
	// Resent is the updates POSTed more than once; ResentReached those
	// of them with a failed delivery that reached the receiver (timed out
	// or answered an error status: it may have recorded the update before
	// the answer was lost), which the bot must not handle twice.
	Resent        int `json:"webhook_resent,omitempty"`
	ResentReached int `json:"webhook_resent_reached,omitempty"`
	// ReceiverFaults is the faults that took the receiver down (kill-9,
	// SIGTERM, SIGSTOP of the poller slot) and DowntimeFailed the failed
	// deliveries in their downtime: from each fault's start until the
	// first delivery begun after its end and answered 2xx (a delivery's
	// time is when its POST began).
	ReceiverFaults int `json:"webhook_receiver_faults,omitempty"`
	DowntimeFailed int `json:"webhook_downtime_failed,omitempty"`
	// ResentDuplicated is the resent group updates answered more than
	// once (counted in Duplicates too).
	ResentDuplicated int `json:"webhook_resent_duplicated,omitempty"`
}

// span is a stretch of time: a receiver's fault, from its start to the
// end of its For.
type span struct{ from, to time.Time }

// failureKind names a failed delivery's kind ("" when it was answered
// 2xx): the emulator's error ("refused", "timed out") or "HTTP <status>".
func failureKind(d tgemu.WebhookDelivery) string {
	switch {
	case d.Err != "":
		return strings.TrimPrefix(strings.ToLower(d.Err), "connection ")
	case d.Status >= 200 && d.Status < 300:
		return ""
	default:
		return fmt.Sprintf("HTTP %d", d.Status)
	}
}

// reached reports whether a failed delivery reached the receiver: it
// timed out (the request may have been read and recorded) or was answered
// a status; a refused connection never did.
func reached(d tgemu.WebhookDelivery) bool { return failureKind(d) != "refused" }

// accountHook counts deliveries (in order) against the receiver's faults
// (downs) and the group updates with their reply counts (replies, by
// update_id): see hookFigures. It also returns, per fault of downs, the
// failed deliveries in its downtime and when the first delivery begun
// after its end and answered 2xx began (zero time: none).
func accountHook(ds []tgemu.WebhookDelivery, downs []span, replies map[int64]int) (hookFigures, []int, []time.Time) {
	f := hookFigures{Deliveries: len(ds), Failures: map[string]int{}, ReceiverFaults: len(downs)}
	posts, hit := map[int64]int{}, map[int64]bool{}
	for _, d := range ds {
		posts[d.UpdateID]++
		if k := failureKind(d); k != "" {
			f.Failed++
			f.Failures[k]++
			hit[d.UpdateID] = hit[d.UpdateID] || reached(d)
		}
	}
	for id, n := range posts {
		if n < 2 {
			continue
		}
		f.Resent++
		if hit[id] {
			f.ResentReached++
		}
		if replies[id] > 1 {
			f.ResentDuplicated++
		}
	}
	failed := make([]int, len(downs))
	back := make([]time.Time, len(downs))
	for i, s := range downs {
		for _, d := range ds {
			if d.Time.Before(s.from) {
				continue
			}
			if failureKind(d) == "" && d.Time.After(s.to) {
				back[i] = d.Time
				break
			}
			if failureKind(d) != "" {
				failed[i]++
			}
		}
		f.DowntimeFailed += failed[i]
	}
	if len(f.Failures) == 0 {
		f.Failures = nil
	}
	return f, failed, back
}

// receiverDowns are the spans of the faults that took the poller slot's
// process down (kill-9, SIGTERM, SIGSTOP), in absolute time from the
// load's start.
func receiverDowns(start time.Time, faults []applied) []span {
	var out []span
	for _, a := range faults {
		if a.Target == "poller" && slices.Contains([]string{faultKill, faultTerm, faultStop}, a.Kind) {
			from := start.Add(a.Began)
			out = append(out, span{from, from.Add(a.For)})
		}
	}
	return out
}

// webhookLag is the longest a group update waited between its injection
// and the first delivery of it answered 2xx (its confirmation to
// Telegram), of those confirmed.
func webhookLag(ds []tgemu.WebhookDelivery, group []sentUpdate) time.Duration {
	confirmed := map[int64]time.Time{}
	for _, d := range ds {
		if _, ok := confirmed[d.UpdateID]; !ok && failureKind(d) == "" {
			confirmed[d.UpdateID] = d.Time
		}
	}
	var worst time.Duration
	for _, u := range group {
		if at, ok := confirmed[u.id]; ok {
			worst = max(worst, at.Sub(u.at))
		}
	}
	return worst
}

// repliesByUpdate counts each group update's replies (messages answering
// its message), by update_id.
func repliesByUpdate(h history) map[int64]int {
	out := map[int64]int{}
	for _, u := range h.group {
		for _, m := range h.messages[u.chat] {
			if m.ReplyToMessageID == u.msgID {
				out[u.id]++
			}
		}
	}
	return out
}

// hookCell is the table's intake cell: "poller", or a webhook run's
// deliveries.
func hookCell(intake string, f hookFigures) string {
	if intake != intakeWebhook {
		return intakePoller
	}
	return fmt.Sprintf("webhook: %d posts, %d failed (%d in %d receiver downtimes), %d resent (%d after reaching it, %d answered twice)",
		f.Deliveries, f.Failed, f.DowntimeFailed, f.ReceiverFaults, f.Resent, f.ResentReached, f.ResentDuplicated)
}
