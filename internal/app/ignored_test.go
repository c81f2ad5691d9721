package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// ignoredCount is r's codemojex_updates_ignored_total of reason.
func (h *harness) ignoredCount(r *running, reason update.Ignored) int {
	h.t.Helper()
	n, err := strconv.Atoi(h.metric(r, fmt.Sprintf(`codemojex_updates_ignored_total{reason=%q}`, reason)))
	require.NoError(h.t, err)
	return n
}

// namespaceBytes is every key of the harness's namespace with its MEMORY
// USAGE bytes, but the senders' published round-trip floors
// ({T}:s:floor:<epoch>, one key per epoch of the clock, written by the
// idle workers whatever the updates).
func (h *harness) namespaceBytes() map[string]int64 {
	h.t.Helper()
	ctx := context.Background()
	ks, err := valkeytest.Keys(ctx, h.c, "{"+h.tag+"}:*")
	require.NoError(h.t, err)
	out := make(map[string]int64, len(ks))
	for _, k := range ks {
		if strings.HasPrefix(k, "{"+h.tag+"}:s:floor:") {
			continue
		}
		out[k] = h.keyBytes(k)
	}
	return out
}

// Everything the bot answers is recorded and answered (commands for it in
// a private chat and a group, with and without its @username, an unknown
// one addressed to it, a guess typed in a private chat or as a reply to
// the bot in a group, a tap, its own membership change recorded in the
// audience); everything else (a group's chatter, a mention without a
// command, a command the bot does not know without its @username in a
// group, another bot's command, a reply to a member, a service message, a
// photo, an edit, a channel post, a reaction) is dropped unrecorded and
// counted by reason, and gets nothing.
func TestTheBotRecordsWhatItActsOnAndDropsTheRest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.startWithSecret(0, 1, 2, 3)
	h.waitLeader(r)
	bot := r.app.username()
	require.NotEmpty(t, bot)
	const group, channel = int64(-100870), int64(-100879)
	ann, bo := user(871, "Ann"), user(872, "Bo")
	require.Contains(t, h.ask(group, ann, "/play"), "New code")
	board, ok := h.board(group)
	require.True(t, ok)
	member := h.say(group, bo, "anyone up for a game?").Message
	gm := func(from models.User) models.Message {
		return models.Message{ID: member.ID + 1000, Date: member.Date, Chat: member.Chat, From: &from}
	}

	acted := []struct {
		name    string
		chat    int64
		inject  func() string // the tap's query id, "" for a message
		replies int           // bot messages it brings to chat
	}{
		{"private command", ann.ID, func() string { h.say(0, ann, "/help"); return "" }, 1},
		{"private guess", bo.ID, func() string { h.say(0, bo, "🍎🍌🍒🍇"); return "" }, 1},
		{"private unknown command", ann.ID, func() string { h.say(0, ann, "/nope"); return "" }, 1},
		{"group command", group, func() string { h.say(group, bo, "/help"); return "" }, 1},
		{"group command with the bot's username", group, func() string { h.say(group, bo, "/help@"+bot); return "" }, 1},
		{"group unknown command with the bot's username", group, func() string { h.say(group, bo, "/nope@"+bot); return "" }, 1},
		{"group guess replying to the bot", group, func() string { h.replyTo(group, bo, board.ID, "🍎🍌🍒🍇"); return "" }, 1},
		{"group tap", group, func() string {
			_, data := keyboardOf(t, board.ReplyMarkup)
			u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: group, MessageID: board.ID, From: bo, Data: data["🍎"]})
			require.NoError(t, err)
			return u.CallbackQuery.ID
		}, 0},
	}
	for _, tc := range acted {
		before := len(h.emu.Messages(tc.chat))
		if id := tc.inject(); id != "" {
			require.NotEqual(t, flood.ToastText, h.answerOf(id), tc.name)
		}
		if tc.replies > 0 {
			h.texts(tc.chat, before+tc.replies)
		}
	}

	// The bot added to a group: no reply, the group joins the audience.
	added := int64(-100878)
	h.emu.InjectUpdate(models.Update{MyChatMember: &models.ChatMemberUpdated{Chat: models.Chat{ID: added, Type: models.ChatTypeGroup},
		From: ann, Date: member.Date,
		OldChatMember: models.ChatMember{Type: models.ChatMemberTypeLeft, Left: &models.ChatMemberLeft{User: &models.User{ID: 1, IsBot: true}}},
		NewChatMember: models.ChatMember{Type: models.ChatMemberTypeMember, Member: &models.ChatMemberMember{User: &models.User{ID: 1, IsBot: true}}}}})
	require.Eventually(t, func() bool { ok, err := r.app.audience.IsKnown(context.Background(), added); return err == nil && ok },
		wait, 10*time.Millisecond, "my_chat_member records the group in the audience")
	for _, reason := range update.IgnoredReasons() {
		want := 0
		if reason == update.Chatter {
			want = 1 // Bo's question to the group, before the commands
		}
		require.Equal(t, want, h.ignoredCount(r, reason), "nothing the bot acts on is dropped (%s)", reason)
	}

	photo := gm(bo)
	photo.Photo = []models.PhotoSize{{FileID: "p", Width: 1, Height: 1}}
	joined := gm(ann)
	joined.NewChatMembers = []models.User{user(873, "Cy")}
	edit := gm(bo)
	edit.ID, edit.Text, edit.EditDate = member.ID, "/help", member.Date+1
	post := models.Message{ID: 1, Date: member.Date, Chat: models.Chat{ID: channel, Type: models.ChatTypeChannel, Title: "News"}, Text: "/help"}
	ignored := []struct {
		name    string
		private bool // in the sender's private chat, else in the group
		inject  func(from models.User)
		reason  update.Ignored
	}{
		{"group chatter", false, func(from models.User) { h.say(group, from, "see you tonight") }, update.Chatter},
		{"group emoji chatter", false, func(from models.User) { h.say(group, from, "🍎🍌🍒🍇") }, update.Chatter},
		{"a mention without a command", false, func(from models.User) { h.say(group, from, "@"+bot+" hello") }, update.Chatter},
		{"group unknown command", false, func(from models.User) { h.say(group, from, "/nope") }, update.Chatter},
		{"group command for another bot", false, func(from models.User) { h.say(group, from, "/help@other_bot") }, update.Chatter},
		{"private command for another bot", true, func(from models.User) { h.say(0, from, "/help@other_bot") }, update.Chatter},
		{"group reply to a member", false, func(from models.User) { h.replyTo(group, from, member.ID, "🍎🍌🍒🍇") }, update.Chatter},
		{"service message", false, func(models.User) { h.emu.InjectUpdate(models.Update{Message: &joined}) }, update.NoText},
		{"photo", false, func(models.User) { h.emu.InjectUpdate(models.Update{Message: &photo}) }, update.NoText},
		{"edit", false, func(models.User) { h.emu.InjectUpdate(models.Update{EditedMessage: &edit}) }, update.Edited},
		{"channel post", false, func(models.User) { h.emu.InjectUpdate(models.Update{ChannelPost: &post}) }, update.ChannelPost},
		{"reaction", false, func(models.User) {
			h.emu.InjectUpdate(models.Update{MessageReaction: &models.MessageReactionUpdated{Chat: member.Chat, MessageID: board.ID,
				User: &bo, Date: member.Date, NewReaction: []models.ReactionType{{Type: models.ReactionTypeTypeEmoji,
					ReactionTypeEmoji: &models.ReactionTypeEmoji{Type: models.ReactionTypeTypeEmoji, Emoji: "👍"}}}}})
		}, update.Other},
	}
	for i, tc := range ignored {
		from := user(int64(8750+i), fmt.Sprint("Sender ", i)) // one each: no user limit binds
		chat := group
		if tc.private {
			chat = from.ID
		}
		count := h.ignoredCount(r, tc.reason)
		before := len(h.emu.Messages(chat))
		tc.inject(from)
		// A command after it, in the same chat: answered once the update
		// before it was confirmed, so its fate is known.
		require.Contains(t, h.ask(chat, from, "/help"), "Codemojex", tc.name)
		require.Len(t, h.emu.Messages(chat), before+1, "%s gets no answer", tc.name)
		require.Equal(t, count+1, h.ignoredCount(r, tc.reason), "%s is dropped as %s", tc.name, tc.reason)
	}
	known, err := r.app.audience.IsKnown(context.Background(), channel)
	require.NoError(t, err)
	require.False(t, known, "nothing recorded of the channel")
}

// A group where members chat among themselves (3,000 plain messages, none
// to the bot, as a bot with privacy mode off sees them) costs Valkey
// nothing (no key, no byte but the offset), gets no reply and no notice,
// and counts on no limit: the members' commands between are answered; the
// drops are counted. A member flooding the bot with commands still gets
// the notice, once per window, as a reply to their dropped command.
func TestGroupChatterIsNeitherRecordedNorLimitedNorAnswered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "FLOOD_WINDOW=1m") // one window for the whole test
	r := h.start(nil)
	h.waitLeader(r)
	const group, chatter, members = int64(-100880), 3000, 30
	member := func(i int) models.User { return user(int64(8800+i), fmt.Sprint("Member ", i)) }
	texts := []string{"hi all", "did you see the match?", "🍎🍌🍒🍇", "lol", "/nope", "/help@other_bot", "@someone look"}
	chat := func(n int) {
		for i := range n {
			h.say(group, member(i%members), texts[i%len(texts)])
		}
	}
	settled := func(want int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		require.NoError(t, h.emu.WaitUntil(ctx, func() bool { return len(h.emu.PendingUpdates()) == 0 }))
		require.Equal(t, want, h.ignoredCount(r, update.Chatter))
	}

	before := h.namespaceBytes()
	chat(chatter)
	settled(chatter)
	after := h.namespaceBytes()
	keys := r.app.inbox.Keys()
	require.Contains(t, after, keys.Offset())
	// The polling's own state, rewritten at every getUpdates whatever it
	// brings: the offset, the lease, the heartbeat (it lapses between
	// polls).
	for _, k := range []string{keys.Offset(), keys.Lease(), keys.Polled()} {
		delete(before, k)
		delete(after, k)
	}
	// And the processes' liveness: each queue's claimers set, written by
	// the claimers' heartbeats, and the processes' set (app:procs) and each
	// process's record (app:proc:<id>), written by the process heartbeat
	// (on a busy host their first writes can come after the first look:
	// CI, 2026-12-07, once for the set and once for the record).
	for _, m := range []map[string]int64{before, after} {
		for k := range m {
			if strings.HasSuffix(k, ":claimers") || strings.HasSuffix(k, ":app:procs") || strings.Contains(k, ":app:proc:") {
				delete(m, k)
			}
		}
	}
	require.Equal(t, before, after, "the chatter wrote no key and no byte (but the polling's state)")
	require.Empty(t, h.emu.Messages(group), "no reply, no notice")
	n, err := r.app.inbox.Unhandled(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	known, err := r.app.audience.IsKnown(context.Background(), group)
	require.NoError(t, err)
	require.False(t, known, "the chatter does not make the group known")

	// Members' commands between more chatter: all answered, within the
	// group's limit of messages the chatter never counted on.
	asked := flood.DefaultChatMessages - flood.DefaultUserMessages
	for i := range asked {
		chat(members)
		h.say(group, member(i), "/help")
	}
	h.texts(group, asked)
	settled(chatter + asked*members)

	// A member floods the bot: the user's limit drops the excess, one
	// notice answers the first dropped command, none for the rest nor for
	// the chatter around them.
	flooder := user(8899, "Flooder")
	var sent []models.Update
	for range 3 * flood.DefaultUserMessages {
		sent = append(sent, h.say(group, flooder, "/help"))
		chat(members)
	}
	want := asked + flood.DefaultUserMessages + 1
	h.texts(group, want)
	settled(chatter + asked*members + 3*flood.DefaultUserMessages*members)
	require.Equal(t, strconv.Itoa(2*flood.DefaultUserMessages), h.metric(r, `codemojex_flood_dropped_total{reason="user_messages"}`))
	require.Equal(t, "0", h.metric(r, `codemojex_flood_dropped_total{reason="chat_messages"}`))
	notices := 0
	for _, m := range h.emu.Messages(group) {
		if m.CurrentText() == flood.NoticeText {
			notices++
			require.Equal(t, sent[flood.DefaultUserMessages].Message.ID, m.ReplyToMessageID, "the notice answers the first dropped command")
		}
	}
	require.Equal(t, 1, notices, "one notice in the window")
	h.quiet(group, 300*time.Millisecond)
	require.Len(t, h.emu.Messages(group), want)
}
