package main

import (
	"log/slog"

	"github.com/codemojex/codemojex/internal/config"
)

// fdHeadroom is the file descriptors a process needs besides its senders'
// connections: Valkey connections, the HTTP listener, the console, logs
// (docs/delivery.md, "the cap").
const fdHeadroom = 64

// fileLimitShort says whether a process that sends (BOT_ROLE all or worker)
// may open more connections than its file-descriptor limit allows: over
// HTTP/1.1 each sender in use holds one connection, so WORKERS senders need
// WORKERS + fdHeadroom descriptors. limit and ok come from fileLimit.
func fileLimitShort(cfg config.Config, limit uint64, ok bool) bool {
	return ok && cfg.Sends() && limit < uint64(cfg.Workers)+fdHeadroom
}

// warnFileLimit logs a warning at start when fileLimitShort: sends past
// the limit would fail with "too many open files" and be retried, capping
// the rate below the budget. It changes nothing; the fix is the
// operator's (ulimit -n, Docker's --ulimit nofile=, or a lower WORKERS).
func warnFileLimit(log *slog.Logger, cfg config.Config) {
	limit, ok := fileLimit()
	if !fileLimitShort(cfg, limit, ok) {
		return
	}
	log.Warn("file-descriptor limit below WORKERS + 64: raise it (ulimit -n, docker --ulimit nofile=) or lower WORKERS",
		slog.Uint64("nofile", limit), slog.Int("workers", cfg.Workers), slog.Int("needed", cfg.Workers+fdHeadroom))
}
