package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/joho/godotenv"
)

// utf8BOM is the byte order mark some Windows editors write before line 1.
var utf8BOM = []byte("\xEF\xBB\xBF")

// loadDotenv sets the variables of the .env file at path that are not set
// yet, like godotenv.Load, after dropping a leading UTF-8 byte order mark
// and checking that every assignment line has a variable name followed by
// '=' (godotenv would silently read "NAME value" as a variable with a
// space in its name, or run on into the next line). Errors: *DotenvError.
func loadDotenv(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return dotenvError(path, nil, err)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if line, problem := badLine(data); line > 0 {
		return &DotenvError{File: path, Line: line, Problem: problem + notShown}
	}
	vars, err := godotenv.UnmarshalBytes(data)
	if err != nil {
		return dotenvError(path, data, err)
	}
	for k, v := range vars {
		if _, set := os.LookupEnv(k); !set {
			if err := os.Setenv(k, v); err != nil {
				return &DotenvError{File: path, Problem: "cannot set a variable: " + err.Error()}
			}
		}
	}
	return nil
}

// notShown ends a DotenvError's Problem about a line: its text may hold
// the token.
const notShown = " (the line is not shown: it may hold the token)"

// Problems of a .env line, as badLine reports them.
const (
	problemNoAssignment = "not a NAME=value line: no '=' after the variable name"
	problemNoName       = "no variable name before '='"
	problemBadName      = "a variable name has a character other than letters, digits and '_', " +
		"or starts with a digit (POSIX: [A-Za-z_][A-Za-z0-9_]*)"
)

// badLine returns the first line (1-based) of data (LF line ends) that
// starts a statement godotenv would misread, and what is wrong with it
// (problemNoAssignment, problemNoName, problemBadName), or 0 and "": a
// statement without '=' (or godotenv's "NAME: value") after one word, the
// variable name; one with nothing before the '=' (os.Setenv refuses an
// empty name, without a line); one whose name is not a POSIX shell name
// (godotenv takes "1BAD" and "FOO.BAR", which no shell can read or set).
// Blank lines, comments and the lines of a multi-line quoted value are
// skipped; an unterminated quote ends the scan (godotenv reports it).
func badLine(data []byte) (int, string) {
	line := 1
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			end = len(data)
		}
		stmt := bytes.TrimSpace(data[:end])
		if len(stmt) == 0 || stmt[0] == '#' {
			line, data = nextLine(data, end, line)
			continue
		}
		stmt = bytes.TrimPrefix(stmt, []byte("export "))
		sep := bytes.IndexAny(stmt, "=:")
		if sep < 0 || spacedName(bytes.TrimSpace(stmt[:sep])) {
			return line, problemNoAssignment
		}
		switch name := bytes.TrimSpace(stmt[:sep]); {
		case len(name) == 0:
			return line, problemNoName
		case !posixName(name):
			return line, problemBadName
		}
		// A quoted value may run over several lines: skip to its closing quote.
		rest := data[cap(data)-cap(stmt)+sep+1:] // stmt is a subslice of data
		val := bytes.TrimLeft(rest, " \t")
		if len(val) > 0 && (val[0] == '"' || val[0] == '\'') {
			closing := closingQuote(val)
			if closing < 0 {
				return 0, ""
			}
			consumed := len(data) - len(val) + closing
			line += bytes.Count(data[:consumed], []byte("\n"))
			data = data[consumed:]
			end = bytes.IndexByte(data, '\n')
			if end < 0 {
				end = len(data)
			}
		}
		line, data = nextLine(data, end, line)
	}
	return 0, ""
}

// posixName reports whether name is a POSIX shell variable name:
// [A-Za-z_][A-Za-z0-9_]* (POSIX.1-2017, XBD 3.235 "Name").
func posixName(name []byte) bool {
	for i, c := range name {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return len(name) > 0
}

// spacedName reports whether name is words of variable-name characters
// (letters, digits, '_', '.') with spaces between them: "NAME value"
// before a ':' in the value (godotenv's "NAME: value" separator).
func spacedName(name []byte) bool {
	if !bytes.ContainsFunc(name, unicode.IsSpace) {
		return false
	}
	return !bytes.ContainsFunc(name, func(r rune) bool {
		return !unicode.IsSpace(r) && r != '_' && r != '.' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func nextLine(data []byte, end, line int) (int, []byte) {
	if end >= len(data) {
		return line, nil
	}
	return line + 1, data[end+1:]
}

// closingQuote returns the index in val (which starts with a quote) of
// the quote that closes it (a '"' not escaped by '\\'), or -1.
func closingQuote(val []byte) int {
	q := val[0]
	for i := 1; i < len(val); i++ {
		if val[i] == '\\' && q == '"' {
			i++
			continue
		}
		if val[i] == q {
			return i
		}
	}
	return -1
}

// DotenvError is a .env file that cannot be read or is malformed. It never
// quotes the file's content: the line at fault may hold the token.
type DotenvError struct {
	File    string // the .env file's path
	Line    int    // the line at fault (1-based), 0 when unknown
	Problem string // what is wrong, without any value
}

func (e *DotenvError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += fmt.Sprintf(": line %d", e.Line)
	}
	return where + ": " + e.Problem
}

// dotenvError turns godotenv's error about data, the .env file's content
// (BOM dropped, LF line ends), into a *DotenvError. godotenv's own
// message quotes the raw text around the mistake (the token, when it is
// the bad line), so it is never passed on: only its kind and, found from
// the file itself, the line number.
func dotenvError(file string, data []byte, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &DotenvError{File: file, Problem: "cannot read the file: " + pe.Err.Error()}
	}
	e := &DotenvError{File: file, Problem: "malformed; check its quotes and variable names" + notShown}
	lineOf := func(off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }
	msg := err.Error()
	if snippet, ok := strings.CutPrefix(msg, "unterminated quoted value "); ok && snippet != "" {
		// godotenv found no closing quote after the opening one up to the
		// end of the file, so the opening quote is the file's last quote
		// of its kind that is not escaped.
		e.Problem = "a quoted value has no closing " + snippet[:1] + notShown
		q := snippet[0]
		for i := len(data) - 1; i >= 0; i-- {
			if data[i] == q && (i == 0 || data[i-1] != '\\') {
				if bytes.HasPrefix(data[i:], []byte(snippet)) {
					e.Line = lineOf(i)
				}
				break
			}
		}
		return e
	}
	if _, near, ok := strings.Cut(msg, " in variable name near "); ok && strings.HasPrefix(msg, "unexpected character ") {
		// near is the rest of the file from the bad variable name, quoted.
		e.Problem = problemBadName + notShown
		if rest, qerr := strconv.Unquote(near); qerr == nil && rest != "" && bytes.HasSuffix(data, []byte(rest)) {
			e.Line = lineOf(len(data) - len(rest))
		}
	}
	return e
}

// EmptyOverrides returns the names, sorted, of the variables the .env file
// at path gives a value that the environment sets to "" (after Load, which
// keeps a set variable, empty or not, as godotenv and docker compose do):
// an empty value left in a compose file's environment or a shell's
// `export NAME=` silently beats the file, which is rarely meant. nil when
// the file is absent, unreadable or malformed (Load reports those). The
// values are never returned: they may hold the token.
func EmptyOverrides(path string) []string {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	data = bytes.ReplaceAll(bytes.TrimPrefix(data, utf8BOM), []byte("\r\n"), []byte("\n"))
	vars, err := godotenv.UnmarshalBytes(data)
	if err != nil {
		return nil
	}
	var out []string
	for k, v := range vars {
		if got, set := os.LookupEnv(k); set && got == "" && v != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
