package demo

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// castStats is the scene's cast at one moment: each chat of a role has
// sent and answered the commands got[role] says, and every chat in the
// broadcast's audience has its copy when copies.
func castStats(sc Scene, got map[Role][2]int, copies bool) []ChatStats {
	counts := []struct {
		role Role
		n    int
	}{{RoleAdmin, 1}, {RoleBurst, 1}, {RoleQuiet, sc.Quiet}, {RoleTap, 1}, {RoleCrowd, sc.Crowd}, {RoleVIP, 1}, {RoleRush, sc.Rush}}
	var out []ChatStats
	for _, c := range counts {
		for range c.n {
			s := ChatStats{Role: c.role, Sent: got[c.role][0], Answered: got[c.role][1]}
			if copies && c.role != RoleRush {
				s.Broadcasts = 1
			}
			out = append(out, s)
		}
	}
	return out
}

// The live view's percentage never goes back as the scene goes on, and
// reaches 100% when everything is answered and delivered: it is the share
// of the whole scene's commands and copies, not of those sent so far (it
// read 97% before the rush and 17% once the rush's commands were sent).
// A quiet player who plays on past MinMoves does not take it back either.
func TestProgressNeverGoesBackAndEndsAtTheWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scene Scene
	}{{"quick", QuickScene()}, {"full", FullScene()}} {
		t.Run(tc.name, func(t *testing.T) {
			sc := tc.scene
			quietAll, quietMore := sc.commands(RoleQuiet), sc.commands(RoleQuiet)+4
			stages := []struct {
				name   string
				got    map[Role][2]int
				copies bool
			}{
				{"nothing yet", nil, false},
				{"warm-up sent", map[Role][2]int{RoleCrowd: {1, 0}, RoleVIP: {1, 0}, RoleAdmin: {1, 0}}, false},
				{"warm-up answered", map[Role][2]int{RoleCrowd: {1, 1}, RoleVIP: {1, 1}, RoleAdmin: {1, 1}, RoleQuiet: {2, 2}, RoleTap: {2, 2}}, false},
				{"burst sent", map[Role][2]int{RoleCrowd: {1, 1}, RoleVIP: {1, 1}, RoleAdmin: {3, 3}, RoleQuiet: {4, 3}, RoleTap: {2, 2},
					RoleBurst: {1 + sc.Burst, 2}}, false},
				{"broadcast delivered", map[Role][2]int{RoleCrowd: {1, 1}, RoleVIP: {1, 1}, RoleAdmin: {5, 5}, RoleQuiet: {quietAll, quietAll}, RoleTap: {3, 3},
					RoleBurst: {1 + sc.Burst, 1 + sc.Burst}}, true},
				{"quiet players play on", map[Role][2]int{RoleCrowd: {1, 1}, RoleVIP: {1, 1}, RoleAdmin: {5, 5}, RoleQuiet: {quietMore, quietMore}, RoleTap: {4, 4},
					RoleBurst: {1 + sc.Burst, 1 + sc.Burst}}, true},
				{"rush sent", map[Role][2]int{RoleCrowd: {1 + sc.RushPer, 1}, RoleVIP: {1 + 3*sc.RushPer, 1}, RoleRush: {sc.RushPer, 0},
					RoleAdmin: {5, 5}, RoleQuiet: {quietMore, quietMore}, RoleTap: {4, 4}, RoleBurst: {1 + sc.Burst, 1 + sc.Burst}}, true},
				{"rush half answered", map[Role][2]int{RoleCrowd: {1 + sc.RushPer, 1 + sc.RushPer/2}, RoleVIP: {1 + 3*sc.RushPer, 1 + sc.RushPer},
					RoleRush: {sc.RushPer, sc.RushPer / 2}, RoleAdmin: {6, 5}, RoleQuiet: {quietMore, quietMore}, RoleTap: {4, 4},
					RoleBurst: {1 + sc.Burst, 1 + sc.Burst}}, true},
				{"all answered", map[Role][2]int{RoleCrowd: {1 + sc.RushPer, 1 + sc.RushPer}, RoleVIP: {1 + 3*sc.RushPer, 1 + 3*sc.RushPer},
					RoleRush: {sc.RushPer, sc.RushPer}, RoleAdmin: {6, 6}, RoleQuiet: {quietMore, quietMore}, RoleTap: {4, 4},
					RoleBurst: {1 + sc.Burst, 1 + sc.Burst}}, true},
			}
			last, lastName := 0.0, ""
			for _, st := range stages {
				p := snapshot{scene: sc, chats: castStats(sc, st.got, st.copies)}.progress()
				require.GreaterOrEqual(t, p, last, "progress went back from %q to %q", lastName, st.name)
				require.LessOrEqual(t, p, 1.0, st.name)
				last, lastName = p, st.name
			}
			require.Equal(t, 1.0, last, "everything answered and delivered is 100%")
			require.Equal(t, fmt.Sprintf("%3.0f%%", 100.0), fmt.Sprintf("%3.0f%%", last*100))
		})
	}
}
