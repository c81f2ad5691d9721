package demo

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// lineWidth is the widest line the live view prints, so lines never wrap
// and the in-place redraw stays aligned.
const lineWidth = 79

// snapshot is everything one frame of the live view shows.
type snapshot struct {
	scene     Scene // the scene played: its size is progress's whole
	elapsed   time.Duration
	chats     []ChatStats
	phase     string
	events    []string
	delivered int
	peak      int // highest messages/s accepted so far
	tooMany   int
}

// progress is the share of the scene's expected deliveries done, 0..1:
// each chat's answered commands, up to the commands its role sends in the
// whole scene (Scene.commands), and its broadcast copy (every chat but
// the rush-only ones gets one), over the whole scene's. The whole is fixed
// before the scene starts, so progress never goes back (it divided by the
// commands sent so far: 97% before the rush, 17% once it was sent).
func (s snapshot) progress() float64 {
	done, want := 0, 0
	for _, c := range s.chats {
		n := s.scene.commands(c.Role)
		done += min(c.Answered, n)
		want += n
		if c.Role != RoleRush {
			done += min(c.Broadcasts, 1)
			want++ // its broadcast copy
		}
	}
	if want == 0 {
		return 0
	}
	return float64(done) / float64(want)
}

// commands is how many commands a chat of role sends in the scene at
// least (scene.play's actors): a quiet player and the tapper may send more
// (they play on until the burst has drained, the tapper's taps are not
// commands), which progress does not count.
func (sc Scene) commands(role Role) int {
	switch role {
	case RoleAdmin:
		return 6 // /start, /weight, /weights, /broadcast, /lanes; /weight in the rush
	case RoleBurst:
		return 1 + sc.Burst // /start and the burst of /help
	case RoleQuiet:
		return 3 + sc.MinMoves // /start, /play, the moves, /top
	case RoleTap:
		return 3 // /start, /play, /top
	case RoleCrowd:
		return 1 + sc.RushPer // /start, the rush's /help
	case RoleVIP:
		return 1 + 3*sc.RushPer
	case RoleRush:
		return sc.RushPer
	}
	return 0
}

// row is one line of the table: a chat, or the crowd folded into one line.
type row struct {
	chat, who, role                 string
	sent, answered, delivered, queu int
	waits                           []time.Duration
}

func rows(chats []ChatStats) []row {
	var out []row
	folded := map[Role]*row{} // the crowd and the rush-only chats, one line each
	var order []Role
	for _, c := range chats {
		r := row{chat: fmt.Sprint(c.ID), who: c.Name, role: string(c.Role),
			sent: c.Sent, answered: c.Answered, delivered: c.Delivered, queu: c.Queued, waits: c.Waits}
		if c.Weight > 1 {
			r.who += fmt.Sprintf(" w%d", c.Weight)
		}
		if c.Role != RoleCrowd && c.Role != RoleRush {
			out = append(out, r)
			continue
		}
		crowd := folded[c.Role]
		if crowd == nil {
			crowd = &row{chat: fmt.Sprint(c.ID) + "+", role: string(c.Role)}
			folded[c.Role] = crowd
			order = append(order, c.Role)
		}
		n := 0
		for _, cc := range chats {
			if cc.Role == c.Role {
				n++
			}
		}
		crowd.who = fmt.Sprintf("%d chats", n)
		crowd.sent += r.sent
		crowd.answered += r.answered
		crowd.delivered += r.delivered
		if r.queu >= 0 && crowd.queu >= 0 {
			crowd.queu += r.queu
		} else {
			crowd.queu = -1
		}
		crowd.waits = append(crowd.waits, r.waits...)
	}
	for _, role := range order {
		out = append(out, *folded[role])
	}
	return out
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// table writes the per-chat table.
func table(w io.Writer, chats []ChatStats) {
	fmt.Fprintf(w, "%-9s %-10s %-5s %5s %8s %9s %6s %8s %8s\n",
		"chat", "who", "role", "sent", "answered", "delivered", "queued", "wait p50", "wait max")
	for _, r := range rows(chats) {
		q := "-"
		if r.queu >= 0 {
			q = fmt.Sprint(r.queu)
		}
		p50, mx := "-", "-"
		if len(r.waits) > 0 {
			p50, mx = secs(percentile(r.waits, 50)), secs(percentile(r.waits, 100))
		}
		fmt.Fprintf(w, "%-9s %-10s %-5s %5d %8d %9d %6s %8s %8s\n",
			r.chat, r.who, r.role, r.sent, r.answered, r.delivered, q, p50, mx)
	}
}

// frame renders one frame of the live view as lines.
func frame(s snapshot) []string {
	var b strings.Builder
	p := s.progress()
	const barLen = 24
	fill := int(p * barLen)
	fmt.Fprintf(&b, "codemojex demo: real bot -> Bot API emulator (Telegram limits)   %5.1fs\n", s.elapsed.Seconds())
	fmt.Fprintf(&b, "[%s%s] %3.0f%%  delivered %d  peak %d/s (limit 30)  429s %d\n",
		strings.Repeat("#", fill), strings.Repeat(".", barLen-fill), p*100, s.delivered, s.peak, s.tooMany)
	fmt.Fprintf(&b, "now: %s\n\n", s.phase)
	table(&b, s.chats)
	b.WriteString("\n")
	for _, e := range s.events {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = clip(l, lineWidth)
	}
	return lines
}

// clip cuts l to n runes.
func clip(l string, n int) string {
	if utf8.RuneCountInString(l) <= n {
		return l
	}
	r := []rune(l)
	return string(r[:n-1]) + "…"
}

// liveView draws frames: in place with ANSI escapes on a terminal, or as a
// plain progress line per call otherwise.
type liveView struct {
	w     io.Writer
	tty   bool
	lines int // lines of the last frame (tty)
}

func (v *liveView) draw(s snapshot) {
	if !v.tty {
		quietMax, burstQ := time.Duration(0), -1
		for _, c := range s.chats {
			switch c.Role {
			case RoleQuiet:
				quietMax = max(quietMax, percentile(c.Waits, 100))
			case RoleBurst:
				burstQ = c.Sent - c.Answered
			}
		}
		fmt.Fprintf(v.w, "[%5.1fs] %3.0f%% delivered %d, burst backlog %d, quiet wait max %s, peak %d/s, 429s %d | %s\n",
			s.elapsed.Seconds(), s.progress()*100, s.delivered, burstQ, secs(quietMax), s.peak, s.tooMany, s.phase)
		return
	}
	var b strings.Builder
	if v.lines == 0 {
		b.WriteString("\x1b[?25l") // hide the cursor while redrawing
	} else {
		fmt.Fprintf(&b, "\x1b[%dA", v.lines)
	}
	lines := frame(s)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\x1b[K\n")
	}
	b.WriteString("\x1b[J")
	v.lines = len(lines)
	io.WriteString(v.w, b.String())
}

// finish ends the live view: on a terminal the last frame stays and the
// cursor comes back; otherwise the final table is printed once.
func (v *liveView) finish(s snapshot) {
	if v.tty {
		v.draw(s)
		io.WriteString(v.w, "\x1b[?25h")
		return
	}
	fmt.Fprintln(v.w)
	table(v.w, s.chats)
}
