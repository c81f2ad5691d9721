package demo

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/tgapi"
)

func TestMatch(t *testing.T) {
	base := time.Unix(1000, 0)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	cmds := []command{
		{msgID: 1, at: at(0), baseline: 0},
		{msgID: 2, at: at(0), baseline: 0},
		{msgID: 3, at: at(0), baseline: 0},
		{msgID: 9, at: at(5000), baseline: 3},
	}
	// Loose replies go in order; a reply naming a command goes to it.
	got := match(cmds, tgemuMsgs{{t: 100}, {t: 1200, re: 3}, {t: 2300}}.msgs(base))
	want := []time.Time{at(100), at(2300), at(1200), {}}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("cmd %d answered at %v, want %v", i, got[i], want[i])
		}
	}
	// A reply that arrived before a command was sent is not its answer.
	got = match(cmds[3:], tgemuMsgs{{t: 100}, {t: 200}, {t: 300}}.msgs(base))
	if !got[0].IsZero() {
		t.Errorf("command answered by an earlier reply: %v", got[0])
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	for p, want := range map[float64]time.Duration{0: 1, 50: 3, 90: 5, 100: 5} {
		if got := percentile(ds, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

// A tap the intake limit dropped is answered with its toast
// (flood.ToastText): the tracker counts it limited, not answered (no tap
// wait), and the tap check says how many were limited and fails; an
// unanswered tap is neither.
func TestTapsAnsweredWithTheFloodToastAreLimitedNotAnswered(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name              string
		toasts            []string // per tap: the answer's text; "-" leaves it unanswered
		answered, limited int
	}{
		{name: "all answered", toasts: []string{"", "🍎", "", "✅ played"}, answered: 4},
		{name: "some limited", toasts: []string{"", "🍎", flood.ToastText, flood.ToastText, "-"}, answered: 2, limited: 2},
		{name: "all limited", toasts: []string{flood.ToastText, flood.ToastText}, limited: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			emu, err := tgemu.New(tgemu.WithToken(Token))
			require.NoError(t, err)
			t.Cleanup(func() { _ = emu.Close() })
			api, err := tgapi.New(tgapi.Config{Token: Token, ServerURL: emu.URL(), HTTPClient: &http.Client{}, Timeout: 10 * time.Second})
			require.NoError(t, err)
			emu.AddChat(models.Chat{ID: TapperID, Type: models.ChatTypePrivate, FirstName: "Tap"})
			_, err = api.SendMessage(ctx, &bot.SendMessageParams{ChatID: TapperID, Text: "board",
				ReplyMarkup: models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "🍎", CallbackData: "g:1"}}}}})
			require.NoError(t, err)
			tr := newTracker(emu, "marker")
			tr.add(TapperID, "Tap", RoleTap)
			for _, text := range tc.toasts {
				id, err := tr.tap(TapperID, "🍎")
				require.NoError(t, err)
				if text != "-" {
					require.NoError(t, api.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text}))
				}
			}
			stats := tr.stats()
			require.Len(t, stats, 1)
			require.Equal(t, len(tc.toasts), stats[0].Taps)
			require.Len(t, stats[0].TapWaits, tc.answered)
			require.Equal(t, tc.limited, stats[0].TapsLimited)

			sum := summarize(QuickScene(), time.Second, stats, rushShare{}, limitsSeen{}, nil, true)
			require.Equal(t, tc.answered, sum.TapsAnswered)
			require.Equal(t, tc.limited, sum.TapsLimited)
			var check Check
			for _, c := range sum.Checks {
				if c.Name == "taps answered within 1 s" {
					check = c
				}
			}
			require.Contains(t, check.Detail, fmt.Sprintf("%d/%d taps answered, %d limited", tc.answered, len(tc.toasts), tc.limited))
			if tc.answered < len(tc.toasts) {
				require.False(t, check.OK, "a limited or unanswered tap fails the check")
			}
		})
	}
}
