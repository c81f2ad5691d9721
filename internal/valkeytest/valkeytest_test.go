package valkeytest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

func TestSharedServerAnswersAndNamespacesDiffer(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Shared(t)
	c := srv.Client(t)
	ctx := context.Background()
	a, b := valkeytest.Namespace(t), valkeytest.Namespace(t)
	require.NotEqual(t, a, b)
	require.NoError(t, c.Do(ctx, c.B().Set().Key("{"+a+"}:k").Value("1").Build()).Error())
	keys, err := valkeytest.Keys(ctx, c, "{"+a+"}:*")
	require.NoError(t, err)
	require.Equal(t, []string{"{" + a + "}:k"}, keys)
	keys, err = valkeytest.Keys(ctx, c, "{"+b+"}:*")
	require.NoError(t, err)
	require.Empty(t, keys)
}

func TestDedicatedServerRestartKeepsAppendOnlyWrites(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Start(t, valkeytest.Options{AppendOnly: true})
	ctx := context.Background()
	c, err := srv.NewClient()
	require.NoError(t, err)
	require.NoError(t, c.Do(ctx, c.B().Set().Key("k").Value("v").Build()).Error())
	c.Close()
	srv.Restart(t)
	c2 := srv.Client(t)
	v, err := c2.Do(ctx, c2.B().Get().Key("k").Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, "v", v)
}
