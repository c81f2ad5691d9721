package admin

// Keys builds the keys this package keeps, under the program's hash tag
// T (docs/keys.md lists it with the rest). The string is the one of the
// deployments before this package existed (internal/app kept it): it must
// stay byte-identical, since running deployments hold their audit trail
// under it (TestKeysAreTheDeployedOnes). Nothing outside this package
// writes it.
//
//	{T}:app:audit  stream  admin actions that changed state: admin, action, detail; XADD MAXLEN ~ cap
//	{T}:app:audit:once:<key>  string  the id of the entry AuditLog.RecordOnce recorded under key; PX its keep
//	{T}:app:hist   stream  the console's history: one sample a period (entry id <period start ms>-0), field p; XADD MAXLEN HistoryCap
type Keys struct{ tag string }

// NewKeys returns the keys under hash tag tag (lanes.DefaultTag unless the
// program says otherwise).
func NewKeys(tag string) Keys { return Keys{tag: tag} }

// Audit is the audit stream (AuditLog).
func (k Keys) Audit() string { return "{" + k.tag + "}:app:audit" }

// AuditOnce is the marker of an action AuditLog.RecordOnce recorded under
// key (recordonce.lua), e.g. "stop:bc_01H…".
func (k Keys) AuditOnce(key string) string { return k.Audit() + ":once:" + key }

// History is the console's history stream (Admin.RecordSample).
func (k Keys) History() string { return "{" + k.tag + "}:app:hist" }
