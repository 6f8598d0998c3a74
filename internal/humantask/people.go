package humantask

// Directory is where people come from: it authenticates users and knows
// who belongs to which group. FileDirectory is the one orchd has; an LDAP
// or OIDC directory implements the same interface. Its methods are safe
// for concurrent use.
type Directory interface {
	// Authenticate checks user's password and returns its identity. An
	// unknown user and a wrong password are the same error (ErrAuth),
	// answered in the same time.
	Authenticate(user, password string) (Identity, error)
	// Lookup returns a known user's identity (its groups), without a
	// password: the engine uses it to resolve who holds a role.
	Lookup(user string) (Identity, bool)
	// Members lists the users of a group (nil for an unknown group).
	Members(group string) []string
}
