package humantask

import (
	"slices"
	"strings"

	"github.com/beevik/etree"
)

// roleSet is the roles a caller holds on one task.
type roleSet map[Role]bool

// system reports whether the caller is the engine itself.
func (r roleSet) system() bool { return r["system"] }

// sees reports whether the caller may see the task at all.
func (r roleSet) sees() bool {
	return r.system() || r[PotentialOwners] || r[ActualOwner] || r[BusinessAdministrators] || r[TaskInitiator] ||
		r[TaskStakeholders] || r[Recipients]
}

// any reports whether the caller holds one of rs (the engine holds all).
func (r roleSet) any(rs ...Role) bool {
	if r.system() {
		return true
	}
	for _, x := range rs {
		if r[x] {
			return true
		}
	}
	return false
}

// includes reports whether who is one of ents: named, or a member of one
// of its groups.
func includes(ents Entities, who Identity) bool {
	if who.User != "" && slices.Contains(ents.Users, who.User) {
		return true
	}
	for _, g := range who.Groups {
		if slices.Contains(ents.Groups, g) {
			return true
		}
	}
	return false
}

// rolesOf is the roles who holds on t. An excluded owner is never a
// potential owner (the four-eyes rule), whatever group it is in.
func rolesOf(t *Task, who Identity) roleSet {
	r := roleSet{}
	if who.system {
		r["system"] = true
		return r
	}
	if who.User == "" {
		return r
	}
	excluded := includes(t.People[ExcludedOwners], who)
	r[ExcludedOwners] = excluded
	r[PotentialOwners] = !excluded && includes(t.People[PotentialOwners], who)
	r[ActualOwner] = t.ActualOwner != "" && t.ActualOwner == who.User
	r[BusinessAdministrators] = includes(t.People[BusinessAdministrators], who)
	r[TaskInitiator] = includes(t.People[TaskInitiator], who)
	r[TaskStakeholders] = includes(t.People[TaskStakeholders], who)
	r[Recipients] = includes(t.People[Recipients], who)
	return r
}

// resolve turns a definition's people references into entities: a
// logical people group is the directory group its "role" or "group"
// argument names (WSO2 BPS's way), the user its "user" argument names,
// or else the group of its own name; an expression over the input
// yields user names (each node's string value, comma-separated lists
// split).
func resolve(refs []PeopleRef, input *etree.Element, ns map[string]string) (Entities, error) {
	var e Entities
	add := func(list *[]string, v string) {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, ref := range refs {
		switch {
		case ref.Group.Local != "":
			switch {
			case ref.Args["role"] != "":
				add(&e.Groups, ref.Args["role"])
			case ref.Args["group"] != "":
				add(&e.Groups, ref.Args["group"])
			case ref.Args["user"] != "":
				add(&e.Users, ref.Args["user"])
			default:
				add(&e.Groups, ref.Group.Local)
			}
		case !ref.Literal.Empty():
			for _, u := range ref.Literal.Users {
				add(&e.Users, u)
			}
			for _, g := range ref.Literal.Groups {
				add(&e.Groups, g)
			}
		case ref.Expr != "":
			s, err := evalString(ref.Expr, &exprData{input: input}, ns)
			if err != nil {
				return Entities{}, err
			}
			for _, u := range strings.Split(s, ",") {
				add(&e.Users, u)
			}
		}
	}
	return e, nil
}
