// Package xmlparse is orchd's parser for inbound XML messages (SOAP
// envelopes from requesters and partners). It builds an etree document, the
// tree type the runtime works on, directly from the bytes, in one pass and
// in time linear in the input, and it bounds what one document may cost
// with named limits.
//
// # Basics
//
// Parse takes the whole document and Options (whose zero value means the
// default Limits). It returns a *SyntaxError for input that is not
// well-formed, a *LimitError for input over a limit, or the error of the
// Options.EndElement callback.
//
// The tree is the one encoding/xml's RawToken plus etree would build (the
// parser it replaces): names keep their prefixes (etree resolves them on
// demand from the xmlns attributes, which are kept), CDATA sections become
// text, "\r\n" becomes "\n", and whitespace-only text is dropped where it
// only indents element content (see Parse).
//
// What it checks, as XML 1.0 and Namespaces in XML 1.0 require for a SOAP
// message:
//   - no DTD (DOCTYPE): SOAP forbids them, so no entity other than the five
//     predefined ones and character references exists;
//   - names, characters (valid UTF-8, XML Char), character references,
//     "]]>" not in text, "<" not in attribute values, "--" not in comments;
//   - tags match, one XML declaration only at the start;
//   - every prefix is bound, "xml" and "xmlns" are used as reserved,
//     no attribute appears twice, also not as the same namespace URI and
//     local name written with two prefixes.
//
// # Linear time
//
// Namespace scopes are a stack of bindings with a map from prefix to its
// innermost binding once an element declares more than a few; duplicate
// attributes are found by comparing pairs only for a few attributes and
// with a map above that; attribute lists are filled in place (etree's
// CreateAttr scans the element's attributes for a replacement, which made
// the previous parser quadratic). Strings are substrings of one copy of a
// small input, so most names and values cost no allocation.
//
// # Why not a served tokenizer
//
// orisano/gosax v1.1.4 and muktihari/xmltokenizer v0.0.5 are fast, but
// neither resolves namespaces, checks tags, duplicate attributes, names or
// characters; xmltokenizer decodes no references, and gosax's Unescape
// accepts &#0;, surrogates and code points beyond Unicode. Of 29 documents
// that are not well-formed (those of TestParseRejects: DTD, undefined
// entities, bad references, mismatched tags, unbound prefixes, duplicate
// attributes, bad names, characters and UTF-8, "<" in values, "]]>", "--"),
// gosax accepted 23 and xmltokenizer 28. Adding every check on top would
// have left little of their speed, so the tokenizer is written here.
//
// # Caveats
//
// The encoding declaration is not acted on: input must be UTF-8 (or
// ASCII). Attribute values are not whitespace-normalized, as encoding/xml
// did not either. The tree of an input up to 16 KiB is cut from a few
// blocks (its strings from one copy of the input): an element kept from it
// keeps the whole tree's memory alive (at most a few hundred KiB), as a
// part kept for an instance's life does. It imports only etree and must
// not import orchd packages.
package xmlparse
