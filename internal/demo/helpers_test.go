package demo

import (
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// tgemuMsg is a bot message for match tests: t ms after base, replying to
// message re.
type tgemuMsg struct{ t, re int }

type tgemuMsgs []tgemuMsg

func (ms tgemuMsgs) msgs(base time.Time) []tgemu.Message {
	out := make([]tgemu.Message, len(ms))
	for i, m := range ms {
		out[i] = tgemu.Message{ID: 100 + i, Time: base.Add(time.Duration(m.t) * time.Millisecond), ReplyToMessageID: m.re}
	}
	return out
}
