package app

import (
	"log/slog"
	"time"
)

// durationAttr logs d as text ("500ms", "2m0s"): slog.Duration is written
// as integer nanoseconds by the JSON handler, which nobody reads well.
func durationAttr(key string, d time.Duration) slog.Attr { return slog.String(key, d.String()) }
