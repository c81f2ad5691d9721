package play

import "github.com/codemojex/codemojex/internal/demo"

// GroupID is the playground's group chat (a supergroup id).
const GroupID int64 = -1_001_000_000_777

// Ids of the staged crowds: the first burst's chats are FirstBurstID on (a
// second burst the next burstChats ids), the flooding user is FlooderID.
const (
	FirstBurstID int64 = 7_000_001
	burstChats         = 40 // the burst: this many chats say /start at once
	FlooderID    int64 = 8_000_001
	floodSize          = 30 // the flood: this many /help at once from one user
)

// User is a simulated Telegram user of the playground.
type User struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Lang  string `json:"lang"` // language_code, as Telegram sends it
	Admin bool   `json:"admin,omitempty"`
}

// Cast is the playground's users, in the chat list's order: the admin
// (demo.AdminID, in the bot's ADMIN_IDS) and one player per language the
// bot speaks. Every one of them is in the group, the admin too.
func Cast() []User {
	return []User{
		{ID: 101, Name: "Ana", Lang: "en"},
		{ID: 102, Name: "Boris", Lang: "ru"},
		{ID: 103, Name: "Carmen", Lang: "es"},
		{ID: 104, Name: "João", Lang: "pt-br"},
		{ID: 105, Name: "Dara", Lang: "fa"},
		{ID: demo.AdminID, Name: "Admin", Lang: "en", Admin: true},
	}
}
