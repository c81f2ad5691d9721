// Package tapdata signs and verifies the callback data of inline keyboard
// buttons (what a tap sends back).
//
// Callback data (the callback_data of an inline keyboard button) is at most
// 64 bytes and comes back from the client: anyone can send any bytes. Every
// button the bot makes carries
//
//	<version><kind>|<scope>|<arg>|<sig>
//
// version is Version ("1"); kind is one byte naming the handler (KindGame:
// a game board; KindBroadcast: broadcast preview, progress and halt
// buttons); scope ties the tap to what the button was made for (the game
// id: a button of a finished or replaced game is refused); arg is the
// action; sig is the first 12 bytes of HMAC-SHA256(key,
// "<version><kind>|<scope>|<arg>|<chat id>") in unpadded base64url (16
// characters). The chat id is signed but not carried (the tap's message
// names it), so a button copied to another chat does not verify. The key
// is HMAC-SHA256(bot token, KeyLabel): derived, so no extra secret to
// configure, domain-separated from any other use of the token, and never
// logged (only the redacted token ever reaches a log).
//
// A replayed tap (the same update again) is handled once by the inbox; a
// button of an earlier game fails the scope check; a forged, truncated,
// re-versioned or re-signed one fails the signature check.
package tapdata

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

const (
	// Version is the first byte of every callback data.
	Version = '1'
	// KeyLabel derives the signing key from the bot token.
	KeyLabel = "codemojex/callback_data/v1"
	sigBytes = 12
	// MaxData is Telegram's limit on callback_data, in bytes.
	MaxData = 64
)

// Kinds (the byte after the version).
const (
	KindGame      byte = 'g'
	KindBroadcast byte = 'b' // broadcast preview (Send, Cancel), progress (Stop) and halt buttons
	KindLanguage  byte = 'l' // the /language menu's buttons (arg: the language)
)

// Errors of Decode; a router answers each with a toast.
var (
	ErrMalformed = errors.New("callback data malformed")
	ErrVersion   = errors.New("callback data of another version")
	ErrSignature = errors.New("callback data signature mismatch")
)

// Data is a verified button payload.
type Data struct {
	Kind  byte
	Scope string
	Arg   string
}

// Codec signs and verifies callback data with a key derived from the bot
// token. The zero value is not usable: use New.
type Codec struct{ key []byte }

// New returns the codec of the bot whose token is token.
func New(token string) Codec {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(KeyLabel))
	return Codec{key: m.Sum(nil)}
}

func (c Codec) sig(body string, chat int64) string {
	m := hmac.New(sha256.New, c.key)
	fmt.Fprintf(m, "%s|%d", body, chat)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:sigBytes])
}

// Encode returns the signed callback_data of a button for chat. scope and
// arg must not contain '|'; the result must fit MaxData (an error
// otherwise: a programming error, caught by the tests).
func (c Codec) Encode(kind byte, scope, arg string, chat int64) (string, error) {
	if strings.ContainsRune(scope, '|') || strings.ContainsRune(arg, '|') {
		return "", fmt.Errorf("callback data: '|' in scope %q or arg %q", scope, arg)
	}
	body := string([]byte{Version, kind}) + "|" + scope + "|" + arg
	d := body + "|" + c.sig(body, chat)
	if len(d) > MaxData {
		return "", fmt.Errorf("callback data of %d bytes: at most %d", len(d), MaxData)
	}
	return d, nil
}

// Decode verifies data from a tap in chat. Errors: ErrMalformed,
// ErrVersion, ErrSignature.
func (c Codec) Decode(data string, chat int64) (Data, error) {
	if len(data) < 2 || len(data) > MaxData {
		return Data{}, ErrMalformed
	}
	parts := strings.Split(data, "|")
	if len(parts) != 4 || len(parts[0]) != 2 {
		return Data{}, ErrMalformed
	}
	if parts[0][0] != Version {
		return Data{}, ErrVersion
	}
	body := strings.Join(parts[:3], "|")
	if !hmac.Equal([]byte(parts[3]), []byte(c.sig(body, chat))) {
		return Data{}, ErrSignature
	}
	return Data{Kind: parts[0][1], Scope: parts[1], Arg: parts[2]}, nil
}
