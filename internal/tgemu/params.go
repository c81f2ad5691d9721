package tgemu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// maxBody bounds a request body (Telegram accepts up to 50 MB uploads; the
// emulator needs far less).
const maxBody = 8 << 20

// readParams collects the request parameters as strings, the way Telegram
// accepts them: URL query string, then the body as multipart/form-data,
// application/x-www-form-urlencoded or application/json. Non-string JSON
// values (numbers, arrays, objects) are kept as their JSON text, which is
// also how multipart clients send them. An empty body is no parameters
// (go-telegram/bot sends an empty multipart body for getMe).
func readParams(r *http.Request) (map[string]string, error) {
	params := make(map[string]string)
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			params[k] = v[0]
		}
	}
	if r.Body == nil {
		return params, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("can't read request body: %w", err)
	}
	if len(body) > maxBody {
		return nil, errors.New("request body is too big")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return params, nil
	}
	mediaType, mparams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "multipart/form-data":
		if err := readMultipart(body, mparams["boundary"], params); err != nil {
			return nil, err
		}
	case "application/json":
		if err := readJSON(body, params); err != nil {
			return nil, err
		}
	default: // application/x-www-form-urlencoded, or unspecified
		v, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("can't parse form body: %w", err)
		}
		for k, vs := range v {
			if len(vs) > 0 {
				params[k] = vs[0]
			}
		}
	}
	return params, nil
}

func readMultipart(body []byte, boundary string, params map[string]string) error {
	if boundary == "" {
		return errors.New("multipart body without boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("can't parse multipart body: %w", err)
		}
		v, err := io.ReadAll(part)
		if err != nil {
			return fmt.Errorf("can't read multipart part %q: %w", part.FormName(), err)
		}
		if name := part.FormName(); name != "" {
			params[name] = string(v)
		}
	}
}

func readJSON(body []byte, params map[string]string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("can't parse JSON body: %w", err)
	}
	for k, raw := range m {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			params[k] = s
			continue
		}
		params[k] = strings.TrimSpace(string(raw))
	}
	return nil
}
