package admin

import (
	"testing"

	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// adminID is the admin's user id in these tests (that of internal/app's).
const adminID = 9001
