package worker

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// state.claimed keeps the first failure's time while claims keep failing,
// the last failure's error, and clears both at a claim that succeeds.
func TestClaimStateKeepsTheFirstFailure(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	fail := errors.New("x")
	tests := []struct {
		name  string
		steps []error // one claim a second from t0: nil succeeds
		want  ClaimState
	}{
		{"none", nil, ClaimState{}},
		{"ok", []error{nil}, ClaimState{LastOK: at(0)}},
		{"failing", []error{nil, fail, fail, fail}, ClaimState{LastOK: at(0), FailingSince: at(1), LastErr: "e3"}},
		{"failed then ok", []error{fail, fail, nil}, ClaimState{LastOK: at(2)}},
		{"never ok", []error{fail, fail}, ClaimState{FailingSince: at(0), LastErr: "e1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s state
			for i, err := range tc.steps {
				msg := ""
				if err != nil {
					msg = "e" + string(rune('0'+i))
				}
				s.claimed(at(i), err, msg)
			}
			require.Equal(t, tc.want, s.claims)
		})
	}
}
