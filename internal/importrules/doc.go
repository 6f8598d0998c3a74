// Package importrules holds orchd's import rules as a table a reader can
// check (rules_test.go): for each package of the module, the orchd
// packages it may import. Its test lists every import that breaks a rule,
// every package the table does not know and every row for a package that
// is gone. It has no code of its own and nothing imports it.
package importrules
