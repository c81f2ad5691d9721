package main

import (
	"context"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

func benchClaimLatency(context.Context, config, *valkeytest.Server, *table) error { return nil }
func benchFairness(context.Context, config, *valkeytest.Server, *table) error     { return nil }
func benchWeights(context.Context, config, *valkeytest.Server, *table) error      { return nil }
func benchBudget(context.Context, config, *valkeytest.Server, *table) error       { return nil }
func benchBroadcast(context.Context, config, *valkeytest.Server, *table) error    { return nil }
