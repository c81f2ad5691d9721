package tgapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// An accepted send's message_id is read from its answer's prefix without
// decoding the message (no allocation at all); an answer of any other
// shape (message_id not first, an error, a result that is not a message,
// a body that is no JSON object) gets the full decode, with its result or
// its *Error exactly as before.
func TestASentMessagesIDIsReadWithoutDecodingTheMessage(t *testing.T) {
	c, err := New(Config{Token: "1:decode-test-secret"})
	require.NoError(t, err)
	tests := []struct {
		name      string
		status    int
		body      string
		id        int
		errCode   int  // the *Error's Code (0: no error expected)
		errNoJSON bool // an *Error with Err set (not Bot API JSON)
	}{
		{name: "the emulator's answer", status: http.StatusOK, body: sentAnswer, id: 1234},
		{name: "a message of its id alone", status: http.StatusOK, body: `{"ok":true,"result":{"message_id":7}}`, id: 7},
		{name: "message_id not first", status: http.StatusOK, body: `{"ok":true,"result":{"chat":{"id":5},"message_id":55}}`, id: 55},
		{name: "spaces in the envelope", status: http.StatusOK, body: `{"ok": true, "result": {"message_id": 9}}`, id: 9},
		{name: "a 429", status: http.StatusTooManyRequests, body: tooManyAnswer, errCode: 429},
		{name: "digits then garbage", status: http.StatusOK, body: `{"ok":true,"result":{"message_id":12x}}`, errNoJSON: true},
		{name: "a cut body", status: http.StatusOK, body: `{"ok":true,"result":{"message_id":12,"chat":`, errNoJSON: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m messageID
			err := c.decode("sendMessage", tc.status, []byte(tc.body), &m)
			switch {
			case tc.errCode != 0:
				e := AsError(err)
				require.NotNil(t, e)
				require.Equal(t, tc.errCode, e.Code)
			case tc.errNoJSON:
				e := AsError(err)
				require.NotNil(t, e)
				require.Error(t, e.Err)
			default:
				require.NoError(t, err)
				require.Equal(t, tc.id, m.ID)
			}
		})
	}
	body := []byte(sentAnswer)
	var m messageID // the caller's (escapes once, as SendMessageID's does)
	allocs := testing.AllocsPerRun(100, func() {
		m.ID = 0
		if err := c.decode("sendMessage", http.StatusOK, body, &m); err != nil || m.ID != 1234 {
			t.Fatalf("decode: %d, %v", m.ID, err)
		}
	})
	require.Zero(t, allocs, "allocations to read a sent message's id")
}
