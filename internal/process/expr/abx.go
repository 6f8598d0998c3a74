package expr

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xpath1"
	"github.com/orchd/orchd/internal/xpath2"
)

// ActiveBPEL's extension functions (namespace
// xmldoc.NSActiveBPELFunctions, abx: in its and bpel-g's processes), in
// XPath 1.0 and XPath 2.0 alike, as ActiveBPEL's
// AeExtensionFunctionContext defined them:
//
//   - abx:getProcessId(): the instance's id, as a string ($ode:pid's
//     value; ActiveBPEL's "process id" is the instance's).
//   - abx:getProcessName(): the local name of the process.
//   - abx:base64Encode(s[, charset]): the base64 (RFC 4648, padded) of
//     s's bytes in charset: UTF-8 (the default), US-ASCII or ISO-8859-1;
//     a character the charset cannot hold, or another charset, is a
//     dynamic error (subLanguageExecutionFault).
//
// The others (getProcessInitiator, getMyRoleProperty, resolveURN,
// getPlanExtensions and the attachment functions) need what orchd does
// not have (an authenticated initiator, deployment role properties, URN
// mappings, plan extensions, SOAP attachments): CheckActiveBPEL refuses
// them at deploy, naming the function.

// Instance is what ActiveBPEL's functions read of the instance a tree
// belongs to (DocTree.Inst).
type Instance interface {
	// PID is the instance's id ($ode:pid).
	PID() string
	// ProcessName is the local name of the instance's process.
	ProcessName() string
}

// abxFunc is one of ActiveBPEL's functions orchd implements: its arities
// and its value over the instance inst and the arguments' string values.
type abxFunc struct {
	min, max int
	call     func(inst Instance, args []string) (string, error)
}

// abxFunctions are the ActiveBPEL functions orchd implements, by local
// name.
var abxFunctions = map[string]abxFunc{
	"getProcessId":   {0, 0, func(in Instance, _ []string) (string, error) { return in.PID(), nil }},
	"getProcessName": {0, 0, func(in Instance, _ []string) (string, error) { return in.ProcessName(), nil }},
	"base64Encode":   {1, 2, func(_ Instance, a []string) (string, error) { return abxBase64(a) }},
}

// abxRefused are ActiveBPEL's other functions, with what orchd lacks to
// offer them.
var abxRefused = map[string]string{
	"getProcessInitiator":   "orchd keeps no authenticated initiator per instance",
	"getMyRoleProperty":     "orchd has no deployment properties of a partner link's myRole",
	"resolveURN":            "orchd has no URN mappings",
	"getPlanExtensions":     "orchd has no ActiveBPEL plan extensions",
	"getAttachmentCount":    "orchd does not support SOAP attachments",
	"getAttachmentType":     "orchd does not support SOAP attachments",
	"getAttachmentProperty": "orchd does not support SOAP attachments",
	"getAttachmentSize":     "orchd does not support SOAP attachments",
	"copyAttachment":        "orchd does not support SOAP attachments",
	"copyAllAttachments":    "orchd does not support SOAP attachments",
	"createAttachment":      "orchd does not support SOAP attachments",
	"removeAttachment":      "orchd does not support SOAP attachments",
	"removeAllAttachments":  "orchd does not support SOAP attachments",
	"replaceAttachment":     "orchd does not support SOAP attachments",
}

// abxBase64 is base64Encode(s[, charset]).
func abxBase64(args []string) (string, error) {
	s, cs := args[0], "UTF-8"
	if len(args) == 2 {
		cs = args[1]
	}
	var b []byte
	switch strings.ToUpper(strings.ReplaceAll(cs, "_", "-")) {
	case "UTF-8", "UTF8":
		b = []byte(s)
	case "US-ASCII", "ASCII", "ISO-8859-1", "ISO8859-1", "LATIN1":
		limit := rune(0xFF)
		if strings.Contains(strings.ToUpper(cs), "ASCII") {
			limit = 0x7F
		}
		for _, r := range s {
			if r > limit {
				return "", fmt.Errorf("abx:base64Encode: character %q is not in charset %s", r, cs)
			}
			b = append(b, byte(r))
		}
	default:
		return "", fmt.Errorf("abx:base64Encode: unsupported charset %q (orchd encodes UTF-8, US-ASCII and ISO-8859-1)", cs)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// abxCheck refuses a call to an ActiveBPEL function orchd does not
// implement, or with the wrong number of arguments (arity -1: not
// known).
func abxCheck(name, local string, arity int) error {
	f, ok := abxFunctions[local]
	switch {
	case !ok && abxRefused[local] != "":
		return fmt.Errorf("%w: ActiveBPEL function %s(): %s", xmldoc.ErrNotSupported, name, abxRefused[local])
	case !ok:
		return fmt.Errorf("unknown ActiveBPEL function %s() (orchd offers abx:getProcessId, abx:getProcessName and abx:base64Encode)", name)
	case arity >= 0 && (arity < f.min || arity > f.max):
		return fmt.Errorf("ActiveBPEL function %s() takes %d to %d arguments, not %d", name, f.min, f.max, arity)
	}
	return nil
}

// CheckActiveBPEL refuses, in an XPath 1.0 or 2.0 expression src, a call
// to an ActiveBPEL function orchd does not implement, naming it; ns
// resolves prefixes.
func CheckActiveBPEL(src string, ns map[string]string) error {
	return eachCall(src, func(prefix, local string) error {
		if prefix == "" || ns[prefix] != xmldoc.NSActiveBPELFunctions {
			return nil
		}
		return abxCheck(prefix+":"+local, local, -1)
	})
}

// abxXPath1 binds ActiveBPEL's functions for XPath 1.0; nil, nil for a
// name that is not one of them.
func abxXPath1(local string, arity int) (*xpath1.Func, error) {
	if err := abxCheck("abx:"+local, local, arity); err != nil {
		return nil, err
	}
	f := abxFunctions[local]
	return &xpath1.Func{Result: xpath1.StringType, Call: func(c *xpath1.Context, args []xpath1.Value) (xpath1.Value, error) {
		t, _ := c.Tree.(*DocTree)
		if t == nil || t.Inst == nil {
			return nil, fmt.Errorf("abx:%s(): no instance here", local)
		}
		s := make([]string, len(args))
		for i, a := range args {
			s[i] = xpath1.String(a)
		}
		return f.call(t.Inst, s)
	}}, nil
}

// RegisterActiveBPEL adds ActiveBPEL's functions to an XPath 2.0
// library.
func RegisterActiveBPEL(l *xpath2.FunctionLibrary) {
	for local, f := range abxFunctions {
		l.Register(xmldoc.NSActiveBPELFunctions, local, f.min, f.max, func(c xpath2.Context, args []xpath2.Sequence) (xpath2.Sequence, error) {
			var inst Instance
			if n, ok := c.Dynamic().Item.(XNode); ok && n.T != nil {
				inst = n.T.Inst
			}
			if inst == nil {
				return nil, &xpath2.Error{Code: "FOER0000", Msg: "abx:" + local + "(): no instance here"}
			}
			s := make([]string, len(args))
			for i, a := range args {
				s[i] = seqString(a)
			}
			v, err := f.call(inst, s)
			if err != nil {
				return nil, &xpath2.Error{Code: "FOER0000", Msg: err.Error()}
			}
			return xpath2.Sequence{xpath2.Str(v)}, nil
		})
	}
}
