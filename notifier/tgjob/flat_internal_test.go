package tgjob

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// flatSeeds are payloads as Encode and ChatEncoder write them, and shapes
// around decodeFlat's edges.
func flatSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, j := range []Job{
		{Kind: KindCopy, Chat: 1000012345, Broadcast: "01JFZ3V7Q7W8X9Y0Z1A2B3C4D5", Part: 1, Parts: 2, Lang: "de"},
		{Chat: -1001234567890, Text: "🔐 New code <b>x</b> & \"q\"\nline", ParseMode: "HTML", ReplyTo: 7, Silent: true, Track: true},
		{Kind: KindEdit, MessageID: 42, Ref: "job_1", Fresh: true, Chat: 5, Text: "plain", Markup: `{"inline_keyboard":[]}`},
	} {
		p, err := j.Encode()
		require.NoError(t, err)
		out = append(out, p)
	}
	for _, s := range []string{
		`{}`, `{"v":1}`, `{"v":1,}`, `{"v":01}`, `{"v":-0}`, `{"v":-}`, `{"v":1.5}`, `{"v":1e2}`, `{"v":null}`,
		`{"v":9223372036854775808}`, `{"chat":-9223372036854775808}`, `{"V":1}`, `{"x":1}`, `{"v":1,"v":2}`,
		`{"sil":true,"trk":false,"fresh":true}`, `{"sil":"true"}`, `{"text":1}`, `{"text":"a\u00e9"}`, `{"text":"a` + "\xff" + `"}`,
		`{"text":"tab	here"}`, ` {"v":1}`, `{"v":1} `, `{"v" :1}`, `{"v":1}x`, `{"text":"a"x}`, `{"v"}`, `{"v":}`, `{,}`, `{`, `}`, ``,
		`{"bc":"a","l":"","pm":"HTML","rm":"{}","ref":"r","kind":"edit","mid":3,"rt":4,"part":1,"parts":1}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// Where decodeFlat takes a payload, encoding/json takes it too and decodes
// the same job; what decodeFlat leaves is decoded by encoding/json (Decode).
func FuzzFlatDecodeIsEncodingJSONs(f *testing.F) {
	for _, p := range flatSeeds(f) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		got, ok := decodeFlat(p)
		if !ok {
			return
		}
		var want Job
		require.NoError(t, json.Unmarshal(p, &want), "decodeFlat took %q", p)
		require.Equal(t, want, got, "%q", p)
	})
}

// The payloads of the send path's common jobs, a lazy broadcast's copy
// first, are decoded without encoding/json (Decode of a copy allocates
// its broadcast id and little else: encoding/json's took 7 allocations); a
// payload with an escape, a key in another case or an unknown key is left
// to it.
func TestACopysPayloadIsDecodedWithoutEncodingJSON(t *testing.T) {
	copyOf, err := Job{Kind: KindCopy, Broadcast: "01JFZ3V7Q7W8X9Y0Z1A2B3C4D5", Part: 1, Parts: 1}.ChatEncoder()
	require.NoError(t, err)
	p := copyOf(1000012345)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Decode(p); err != nil {
			panic(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0, "allocations per Decode of a copy")
	for _, c := range []struct {
		name string
		p    []byte
		flat bool
	}{
		{"a lazy broadcast's copy", copyOf(1000012345), true},
		{"a plain reply", []byte(`{"v":1,"chat":5,"text":"Hello","rt":3,"sil":true}`), true},
		{"a text with a newline (escaped)", []byte(`{"v":1,"chat":5,"text":"a\nb"}`), false},
		{"a key in another case", []byte(`{"V":1,"chat":5,"text":"a"}`), false},
		{"an unknown key", []byte(`{"v":1,"chat":5,"text":"a","x":1}`), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := decodeFlat(c.p)
			require.Equal(t, c.flat, ok)
			want, err := Decode(c.p)
			if ok {
				require.NoError(t, err)
				require.Equal(t, want, got)
			}
		})
	}
}

// BenchmarkDecode is Decode of a lazy broadcast's copy, and encoding/json's
// decoding of the same payload (the path before decodeFlat).
func BenchmarkDecode(b *testing.B) {
	copyOf, err := Job{Kind: KindCopy, Broadcast: "01JFZ3V7Q7W8X9Y0Z1A2B3C4D5", Part: 1, Parts: 1}.ChatEncoder()
	require.NoError(b, err)
	p := copyOf(1000012345)
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var j Job
			if err := json.Unmarshal(p, &j); err != nil {
				b.Fatal(err)
			}
		}
	})
}
