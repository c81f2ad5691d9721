package play

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// maxShown is how many of a chat's latest messages the state carries.
const maxShown = 60

// Button is one inline keyboard button as the page shows it.
type Button struct {
	Text string `json:"text"`
	Data string `json:"data,omitempty"` // callback_data; "" for a URL button
	URL  string `json:"url,omitempty"`
}

// Msg is one message of a chat in the state: typed by a user or sent by
// the bot (then with its keyboard, its edits and the toast of the last tap
// answered on it).
type Msg struct {
	ID       int        `json:"id"`
	Bot      bool       `json:"bot"`
	From     string     `json:"from"`
	Text     string     `json:"text"`
	Time     string     `json:"time"` // HH:MM:SS
	Edits    int        `json:"edits"`
	Keyboard [][]Button `json:"keyboard,omitempty"`
}

// Chat is one chat of the list.
type Chat struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Group    bool   `json:"group"`
	Lang     string `json:"lang,omitempty"`
	Messages []Msg  `json:"messages"`
	Toast    string `json:"toast,omitempty"` // the answer to the last tap in it
}

// Stats are the emulator's figures shown beside the chats: messages
// delivered and edits accepted, 429s answered by its flood limits, the
// peak of sends in any 1 s, whether "slow" is on, the injected faults
// applied so far and still pending.
type Stats struct {
	Sent, Edits, TooMany, PeakPerSecond int
	Slow                                bool
	FaultsApplied, FaultsPending        int // FaultsPending: armed fault rules (tgemu PendingFaults)
}

// State is GET /api/state's answer.
type State struct {
	Users  []User   `json:"users"`
	Chats  []Chat   `json:"chats"`
	Stats  Stats    `json:"stats"`
	Events []string `json:"events"`
}

// snapshot builds the state: the cast's chats, the group, then any other
// chat the emulator knows (the staged burst's and flood's).
func (p *Playground) snapshot() State {
	p.mu.Lock()
	saidBy := make(map[int64][]said, len(p.said))
	for id, s := range p.said {
		saidBy[id] = append([]said(nil), s...)
	}
	taps := make(map[string]int64, len(p.taps))
	for q, c := range p.taps {
		taps[q] = c
	}
	st := State{Users: p.cast, Events: append([]string{}, p.events...), Stats: Stats{Slow: p.slow}}
	p.mu.Unlock()

	toasts := map[int64]string{}
	for _, a := range p.emu.CallbackAnswers() {
		if c, ok := taps[a.QueryID]; ok && a.Text != "" {
			toasts[c] = a.Text
		}
	}
	order := []int64{}
	known := map[int64]bool{}
	for _, u := range p.cast {
		order, known[u.ID] = append(order, u.ID), true
	}
	order, known[GroupID] = append(order, GroupID), true
	for _, c := range p.emu.Chats() {
		if !known[c.ID] {
			order = append(order, c.ID)
		}
	}
	titles := map[int64]models.Chat{}
	for _, c := range p.emu.Chats() {
		titles[c.ID] = c
	}
	for _, id := range order {
		c := Chat{ID: id, Group: id < 0, Toast: toasts[id]}
		if tc, ok := titles[id]; ok {
			c.Title = tc.Title
			if c.Title == "" {
				c.Title = strings.TrimSpace(tc.FirstName + " " + tc.LastName)
			}
		}
		for _, u := range p.cast {
			if u.ID == id {
				c.Title, c.Lang = u.Name, u.Lang
			}
		}
		c.Messages = p.messages(id, saidBy[id])
		st.Chats = append(st.Chats, c)
	}
	es := p.emu.Stats()
	st.Stats.Sent, st.Stats.Edits, st.Stats.TooMany, st.Stats.PeakPerSecond = es.Sent, es.Edits, es.TooManyRequests, es.MaxPerSecond
	st.Stats.FaultsApplied, st.Stats.FaultsPending = es.Faults, p.emu.PendingFaults()
	return st
}

// messages merges a chat's typed messages and the bot's (one message_id
// sequence per chat), the latest maxShown.
func (p *Playground) messages(chatID int64, typed []said) []Msg {
	out := []Msg{}
	for _, s := range typed {
		out = append(out, Msg{ID: s.id, From: s.from, Text: s.text, Time: s.at.Format("15:04:05")})
	}
	for _, m := range p.emu.Messages(chatID) {
		text, mode, markup := m.Text, m.ParseMode, m.ReplyMarkup
		if n := len(m.Edits); n > 0 {
			e := m.Edits[n-1]
			text, mode, markup = e.Text, e.ParseMode, e.ReplyMarkup
		}
		if f, err := tgemu.ParseFormatted(mode, text); err == nil {
			text = f.Text
		}
		out = append(out, Msg{ID: m.ID, Bot: true, From: "codemojex", Text: text, Time: m.Time.Format("15:04:05"),
			Edits: len(m.Edits), Keyboard: keyboard(markup)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > maxShown {
		out = out[len(out)-maxShown:]
	}
	return out
}

// keyboard reads an inline keyboard's reply_markup JSON (nil for none).
func keyboard(markup string) [][]Button {
	if markup == "" {
		return nil
	}
	var kb models.InlineKeyboardMarkup
	if json.Unmarshal([]byte(markup), &kb) != nil {
		return nil
	}
	var rows [][]Button
	for _, r := range kb.InlineKeyboard {
		var row []Button
		for _, b := range r {
			row = append(row, Button{Text: b.Text, Data: b.CallbackData, URL: b.URL})
		}
		rows = append(rows, row)
	}
	return rows
}

func (p *Playground) state(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, p.snapshot())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readJSON decodes a request's JSON body (at most 16 KiB) into v; false
// (answered 400) when it is not.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad JSON: " + err.Error()})
		return false
	}
	return true
}

// user returns the cast member id, who may write in chatID (their own
// private chat, or the group).
func (p *Playground) user(id, chatID int64) (User, error) {
	for _, u := range p.cast {
		if u.ID == id {
			if chatID != id && chatID != GroupID {
				return User{}, fmt.Errorf("%s cannot write in chat %d", u.Name, chatID)
			}
			return u, nil
		}
	}
	return User{}, fmt.Errorf("no user %d in the playground", id)
}

func tgUser(u User) models.User {
	return models.User{ID: u.ID, FirstName: u.Name, LanguageCode: u.Lang}
}

// sendReq is POST /api/send's body: From types Text in Chat.
type sendReq struct {
	Chat int64  `json:"chat"`
	From int64  `json:"from"`
	Text string `json:"text"`
}

// send injects a message update (tgemu InjectMessage) and records it for
// the chat's view. Answers 200 {"id": message_id}, 400 with "error".
func (p *Playground) send(w http.ResponseWriter, r *http.Request) {
	var req sendReq
	if !readJSON(w, r, &req) {
		return
	}
	u, err := p.user(req.From, req.Chat)
	if err == nil && strings.TrimSpace(req.Text) == "" {
		err = fmt.Errorf("empty message")
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	id, err := p.inject(req.Chat, u, req.Text)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"id": id})
}

// inject has u write text in chat and records it.
func (p *Playground) inject(chat int64, u User, text string) (int, error) {
	upd, err := p.emu.InjectMessage(tgemu.TextMessage{ChatID: chat, From: tgUser(u), Text: text})
	if err != nil {
		return 0, fmt.Errorf("play: inject: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.said[chat] = append(p.said[chat], said{id: upd.Message.ID, from: u.Name, text: text, at: time.Now()})
	if n := len(p.said[chat]); n > 4*maxShown {
		p.said[chat] = p.said[chat][n-maxShown:]
	}
	return upd.Message.ID, nil
}

// tapReq is POST /api/tap's body: From taps the button with Data on
// message Message of Chat.
type tapReq struct {
	Chat    int64  `json:"chat"`
	From    int64  `json:"from"`
	Message int    `json:"message"`
	Data    string `json:"data"`
}

// tap injects a callback_query update (tgemu InjectCallbackQuery).
// Answers 200 {"query": id}, 400 with "error".
func (p *Playground) tap(w http.ResponseWriter, r *http.Request) {
	var req tapReq
	if !readJSON(w, r, &req) {
		return
	}
	u, err := p.user(req.From, req.Chat)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	q, err := p.tapAs(req.Chat, u, req.Message, req.Data)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"query": q})
}

func (p *Playground) tapAs(chat int64, u User, msg int, data string) (string, error) {
	upd, err := p.emu.InjectCallbackQuery(tgemu.CallbackQuery{From: tgUser(u), ChatID: chat, MessageID: msg, Data: data})
	if err != nil {
		return "", fmt.Errorf("play: tap: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.taps) >= 4096 { // bounded: only the latest taps' toasts matter
		clear(p.taps)
	}
	p.taps[upd.CallbackQuery.ID] = chat
	return upd.CallbackQuery.ID, nil
}
