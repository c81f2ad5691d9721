package app

import (
	"context"
	"log/slog"
)

// migrateToBuckets moves what a deployment of before the buckets kept in
// one key per whole-bot structure into the buckets that replace it (the
// intake's handled marks, intake.Inbox.MigrateMarks, and its floors, which
// now live in each lane's finished set, intake.Inbox.MigrateFloors; the audience,
// chats.Audience.Migrate; the chat directory, chats.Directory.Migrate), in bounded steps, once per start, while the bot runs:
// until an entry is moved its readers read the old key too, so nothing is
// lost and nothing waits for it. It logs what it moved; an error is logged
// and left (the old keys stay read; the next start moves the rest).
func (a *App) migrateToBuckets(ctx context.Context) {
	for _, m := range []struct {
		what string
		move func(context.Context) (int, error)
	}{
		{"handled marks", a.inbox.MigrateMarks},
		{"floors", a.inbox.MigrateFloors},
		{"audience", a.audience.Migrate},
		{"chat directory", a.chatDir.Migrate},
	} {
		n, err := m.move(ctx)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("moving to the buckets failed: the old key is still read; the next start moves the rest",
					slog.String("what", m.what), slog.Int("moved", n), slog.Any("err", err))
			}
			continue
		}
		if n > 0 {
			a.log.Info("moved to the buckets", slog.String("what", m.what), slog.Int("entries", n))
		}
	}
}
