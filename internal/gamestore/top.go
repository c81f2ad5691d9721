package gamestore

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// Entry is one line of a chat's leaderboard.
type Entry struct {
	// Rank is the 1-based position. Ties keep Valkey's order: reverse
	// lexicographic order of the user ids' decimal strings.
	Rank   int
	UserID int64
	// Name is the display name recorded at the user's latest win, or "".
	Name string
	// Points is the user's total of game.Points over their wins in the chat.
	Points int64
}

// Top returns the chat's n best players, most points first (fewer when fewer
// have won; none for n ≤ 0).
func (s *Store) Top(ctx context.Context, chatID int64, n int) ([]Entry, error) {
	if n <= 0 {
		return nil, nil
	}
	c := s.client
	zs, err := c.Do(ctx, c.B().Zrange().Key(s.keys.top(chatID)).Min("0").Max(strconv.Itoa(n-1)).Rev().Withscores().Build()).AsZScores()
	if err != nil {
		return nil, fmt.Errorf("gamestore: top of chat %d: %w", chatID, err)
	}
	if len(zs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(zs))
	for i, z := range zs {
		ids[i] = z.Member
	}
	names, err := c.Do(ctx, c.B().Hmget().Key(s.keys.names(chatID)).Field(ids...).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("gamestore: top of chat %d: names: %w", chatID, err)
	}
	out := make([]Entry, len(zs))
	for i, z := range zs {
		uid, err := strconv.ParseInt(z.Member, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("gamestore: top of chat %d: member %q is not a user id: %w", chatID, z.Member, err)
		}
		e := Entry{Rank: i + 1, UserID: uid, Points: int64(math.Round(z.Score))}
		if i < len(names) {
			e.Name, _ = names[i].ToString() // nil (no name) leaves ""
		}
		out[i] = e
	}
	return out, nil
}
