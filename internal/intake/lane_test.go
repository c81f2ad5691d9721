package intake_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
)

// An update's lane is its chat; without one, the user it comes from; with
// neither (or not JSON), lane 0.
func TestLaneOfIsTheChatElseTheUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json, lane string
	}{
		{"private message", `{"update_id":1,"message":{"message_id":1,"chat":{"id":42,"type":"private"},"from":{"id":42}}}`, "42"},
		{"group message", `{"update_id":1,"message":{"chat":{"id":-100123},"from":{"id":42}}}`, "-100123"},
		{"edited message", `{"update_id":1,"edited_message":{"chat":{"id":-7}}}`, "-7"},
		{"channel post", `{"update_id":1,"channel_post":{"chat":{"id":-1009}}}`, "-1009"},
		{"callback query on a message", `{"update_id":1,"callback_query":{"id":"q","from":{"id":42},"message":{"message_id":5,"chat":{"id":-55}}}}`, "-55"},
		{"callback query on an inline message", `{"update_id":1,"callback_query":{"id":"q","from":{"id":42},"inline_message_id":"x"}}`, "42"},
		{"my_chat_member", `{"update_id":1,"my_chat_member":{"chat":{"id":77},"from":{"id":77}}}`, "77"},
		{"inline query", `{"update_id":1,"inline_query":{"id":"i","from":{"id":43},"query":""}}`, "43"},
		{"poll answer", `{"update_id":1,"poll_answer":{"poll_id":"p","user":{"id":44}}}`, "44"},
		{"poll", `{"update_id":1,"poll":{"id":"p"}}`, "0"},
		{"not JSON", `{"update_id":`, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.lane, intake.LaneOf([]byte(tc.json)))
		})
	}
}
