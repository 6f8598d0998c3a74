package process

import "errors"

// ErrNoProcess is returned for an endpoint that no deployed process serves.
var ErrNoProcess = errors.New("no process serves this endpoint")

// ErrVersionNotDeployed marks a run of a stored instance whose process
// version (its checkpoint's fingerprint) this engine has neither active
// nor retired: in a cluster during a rolling upgrade, another node may
// have it.
var ErrVersionNotDeployed = errors.New("process version not deployed")

// DefaultMaxSteps is the step budget of one run of an instance when
// neither Options.MaxSteps nor deploy.xml's orchd:maxSteps sets one.
const DefaultMaxSteps = 1_000_000
