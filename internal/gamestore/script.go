package gamestore

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"time"
)

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and loaded with luascript.Must.
//
//go:embed lua/*.lua
var luaFS embed.FS

// casMode is ARGV[1] of cas.lua.
type casMode string

const (
	modeNew casMode = "new" // the game key must not exist
	modeCAS casMode = "cas" // the game key must have the expected id and rev
	modeAny casMode = "any" // no check
)

// casWrite is one call of cas.lua.
type casWrite struct {
	mode    casMode
	wantID  string // modeCAS
	wantRev int64  // modeCAS
	newID   string
	state   []byte // nil: delete the game key
	ttl     time.Duration
	credit  int64 // user id to credit when points != 0
	points  int
	name    string
	// move and moveResult: the move's token and result (JSON), kept with
	// the new state (fields mv, mr) so a replay of the move finds them.
	move       string
	moveResult []byte
}

// exec runs cas.lua for a chat. It returns ok=false when the check failed
// (nothing written), else the new rev (0 when the game key was deleted).
func (s *Store) exec(ctx context.Context, chatID int64, w casWrite) (rev int64, ok bool, err error) {
	credit := ""
	if w.points != 0 {
		credit = strconv.FormatInt(w.credit, 10)
	}
	args := []string{
		string(w.mode),
		w.wantID,
		strconv.FormatInt(w.wantRev, 10),
		w.newID,
		string(w.state),
		strconv.FormatInt(max(w.ttl.Milliseconds(), 1), 10),
		credit,
		strconv.Itoa(w.points),
		w.name,
		w.move,
		string(w.moveResult),
	}
	rev, err = s.cas.Exec(ctx, s.client, s.keys.script(chatID), args).AsInt64()
	if err != nil {
		return 0, false, fmt.Errorf("run cas.lua: %w", err)
	}
	if rev < 0 {
		return 0, false, nil
	}
	return rev, true, nil
}
