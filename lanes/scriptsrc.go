package lanes

import (
	"fmt"
	"regexp"
	"strings"
)

// A script's source is its own file after the helpers of common.lua it
// calls (directly or through other helpers), in common.lua's order. The
// server runs the whole chunk on every call, and each "local function"
// statement builds a closure then (about 800 instructions each on Redis
// 7.0), so a script that carried all of common.lua would pay for every
// helper on every call; the few a script calls are all it carries.
//
// common.lua is read as a preamble (the text before its first helper: the
// file's header comment) and helpers: each one is its "local function NAME("
// line, the comment block right above it and everything up to the next such
// block. At the top level common.lua holds nothing else (a statement outside
// a helper would belong to no helper and is refused), so the helpers are
// its whole code.
//
// A helper is called when "NAME(" appears in code, comments left out. A
// mention that is no call (a word in a string) can only add a helper the
// script does not need, never leave out one it does.

// luaHelper is one "local function" of common.lua.
type luaHelper struct {
	name string
	src  string   // with the comment block above it
	uses []string // helpers it calls
}

// luaLib is common.lua split into its preamble and helpers, in file order.
type luaLib struct {
	preamble string
	helpers  []luaHelper
}

var (
	luaHelperLine = regexp.MustCompile(`^local function ([A-Za-z_][A-Za-z0-9_]*)\(`)
	luaName       = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// parseLuaLib splits common.lua (see above). It returns an error for a
// top-level line that is neither a comment, a helper's first line nor an
// "end" closing one, and for a helper name defined twice.
func parseLuaLib(src string) (luaLib, error) {
	lines := strings.SplitAfter(src, "\n")
	type start struct {
		name string
		at   int // first line of the helper's comment block
	}
	var starts []start
	seen := map[string]bool{}
	for i, line := range lines {
		trimmed := strings.TrimRight(line, "\r\n")
		if m := luaHelperLine.FindStringSubmatch(trimmed); m != nil {
			if seen[m[1]] {
				return luaLib{}, fmt.Errorf("lanes: common.lua: helper %s defined twice", m[1])
			}
			seen[m[1]] = true
			at := i
			for at > 0 && strings.HasPrefix(lines[at-1], "--") {
				at--
			}
			starts = append(starts, start{name: m[1], at: at})
			continue
		}
		top := trimmed != "" && trimmed[0] != ' ' && trimmed[0] != '\t'
		if top && !strings.HasPrefix(trimmed, "--") && trimmed != "end" {
			return luaLib{}, fmt.Errorf("lanes: common.lua line %d: a top-level statement outside a helper: %q", i+1, trimmed)
		}
		if top && trimmed == "end" && len(starts) == 0 {
			return luaLib{}, fmt.Errorf("lanes: common.lua line %d: \"end\" before the first helper", i+1)
		}
	}
	if len(starts) == 0 {
		return luaLib{}, fmt.Errorf("lanes: common.lua defines no helper")
	}
	lib := luaLib{preamble: strings.Join(lines[:starts[0].at], "")}
	for n, st := range starts {
		end := len(lines)
		if n+1 < len(starts) {
			end = starts[n+1].at
		}
		h := luaHelper{name: st.name, src: strings.Join(lines[st.at:end], "")}
		for _, c := range luaCalls(h.src) {
			if c != h.name && seen[c] {
				h.uses = append(h.uses, c)
			}
		}
		lib.helpers = append(lib.helpers, h)
	}
	return lib, nil
}

// luaCalls returns the names src's code mentions, each once: every word
// outside comments, not only those followed by "(" (a helper may be passed
// as a value, or called as f'x' or f (x)), strings included. A helper is
// never left out of a script that names it; one included for a word that
// is no use of it costs only its definition.
func luaCalls(src string) []string {
	var names []string
	seen := map[string]bool{}
	for _, line := range strings.Split(src, "\n") {
		for _, name := range luaName.FindAllString(luaCode(line), -1) {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names
}

// luaCode returns line without its comment: from the first "--" outside a
// quoted string ('...' or "...", with backslash escapes). (Our scripts use
// no long strings or block comments.)
func luaCode(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case quote != 0 && ch == '\\':
			i++
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '-' && i+1 < len(line) && line[i+1] == '-':
			return line[:i]
		}
	}
	return line
}

// source returns body preceded by the preamble and the helpers it calls,
// directly or through other helpers, in file order.
func (lib luaLib) source(body string) string {
	byName := make(map[string]luaHelper, len(lib.helpers))
	for _, h := range lib.helpers {
		byName[h.name] = h
	}
	need := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		h, ok := byName[name]
		if !ok || need[name] {
			return
		}
		need[name] = true
		for _, u := range h.uses {
			add(u)
		}
	}
	for _, c := range luaCalls(body) {
		add(c)
	}
	var b strings.Builder
	b.WriteString(lib.preamble)
	for _, h := range lib.helpers {
		if need[h.name] {
			b.WriteString(h.src)
		}
	}
	b.WriteString("\n")
	b.WriteString(body)
	return b.String()
}
