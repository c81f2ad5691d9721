package tgemu

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// apiResponse is the Bot API reply envelope
// (https://core.telegram.org/bots/api#making-requests).
type apiResponse struct {
	OK          bool                `json:"ok"`
	Result      any                 `json:"result,omitempty"`
	ErrorCode   int                 `json:"error_code,omitempty"`
	Description string              `json:"description,omitempty"`
	Parameters  *responseParameters `json:"parameters,omitempty"`
}

// responseParameters is the Bot API ResponseParameters object
// (https://core.telegram.org/bots/api#responseparameters).
type responseParameters struct {
	MigrateToChatID int64 `json:"migrate_to_chat_id,omitempty"`
	RetryAfter      int   `json:"retry_after,omitempty"` // seconds
}

// reply is what the emulator answers to one request.
type reply struct {
	status      int
	contentType string
	body        []byte

	// for the request log
	errorCode   int
	description string
	retryAfter  int
	messageID   int
	canceled    bool // the client went away (long poll); nothing to write
}

func okReply(result any) reply {
	body, err := json.Marshal(apiResponse{OK: true, Result: result})
	if err != nil {
		return errReply(http.StatusInternalServerError, "Internal Server Error: "+err.Error(), nil)
	}
	return reply{status: http.StatusOK, contentType: "application/json", body: body}
}

// okReplyDesc is an ok answer that also carries a description, as
// setWebhook and deleteWebhook answer ("Webhook was set").
func okReplyDesc(result any, description string) reply {
	body, err := json.Marshal(apiResponse{OK: true, Result: result, Description: description})
	if err != nil {
		return errReply(http.StatusInternalServerError, "Internal Server Error: "+err.Error(), nil)
	}
	return reply{status: http.StatusOK, contentType: "application/json", body: body, description: description}
}

func errReply(code int, description string, params *responseParameters) reply {
	body, _ := json.Marshal(apiResponse{ErrorCode: code, Description: description, Parameters: params})
	r := reply{status: code, contentType: "application/json", body: body, errorCode: code, description: description}
	if params != nil {
		r.retryAfter = params.RetryAfter
	}
	return r
}

func badRequest(description string) reply {
	return errReply(http.StatusBadRequest, "Bad Request: "+description, nil)
}

// tooManyRequests is Telegram's flood-control answer: 429 "Too Many
// Requests: retry after N" with parameters.retry_after N (seconds).
func tooManyRequests(retryAfter int) reply {
	return errReply(http.StatusTooManyRequests, "Too Many Requests: retry after "+strconv.Itoa(retryAfter),
		&responseParameters{RetryAfter: retryAfter})
}

func (r reply) write(w http.ResponseWriter) {
	if r.canceled {
		return
	}
	w.Header().Set("Content-Type", r.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(r.body)))
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body)
	// Flush now so the answer is on the wire before the handler returns
	// (Close waits for handlers, then closes connections).
	_ = http.NewResponseController(w).Flush()
}
