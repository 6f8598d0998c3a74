package soap

// Log attribute keys.
const (
	logKeyProcess = "process"
	logKeyOp      = "op"
	logKeyPath    = "path"
	logKeyPartner = "partner"
	logKeyStatus  = "status"
	logKeyErr     = "err"
	logKeyPanic   = "panic"
	logKeyStack   = "stack"
)
