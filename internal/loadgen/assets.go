package loadgen

import _ "embed"

// defaultBody is read-only: DefaultBody hands out copies.
//
//go:embed assets/po-request.xml
var defaultBody []byte

// DefaultBody returns a copy of the example purchase-order request
// (po-request.xml of the workload contract), the default request body.
func DefaultBody() []byte { return append([]byte(nil), defaultBody...) }
