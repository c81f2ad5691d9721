package app

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// speaker is a user whose updates carry language_code code.
func speaker(id int64, first, code string) models.User {
	return models.User{ID: id, FirstName: first, LanguageCode: code}
}

// latin matches what English would leave in a text once the commands and
// the game's name are taken out.
var (
	latin    = regexp.MustCompile(`[A-Za-z]`)
	commands = regexp.MustCompile(`/[a-z]+(@\w+)?|Codemojex`)
)

// requireNoEnglish fails when a message the bot sent to chat (its text
// after every edit) has a Latin letter outside a command or the game's
// name: an English text slipped through.
func (h *harness) requireNoEnglish(chat int64) {
	h.t.Helper()
	msgs := h.emu.Messages(chat)
	require.NotEmpty(h.t, msgs)
	for _, m := range msgs {
		for _, text := range append([]string{m.Text}, editsOf(m)...) {
			require.False(h.t, latin.MatchString(commands.ReplaceAllString(text, "")), "an English text in chat %d: %q", chat, text)
		}
	}
}

func editsOf(m tgemu.Message) []string {
	out := make([]string, 0, len(m.Edits))
	for _, e := range m.Edits {
		out = append(out, e.Text)
	}
	return out
}

// The whole game in Russian and in Persian, from the updates'
// language_code ("ru-RU" normalized to ru): welcome, rules, the board and
// its toasts, every guess's answer, a rejected guess, the win and the
// leaderboard, with the plurals of each language's rules at 22, 21, 5, 2
// and 1 attempts left and a win on the 22nd; no text of the chat is
// English; the command menu and descriptions were set in both languages.
func TestGameIsPlayedInRussianAndInPersian(t *testing.T) {
	t.Parallel()
	cat, err := i18n.New()
	require.NoError(t, err)
	for _, tc := range []struct {
		lang, code string
		player     models.User
		left       map[int]string // attempts left -> the board's last line
		win        string
		top        string
		menu       string // the first command's description
		digits     string // the digits 0 to 9 of the board's turn numbers ("" Latin)
	}{
		{lang: "ru", code: "ru-RU", player: speaker(7301, "Аня", "ru-RU"),
			left: map[int]string{22: "Осталось 22 попытки из 22.", 21: "Осталась 21 попытка из 22.", 5: "Осталось 5 попыток из 22.",
				2: "Осталось 2 попытки из 22.", 1: "Осталась 1 попытка из 22."},
			win: "🎉 Код разгадан за 22 попытки из 22! +10 очков.", top: "🏆 Лучшие игроки\n1. Аня — 10 очк.", menu: "Начать новую игру"},
		{lang: "fa", code: "fa", player: speaker(7302, "سارا", "fa"),
			// Numbers in Persian digits (CLDR's arabext), the board's
			// turn numbers too (digits).
			left: map[int]string{22: "۲۲ فرصت از ۲۲ فرصت باقی مانده است.", 21: "۲۱ فرصت از ۲۲ فرصت باقی مانده است.",
				5: "۵ فرصت از ۲۲ فرصت باقی مانده است.", 2: "۲ فرصت از ۲۲ فرصت باقی مانده است.", 1: "۱ فرصت از ۲۲ فرصت باقی مانده است."},
			win: "🎉 کد در ۲۲ فرصت از ۲۲ رمزگشایی شد! +۱۰ امتیاز.", top: "🏆 برترین بازیکنان\n۱. سارا — ۱۰ امتیاز", menu: "شروع بازی جدید",
			digits: "۰۱۲۳۴۵۶۷۸۹"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, "FLOOD_USER_MESSAGES=0") // 28 messages in a few seconds: the flood test is TestFloodAnswersAreInTheSendersLanguage
			r := h.start(nil, WithRandom(secretRNG(0, 1, 2, 3)), WithGameConfig(game.Config{MaxAttempts: 22}))
			h.waitLeader(r)
			tr, p := cat.For(tc.lang), tc.player
			pal := "🍎 🍌 🍇 🍒 🍋 🥝"
			require.Equal(t, tr.T("welcome", map[string]any{"N": 4, "Palette": pal}), h.ask(0, p, "/start"))
			require.Contains(t, h.ask(0, p, "/help"), tr.N("help", 22, map[string]any{"N": 4, "Palette": pal, "Max": 22, "First": 220}))
			require.Equal(t, tr.T("unknown_command", map[string]any{"Name": "foo"}), h.ask(0, p, "/foo"))
			require.Equal(t, tr.T("no_game", nil), h.ask(0, p, "🍎🍌🍇🍒"))

			rules := tr.N("rules_line", 4, map[string]any{"N": 4, "Palette": pal})
			turns := ""
			board := func(left int) string {
				if turns == "" {
					return rules + "\n\n✏️ _ _ _ _\n" + tc.left[left]
				}
				return rules + "\n" + turns + "\n\n✏️ _ _ _ _\n" + tc.left[left]
			}
			h.ask(0, p, "/play")
			h.waitBoard(p.ID, board(22))
			require.Equal(t, tr.T("toast_empty", nil), h.tap(p.ID, p, "⌫"))
			require.Equal(t, tr.N("toast_choose_first", 4, map[string]any{"N": 4, "Chosen": 0}), h.tap(p.ID, p, "☑️"))
			require.Equal(t, tr.T("invalid_guess", map[string]any{"Reason": tr.N("err_count", 4, map[string]any{"N": 4, "Got": 2})}),
				h.ask(0, p, "🍎🍌"))
			for n := 1; n <= 21; n++ {
				require.Equal(t, tr.T("turn_line", map[string]any{"Guess": "🥝🥝🥝🥝", "Pegs": "⚪⚪⚪⚪", "Attempt": n, "Max": 22}),
					h.ask(0, p, "🥝🥝🥝🥝"))
				turns += "\n" + inDigits(tc.digits, n) + ". 🥝🥝🥝🥝  ⚪⚪⚪⚪"
				if _, ok := tc.left[22-n]; ok {
					h.waitBoard(p.ID, board(22-n))
				}
			}
			require.Equal(t, tr.T("turn_line", map[string]any{"Guess": "🍎🍌🍇🍒", "Pegs": "🟢🟢🟢🟢", "Attempt": 22, "Max": 22})+"\n"+tc.win,
				h.ask(0, p, "🍎🍌🍇🍒"))
			h.waitBoard(p.ID, rules+"\n"+turns+"\n"+inDigits(tc.digits, 22)+". 🍎🍌🍇🍒  🟢🟢🟢🟢\n\n"+tc.win)
			require.Equal(t, tc.top, h.ask(0, p, "/top"))
			h.requireNoEnglish(p.ID)

			// The menu and the descriptions, set at start in each language.
			menu := h.emu.MyCommands("", tc.lang)
			require.Len(t, menu, 7)
			require.Equal(t, tc.menu, menu[0].Description)
			require.Equal(t, tr.T("bot_description", nil), h.emu.MyDescription(tc.lang, false))
			require.Equal(t, tr.T("bot_short_description", nil), h.emu.MyDescription(tc.lang, true))
			require.Equal(t, "Start a new game", h.emu.MyCommands("", "")[0].Description, "the default menu is English")
			require.Equal(t, "Começar um novo jogo", h.emu.MyCommands("", "pt")[0].Description, "pt-BR's menu goes under pt")
		})
	}
}

// /language overrides the language_code: its menu (a button per
// language, by its own name) sets it with a tap, "/language fa" at once;
// every answer after is in the language chosen, also from a new process
// (the choice is kept in Valkey, a field of a few bytes); an unknown code
// is refused in the current language.
func TestLanguageCommandChangesTheLanguageAndSurvivesARestart(t *testing.T) {
	t.Parallel()
	cat, err := i18n.New()
	require.NoError(t, err)
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	ann := speaker(7401, "Ann", "en")
	require.Contains(t, h.ask(0, ann, "/start"), "Welcome")

	menu := h.ask(0, ann, "/language")
	require.Equal(t, "🌐 Choose your language:", menu)
	msgs := h.emu.Messages(ann.ID)
	rows, data := keyboardOf(t, msgs[len(msgs)-1].ReplyMarkup)
	require.Equal(t, [][]string{{"English", "Русский"}, {"Español", "Português (Brasil)"}, {"فارسی"}}, rows)
	require.Equal(t, "🌐 Idioma: Español", h.tapData(ann.ID, ann, msgs[len(msgs)-1].ID, data["Español"]))
	require.Equal(t, cat.Text("es", "no_game", nil), h.ask(0, ann, "/giveup"))
	require.Equal(t, "Idioma desconocido xx. Envía /language y elige uno de los botones.", h.ask(0, ann, "/language xx"))
	require.Equal(t, "🌐 زبان: فارسی", h.ask(0, ann, "/language fa"))

	v, err := h.c.Do(context.Background(), h.c.B().Hget().Key(chats.NewKeys(h.tag).Lang(ann.ID)).Field("7401").Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, "fa", v, "the choice is one field of a few bytes")

	r.stop()
	r2 := h.start(nil)
	h.waitLeader(r2)
	require.Equal(t, cat.Text("fa", "welcome", map[string]any{"N": 4, "Palette": "🍎 🍌 🍇 🍒 🍋 🥝"}), h.ask(0, ann, "/start"))
	require.Equal(t, "🌐 Language: English", h.ask(0, ann, "/language en-GB"))
	require.Equal(t, gameuiNoGame, h.ask(0, ann, "/giveup"))
}

// /language's menu says whose language it sets: in a private chat the
// sender's ("Choose your language"), in a group the group's, which only
// its administrators set; in the sender's language either way.
func TestLanguageMenuNamesWhoseLanguageItSets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	const group = int64(-1007402)
	for _, tc := range []struct {
		name string
		chat int64 // 0: the sender's private chat
		from models.User
		want string
	}{
		{"private, English", 0, speaker(7441, "Ann", "en"), "🌐 Choose your language:"},
		{"group, English", group, speaker(7442, "Bob", "en"), "🌐 Choose this group's language (administrators only):"},
		{"group, Russian", group, speaker(7443, "Аня", "ru"), "🌐 Выберите язык этой группы (только администраторы):"},
		{"group, Persian", group, speaker(7444, "Dara", "fa"), "🌐 زبان این گروه را انتخاب کنید (فقط مدیران):"},
	} {
		require.Equal(t, tc.want, h.ask(tc.chat, tc.from, "/language@codemojex_test_bot"), tc.name)
	}
}

// inDigits is n written with digits (0 to 9 of a script; "" Latin).
func inDigits(digits string, n int) string {
	s := strconv.Itoa(n)
	if digits == "" {
		return s
	}
	d := []rune(digits)
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(d[r-'0'])
	}
	return b.String()
}

// gameuiNoGame is the English "no game" answer.
const gameuiNoGame = "No game is running here. Send /play to start one."

// A group of players of two languages: the board speaks the language of
// whoever started the game (Russian), each player's own answers (a typed
// guess's reply, a toast, a refusal) are theirs (Spanish); only a group
// administrator sets the group's language (getChatMember), which the
// board is redrawn in at once and keeps, whoever plays next.
func TestGroupBoardSpeaksTheGroupsLanguageAndEachPlayerTheirs(t *testing.T) {
	t.Parallel()
	cat, err := i18n.New()
	require.NoError(t, err)
	h := newHarness(t)
	h.startWithSecret(0, 1, 2, 3)
	const group = int64(-1007401)
	ru, es := cat.For("ru"), cat.For("es")
	ann, bob, cat2 := speaker(7411, "Аня", "ru"), speaker(7412, "Beto", "es-MX"), speaker(7413, "Caio", "pt-br")
	pal := "🍎 🍌 🍇 🍒 🍋 🥝"

	h.ask(group, ann, "/play@codemojex_test_bot")
	rulesRU := ru.N("rules_line", 4, map[string]any{"N": 4, "Palette": pal})
	h.waitBoard(group, rulesRU+"\n\nОсталось 10 попыток из 10.")
	require.Empty(t, h.tap(group, bob, "🍎"))
	require.Equal(t, "Elige primero 4 emojis (1/4)", h.tap(group, bob, "☑️"), "Bob's toast is Spanish")
	h.waitBoard(group, rulesRU+"\n\n✏️ Beto: 🍎 _ _ _\nОсталось 10 попыток из 10.")
	require.Equal(t, "🥝🥝🥝🥝  ⚪⚪⚪⚪  intento 1/10", h.ask(group, bob, "/guess 🥝🥝🥝🥝"), "Bob's answer is Spanish")
	require.Equal(t, "🥝🥝🥝🥝  ⚪⚪⚪⚪  попытка 2/10", h.ask(group, ann, "/guess 🥝🥝🥝🥝"), "Ann's answer is Russian")
	turns := "\n1. 🥝🥝🥝🥝  ⚪⚪⚪⚪  Beto\n2. 🥝🥝🥝🥝  ⚪⚪⚪⚪  Аня\n"
	h.waitBoard(group, rulesRU+"\n"+turns+"\n✏️ Beto: 🍎 _ _ _\nОсталось 8 попыток из 10.")

	require.Equal(t, es.T("language_admins_only", nil), h.ask(group, bob, "/language@codemojex_test_bot fa"), "Bob is no admin")
	h.emu.SetChatMemberStatus(group, cat2.ID, "administrator")
	require.Equal(t, "🌐 زبان این گروه: فارسی", h.ask(group, cat2, "/language@codemojex_test_bot fa"))
	fa := cat.For("fa")
	rulesFA := fa.N("rules_line", 4, map[string]any{"N": 4, "Palette": pal})
	turns = "\n۱. 🥝🥝🥝🥝  ⚪⚪⚪⚪  Beto\n۲. 🥝🥝🥝🥝  ⚪⚪⚪⚪  Аня\n" // Persian digits now
	h.waitBoard(group, rulesFA+"\n"+turns+"\n✏️ Beto: 🍎 _ _ _\n۸ فرصت از ۱۰ فرصت باقی مانده است.")
	require.Equal(t, "🥝🥝🥝🥝  ⚪⚪⚪⚪  intento 3/10", h.ask(group, bob, "/guess 🥝🥝🥝🥝"), "Bob's answers stay Spanish")
	h.waitBoard(group, rulesFA+"\n"+turns+"۳. 🥝🥝🥝🥝  ⚪⚪⚪⚪  Beto\n\n✏️ Beto: 🍎 _ _ _\n۷ فرصت از ۱۰ فرصت باقی مانده است.")
	require.Equal(t, "🏳️ Вы сдались", h.tap(group, ann, "🏳️"), "Ann's toast is Russian")
	h.waitBoard(group, rulesFA+"\n"+turns+"۳. 🥝🥝🥝🥝  ⚪⚪⚪⚪  Beto\n\n🏳️ تسلیم شدید. کد 🍎🍌🍇🍒 بود.")

	// A new game in the group: the group's language, not its starter's.
	h.ask(group, bob, "/play@codemojex_test_bot")
	b, ok := h.board(group)
	require.True(t, ok)
	require.True(t, strings.HasPrefix(b.Text, rulesFA), b.Text)
}

// What the intake limits still answer is in the sender's language_code's
// language: a dropped tap's toast, a chat's notice.
func TestFloodAnswersAreInTheSendersLanguage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "FLOOD_USER_TAPS=2", "FLOOD_USER_MESSAGES=2", "FLOOD_WINDOW=1m")
	h.startWithSecret(0, 1, 2, 3)
	ann := speaker(7421, "Аня", "ru")
	h.ask(0, ann, "/play")
	b, _ := h.board(ann.ID)
	_, data := keyboardOf(t, b.ReplyMarkup)
	var ids []string
	for range 4 {
		u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: ann.ID, MessageID: b.ID, From: ann, Data: data["🍎"]})
		require.NoError(t, err)
		ids = append(ids, u.CallbackQuery.ID)
	}
	toasts := map[string]int{}
	for _, id := range ids {
		toasts[h.answerOf(id)]++
	}
	require.Equal(t, 2, toasts["Слишком много нажатий: помедленнее."], "4 taps, 2 within the limit: %v", toasts)
	sara := speaker(7422, "سارا", "fa-IR") // \u200c below: the zero-width non-joiner inside Persian words
	for range 3 {
		h.say(0, sara, "/help")
	}
	require.Contains(t, h.texts(sara.ID, 3), "پیام\u200cها خیلی زیاد است: کمی آهسته\u200cتر.")
}

// What the intake limits still answer follows the sender's /language
// choice over their language_code, as every handler's answer does: a
// user whose Telegram is English and who chose Russian gets the dropped
// taps' toasts in Russian; a Russian one who chose Persian gets the
// notice in Persian.
func TestFloodAnswersFollowTheSendersLanguageChoice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "FLOOD_USER_TAPS=2", "FLOOD_USER_MESSAGES=2", "FLOOD_WINDOW=1m")
	h.startWithSecret(0, 1, 2, 3)
	ann := speaker(7431, "Ann", "en")
	require.Equal(t, "🌐 Язык: Русский", h.ask(0, ann, "/language ru"))
	h.ask(0, ann, "/play") // the second message of the window: handled
	b, _ := h.board(ann.ID)
	_, data := keyboardOf(t, b.ReplyMarkup)
	toasts := map[string]int{}
	for range 4 {
		u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: ann.ID, MessageID: b.ID, From: ann, Data: data["🍎"]})
		require.NoError(t, err)
		toasts[h.answerOf(u.CallbackQuery.ID)]++
	}
	require.Equal(t, 2, toasts["Слишком много нажатий: помедленнее."], "4 taps, 2 within the limit, the 2 others toasted in the choice's language: %v", toasts)

	ivan := speaker(7432, "Иван", "ru")
	require.Equal(t, "🌐 زبان: فارسی", h.ask(0, ivan, "/language fa"))
	for range 2 {
		h.say(0, ivan, "/help")
	}
	texts := h.texts(ivan.ID, 3)
	require.Contains(t, texts, "پیام\u200cها خیلی زیاد است: کمی آهسته\u200cتر.", "the notice in Persian, the choice's")
	require.NotContains(t, texts, "Слишком много сообщений: помедленнее.")
}

// A player who is not an admin is refused an admin command, and a tap on
// an admin's button, in their language (the admins' own answers stay
// English).
func TestAdminRefusalsAreInThePlayersLanguage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	for _, tc := range []struct {
		from models.User
		text string
		want string
	}{
		{speaker(7441, "Аня", "ru-RU"), "/broadcast hi", "⛔ /broadcast — только для администраторов бота."},
		{speaker(7442, "سارا", "fa"), "/weights", "⛔ دستور /weights فقط برای مدیران ربات است."},
		{speaker(7443, "Beto", "es"), "/lanes", "⛔ /lanes es solo para los administradores del bot."},
		{speaker(7444, "Caio", "pt-BR"), "/audit", "⛔ /audit é só para os administradores do bot."},
		{speaker(7445, "Eve", "de"), "/dlq", "⛔ /dlq is for bot admins only."},
	} {
		require.Equal(t, tc.want, h.ask(0, tc.from, tc.text), tc.from.LanguageCode)
	}

	// A tap on the admin's preview by a Russian player.
	pv := h.ask(0, user(adminID, "Admin"), "/broadcast hi")
	require.True(t, strings.HasPrefix(pv, "📣 Broadcast preview."), pv)
	msgs := h.emu.Messages(adminID)
	m := msgs[len(msgs)-1]
	_, data := keyboardOf(t, m.ReplyMarkup)
	u, err := h.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: adminID, MessageID: m.ID, From: speaker(7441, "Аня", "ru"), Data: data["✅ Send"]})
	require.NoError(t, err)
	require.Equal(t, "⛔ Только для администраторов бота, в личном чате с ботом.", h.answerOf(u.CallbackQuery.ID))
}
