package broadcast

// Keys builds every key this package keeps, under the program's hash tag T
// (docs/keys.md lists them with the rest). The strings are those the app
// kept before this package existed: they must stay byte-identical, since
// running deployments hold data under them (TestKeysAreTheDeployedOnes).
// Nothing outside this package writes them; Keys is exported for tests
// that seed or inspect the data.
//
//	{T}:app:bc        hash  tracked broadcasts: broadcast id -> tracked JSON (the progress message kept up to date)
//	{T}:app:bcp:<id>  hash  a broadcast preview waiting for Send or Cancel (decide.lua)
//	{T}:app:bcl:<composer>  string  a composer's latest preview, "<id>|<origin>" (latest.lua)
type Keys struct{ tag string }

// NewKeys returns the keys under hash tag tag (lanes.DefaultTag unless the
// program says otherwise).
func NewKeys(tag string) Keys { return Keys{tag: tag} }

func (k Keys) prefix() string { return "{" + k.tag + "}:app:" }

// Tracked is the hash of the tracked broadcasts (tracking.go).
func (k Keys) Tracked() string { return k.prefix() + "bc" }

// Preview is broadcast preview id's hash (preview.go).
func (k Keys) Preview(id string) string { return k.prefix() + "bcp:" + id }

// Latest is composer's latest preview (preview.go, latest.lua): composer
// is "tg:<admin user id>" or "console:<session>".
func (k Keys) Latest(composer string) string { return k.prefix() + "bcl:" + composer }
