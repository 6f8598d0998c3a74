// Package suggest finds, for a name nobody knows (a typo in deploy.xml, an
// unknown XPath function), the closest name that is known, by edit
// distance, for "did you mean ...?" in error messages. It owns only that
// rule; it imports nothing of orchd, and must not: the deploy descriptor
// parser and the expression compilers use it.
package suggest
