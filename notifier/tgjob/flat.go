package tgjob

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// decodeFlat decodes payload p without reflection when it has the shape
// Encode gives a job without escapes (every copy of a lazy broadcast,
// ChatEncoder's too): one JSON object, no whitespace, whose keys are Job's
// own field names in their exact case, whose strings hold no backslash,
// control character or invalid UTF-8, whose numbers are integers
// (-?(0|[1-9][0-9]*), in range) and whose other values are true or false.
// ok is false for any other payload (j is then not to be used), which
// Decode gives to encoding/json, whose result is the same where decodeFlat
// takes it (FuzzFlatDecodeIsEncodingJSONs). encoding/json took about 4 µs
// and 7 allocations per copy on the worker's send path (BenchmarkDecode).
func decodeFlat(p []byte) (j Job, ok bool) {
	if len(p) < 2 || p[0] != '{' || p[len(p)-1] != '}' {
		return j, false
	}
	rest := p[1 : len(p)-1]
	for len(rest) > 0 {
		var key, val []byte
		if key, rest, ok = flatString(rest); !ok || len(rest) == 0 || rest[0] != ':' {
			return j, false
		}
		rest = rest[1:]
		// The value runs to the next ',' outside a string: a string
		// (no escapes, so its closing quote is the next quote) or a bare
		// literal.
		if len(rest) > 0 && rest[0] == '"' {
			if val, rest, ok = flatString(rest); !ok {
				return j, false
			}
			if !j.setString(key, val) {
				return j, false
			}
		} else {
			n := bytes.IndexByte(rest, ',')
			if n < 0 {
				n = len(rest)
			}
			if val, rest = rest[:n], rest[n:]; !j.setLiteral(key, val) {
				return j, false
			}
		}
		if len(rest) > 0 {
			if rest[0] != ',' || len(rest) == 1 {
				return j, false
			}
			rest = rest[1:]
		}
	}
	return j, true
}

// flatString reads a JSON string at the start of b: its contents (no
// backslash, no control character, valid UTF-8) and what follows it.
func flatString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return nil, b, false
	}
	s = b[1 : 1+end]
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return nil, b, false
		}
	}
	if !utf8.Valid(s) {
		return nil, b, false
	}
	return s, b[2+end:], true
}

// setString sets the string field named key to v; false for a key that
// is not one.
func (j *Job) setString(key, v []byte) bool {
	var f *string
	switch string(key) {
	case "kind":
		f = &j.Kind
	case "ref":
		f = &j.Ref
	case "rm":
		f = &j.Markup
	case "text":
		f = &j.Text
	case "pm":
		f = &j.ParseMode
	case "bc":
		f = &j.Broadcast
	case "l":
		f = &j.Lang
	default:
		return false
	}
	switch string(v) { // the kinds, without a copy of their bytes
	case KindCopy:
		*f = KindCopy
	case KindEdit:
		*f = KindEdit
	default:
		*f = string(v)
	}
	return true
}

// setLiteral sets the number or boolean field named key to literal v;
// false for a key that is not one, or a literal that is not its kind's as
// decodeFlat takes it.
func (j *Job) setLiteral(key, v []byte) bool {
	switch string(key) {
	case "fresh", "trk", "sil":
		var b bool
		switch string(v) {
		case "true":
			b = true
		case "false":
		default:
			return false
		}
		switch string(key) {
		case "fresh":
			j.Fresh = b
		case "trk":
			j.Track = b
		default:
			j.Silent = b
		}
		return true
	case "chat":
		n, ok := flatInt(v, 64)
		j.Chat = n
		return ok
	}
	var f *int
	switch string(key) {
	case "v":
		f = &j.V
	case "mid":
		f = &j.MessageID
	case "rt":
		f = &j.ReplyTo
	case "part":
		f = &j.Part
	case "parts":
		f = &j.Parts
	default:
		return false
	}
	n, ok := flatInt(v, strconv.IntSize)
	*f = int(n)
	return ok
}

// flatInt parses a JSON integer (-?(0|[1-9][0-9]*)) of bits bits.
func flatInt(v []byte, bits int) (int64, bool) {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || (d[0] == '0' && len(d) > 1) {
		return 0, false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	return n, err == nil
}
