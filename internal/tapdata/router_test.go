package tapdata_test

import (
	"context"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/update"
)

// The router answers every tap once: with its kind's toast when the data
// verifies, else with the refusal toast (another version, anything else
// invalid, a tap with no message, an unknown kind), counting and logging
// the data that did not verify; a kind's handler sees the verified data
// and its Outcome is the router's.
func TestRouterAnswersEveryTapOnceByKind(t *testing.T) {
	t.Parallel()
	const chat = int64(-100123)
	codec := tapdata.New("123:router-test-token_000000000000000")
	enc := func(kind byte, scope, arg string, chat int64) string {
		d, err := codec.Encode(kind, scope, arg, chat)
		require.NoError(t, err)
		return d
	}
	good := enc(tapdata.KindGame, "g1", "p0", chat)
	for _, tc := range []struct {
		name      string
		data      string
		noMessage bool
		toast     string
		handled   bool
		refused   int
	}{
		{name: "verified", data: good, toast: "handled g1 p0", handled: true},
		{name: "unknown kind", data: enc('z', "g1", "p0", chat), toast: tapdata.ToastInvalidButton},
		{name: "signed for another chat", data: enc(tapdata.KindGame, "g1", "p0", chat+1), toast: tapdata.ToastInvalidButton, refused: 1},
		{name: "other version", data: "2" + good[1:], toast: tapdata.ToastOldButton, refused: 1},
		{name: "malformed", data: "x", toast: tapdata.ToastInvalidButton, refused: 1},
		{name: "no message", data: good, noMessage: true, toast: tapdata.ToastInvalidButton, refused: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var answers []string
			refused := 0
			logs := &testkit.LogBuffer{}
			rt := tapdata.NewRouter(codec, func(_ context.Context, id, toast string) { answers = append(answers, id+": "+toast) },
				func() { refused++ }, logs.Logger())
			rt.Route(tapdata.KindGame, func(_ context.Context, _ *update.Request, out *update.Outcome, _ *models.CallbackQuery, d tapdata.Data) string {
				out.Reply(update.Reply{ChatID: chat, Text: "board"})
				return "handled " + d.Scope + " " + d.Arg
			})
			q := &models.CallbackQuery{ID: "q1", From: models.User{ID: 7}, Data: tc.data}
			if !tc.noMessage {
				q.Message.Message = &models.Message{Chat: models.Chat{ID: chat}}
			}
			out := rt.Handle(context.Background(), &update.Request{Update: &models.Update{CallbackQuery: q}})
			require.Equal(t, []string{"q1: " + tc.toast}, answers, "answered once")
			require.Equal(t, tc.refused, refused)
			require.Equal(t, tc.handled, len(out.Replies) == 1, "the handler's outcome")
			require.Equal(t, tc.refused == 1, len(logs.String()) > 0, "a refusal is logged")
		})
	}
}
