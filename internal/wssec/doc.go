// Package wssec owns orchd's WS-Security: the OASIS WSS 1.1
// UsernameToken Profile and the wsu:Timestamp of the SOAP Message
// Security spec. Inbound, an Authenticator checks the wsse:Security
// header of a request to a provided endpoint against a credentials file
// (bcrypt hashes for PasswordText, plain secrets where PasswordDigest
// needs them; every refusal costing one bcrypt comparison, in a slot of a
// Gate shared by the server's Authenticators), the token's freshness,
// and a replay store of the nonces
// seen (ReplayStore: in memory by default; with --cluster one in etcd
// that the nodes share, internal/cluster's Nonces); outbound, a Signer makes the wsse:Security header (a
// UsernameToken of either password type and a Timestamp) of every call
// to a partner.
//
// It knows nothing of BPEL, of deploy.xml or of HTTP: deploy.xml's
// orchd:usernameToken is read by internal/process/deploy, which builds
// these; internal/soap calls them through exchange's Authenticator and
// SecurityHeader interfaces. It imports no orchd package. It never logs
// and its errors never hold a password.
package wssec
