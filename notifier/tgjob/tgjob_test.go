package tgjob_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

func TestEncodeDecodeKinds(t *testing.T) {
	t.Parallel()
	send := tgjob.Job{Chat: 5, Text: "hi", ReplyTo: 3}
	p, err := send.Encode()
	require.NoError(t, err)
	require.JSONEq(t, `{"v":1,"chat":5,"text":"hi","rt":3}`, string(p), "a send carries no kind: older workers read it")
	got, err := tgjob.Decode(p)
	require.NoError(t, err)
	require.False(t, got.IsEdit())
	send.V = tgjob.Version
	require.Equal(t, send, got)

	edit := tgjob.Job{Kind: tgjob.KindEdit, MessageID: 42, Chat: -100, Text: "new", ParseMode: "HTML"}
	p, err = edit.Encode()
	require.NoError(t, err)
	got, err = tgjob.Decode(p)
	require.NoError(t, err)
	require.True(t, got.IsEdit())
	require.Equal(t, 42, got.MessageID)

	// An edit may name its message by the job that sent it instead.
	ref := tgjob.Job{Kind: tgjob.KindEdit, Ref: "job_01J00000000000000000000000", Fresh: true, Chat: 5, Text: "board",
		Markup: `{"inline_keyboard":[[{"text":"🍎","callback_data":"a"}]]}`}
	p, err = ref.Encode()
	require.NoError(t, err)
	got, err = tgjob.Decode(p)
	require.NoError(t, err)
	ref.V = tgjob.Version
	require.Equal(t, ref, got)

	// A payload written before kinds existed is a send.
	got, err = tgjob.Decode([]byte(`{"v":1,"chat":7,"text":"old","bc":"bc_x"}`))
	require.NoError(t, err)
	require.Equal(t, tgjob.Job{V: 1, Chat: 7, Text: "old", Broadcast: "bc_x"}, got)
}

func TestDecodeMalformed(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		`not json`,
		`{"v":2,"chat":1,"text":"x"}`,
		`{"v":1,"chat":1,"text":""}`,
		`{"v":1,"chat":1,"text":"\xff"}`,
		`{"v":1,"chat":1,"text":"x","kind":"delete"}`,
		`{"v":1,"chat":1,"text":"x","kind":"edit"}`,
		`{"v":1,"chat":1,"text":"x","kind":"edit","mid":-1}`,
	} {
		_, err := tgjob.Decode([]byte(p))
		require.ErrorIs(t, err, tgjob.ErrMalformed, p)
	}
}

func TestGroupChatID(t *testing.T) {
	t.Parallel()
	id, err := tgjob.ChatID(tgjob.Group(-1001234))
	require.NoError(t, err)
	require.Equal(t, int64(-1001234), id)
	for _, g := range []string{"", "0", "x", "1.5"} {
		_, err := tgjob.ChatID(g)
		require.ErrorIs(t, err, tgjob.ErrMalformed, g)
	}
}

// ChatEncoder gives byte for byte what Encode gives with the chat set, for
// every kind of job and chat id, texts that spell a chat field included.
func TestChatEncoderMatchesEncode(t *testing.T) {
	t.Parallel()
	jobs := []tgjob.Job{
		{Text: "hi"},
		{Text: `"chat":0, {"chat":0}`, ParseMode: "HTML", Silent: true, Broadcast: "bc_x", Part: 1, Parts: 2},
		{Kind: tgjob.KindEdit, MessageID: 7, Text: "🍓 edit"},
		{Text: "reply", ReplyTo: 3},
	}
	for _, j := range jobs {
		enc, err := j.ChatEncoder()
		require.NoError(t, err)
		for _, chat := range []int64{1, -1001234567890, 9223372036854775807, -9223372036854775808, 0} {
			j.Chat = chat
			want, err := j.Encode()
			require.NoError(t, err)
			require.Equal(t, string(want), string(enc(chat)), "%+v", j)
		}
	}
}
