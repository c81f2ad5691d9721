package intake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// groupText is a text message of user in group chat as update id.
func groupText(id, chat, user int64, text string) intake.Update {
	return intake.Update{ID: id, JSON: fmt.Appendf(nil, `{"update_id":%d,"message":{"message_id":%d,"date":1,"chat":{"id":%d,"type":"supergroup"},"from":{"id":%d,"is_bot":false,"first_name":"U"},"text":%q}}`,
		id, id, chat, user, text)}
}

// chatterFilter ignores every message whose text does not start with "/"
// (a stand-in for the program's classifier, internal/update's
// Mux.Ignores).
func chatterFilter(raw json.RawMessage) string {
	var u struct {
		Message struct {
			Text string `json:"text"`
		} `json:"message"`
	}
	if json.Unmarshal(raw, &u) != nil || strings.HasPrefix(u.Message.Text, "/") {
		return ""
	}
	return "chatter"
}

// namespaceKeys lists the keys under tag with their MEMORY USAGE bytes.
func namespaceKeys(ctx context.Context, t *testing.T, c valkey.Client, tag string) map[string]int64 {
	t.Helper()
	ks, err := valkeytest.Keys(ctx, c, "{"+tag+"}:*")
	require.NoError(t, err)
	out := make(map[string]int64, len(ks))
	for _, k := range ks {
		n, err := c.Do(ctx, c.B().MemoryUsage().Key(k).Samples(0).Build()).AsInt64()
		require.NoError(t, err)
		out[k] = n
	}
	return out
}

// The updates the filter ignores are confirmed (getUpdates: the offset
// moves past them; a webhook: counted as taken) and told with their reason,
// and write nothing: no key, no byte, no job, no count on an intake limit
// (a group's 3,000 plain messages leave its chat budget full, so the
// members' commands within the limit are all recorded); the ones it keeps
// are recorded as before.
func TestIgnoredUpdatesAreConfirmedButWriteNothing(t *testing.T) {
	t.Parallel()
	const group, chatter, commands = -100500, 3000, flood.DefaultChatMessages
	for _, tc := range []struct {
		name    string
		webhook bool
		limits  bool
	}{
		{name: "getUpdates", webhook: false},
		{name: "getUpdates with intake limits", webhook: false, limits: true},
		{name: "webhook", webhook: true},
		{name: "webhook with intake limits", webhook: true, limits: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			c := valkeyClient(t)
			tag := valkeytest.Namespace(t)
			store, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(tag))...)
			require.NoError(t, err)
			in := intake.NewInbox(c, store, tag)
			var told []string
			in.WithFilter(chatterFilter, func(reason string) { told = append(told, reason) })
			var drops []flood.Drop
			if tc.limits {
				in.WithLimits(flood.New(tag, flood.DefaultLimits(), nil), func(_ context.Context, d []flood.Drop) { drops = append(drops, d...) })
			}
			lease := intake.NewLease(c, tag, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
			require.NoError(t, lease.Acquire(ctx, func(bool) {}))
			// record records a batch the way tc receives it.
			record := func(ups []intake.Update) int {
				if tc.webhook {
					n, err := in.Accept(ctx, ups)
					require.NoError(t, err)
					return n
				}
				n, next, err := in.Record(ctx, lease.Token(), ups)
				require.NoError(t, err)
				require.Equal(t, ups[len(ups)-1].ID+1, next, "the offset moves past the whole batch")
				return n
			}
			require.Equal(t, 1, record([]intake.Update{groupText(1, group, 1, "/start")}))
			before := namespaceKeys(ctx, t, c, tag)

			// 30 members chat, 100 batches of 30 plain messages.
			id := int64(1)
			for range chatter / 30 {
				batch := make([]intake.Update, 30)
				for m := range batch {
					id++
					batch[m] = groupText(id, group, int64(100+m), "hi all 🍎")
				}
				require.Zero(t, record(batch), "nothing of the chatter is recorded")
			}
			after := namespaceKeys(ctx, t, c, tag)
			if !tc.webhook {
				off := in.Keys().Offset()
				require.Contains(t, after, off)
				delete(before, off)
				delete(after, off)
			}
			require.Equal(t, before, after, "the chatter wrote no key and no byte (but the offset)")
			require.Len(t, told, chatter)
			require.Equal(t, []string{"chatter"}, slices.Compact(told))
			n, err := in.Unhandled(ctx)
			require.NoError(t, err)
			require.EqualValues(t, 1, n, "the /start only")

			// The members' commands: each its own user, the chat's budget
			// untouched by the chatter, so none is dropped.
			batch := make([]intake.Update, commands-1)
			for m := range batch {
				id++
				batch[m] = groupText(id, group, int64(200+m), "/help")
			}
			require.Equal(t, commands-1, record(batch), "every command within the chat's limit is recorded")
			require.Empty(t, drops)
			n, err = in.Unhandled(ctx)
			require.NoError(t, err)
			require.EqualValues(t, commands, n)
		})
	}
}
