package play_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/demo"
	"github.com/codemojex/codemojex/internal/play"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// A database that already holds keys is refused, nothing started, in the
// name of what was run: the playground's error says "play", not "demo"
// (make play on a non-empty -valkey-url said "the demo needs an empty
// database"); the demo's still says "demo"; either says how to go on.
func TestADatabaseInUseIsRefusedInTheNameOfWhatRuns(t *testing.T) {
	srv := valkeytest.Start(t, valkeytest.Options{})
	c := srv.Client(t)
	require.NoError(t, c.Do(context.Background(), c.B().Set().Key("someone-elses").Value("x").Build()).Error())
	stack := demo.Options{BotBinary: "/nonexistent/bot", ValkeyURL: srv.URL} // refused before the bot is run
	for _, tc := range []struct {
		name  string
		start func() error
		want  string
	}{
		{"playground", func() error {
			_, err := play.Start(context.Background(), nil, play.Options{Addr: "127.0.0.1:0", Stack: stack})
			return err
		}, "play: "},
		{"demo's stack", func() error {
			_, err := demo.StartStack(context.Background(), nil, stack)
			return err
		}, "demo: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.start()
			require.EqualError(t, err, fmt.Sprintf("%s%s holds 1 key: it needs an empty database (the bot's keys would mix with them): "+
				"flush it, or leave out -valkey-url for a throwaway server", tc.want, srv.URL))
		})
	}
}
